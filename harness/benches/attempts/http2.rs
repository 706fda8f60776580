//! The attempts bench over HTTP/2: `env.http2_client()` against an endpoint with `protocol:
//! http2`, against the floor of hyper-util's client built `http2_only` and hyper's HTTP/2
//! server over `tokio::io::duplex`, nothing of ours. Both without latency, so the ratio is
//! like with like: every attempt takes the same virtual time, 20 s apart.
//!
//! With keep-alive every attempt is a stream of one connection. With a new connection per
//! attempt the endpoint has `keep_alive: { max_requests: 1 }` (its one stream gets a GOAWAY
//! and the endpoint closes the connection once it is answered), and the floor's server shuts
//! its connection down gracefully (a GOAWAY) once it has answered, so hyper-util's pool
//! connects again for the next request in both.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use retrylab::scenario::Scenario;
use tokio::sync::Notify;

use super::{Stream, attempts, per_attempt, same_virtual_time};

fn scenario(keep_alive: bool) -> Scenario {
    let keep_alive = if keep_alive {
        ""
    } else {
        "    keep_alive: { max_requests: 1 }\n"
    };
    let yaml = format!(
        "version: 1\nname: bench h2\nendpoints:\n  api:\n    protocol: http2\n{keep_alive}    script: [ {{ status: 503 }} ]\n\
         operation: {{ endpoint: api, method: POST, path: /orders }}\n\
         limits: {{ max_virtual_time: 30d, max_client_attempts: 200000, wall: 1h }}\n"
    );
    match Scenario::from_yaml_str(&yaml, "bench-h2.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The wall time of the harness's attempts over HTTP/2, and the virtual instant its run
/// ended at.
fn harness(keep_alive: bool) -> (Duration, u64) {
    let scenario = scenario(keep_alive);
    let started = Instant::now();
    let report = scenario.run(|env| async move {
        let client = env.http2_client();
        for _ in 0..attempts() {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        Ok::<_, String>(())
    });
    let elapsed = started.elapsed();
    let trace = report.trace();
    let made = trace.attempts.len();
    assert_eq!(
        made as u64,
        attempts(),
        "the harness made {made} attempts: {}",
        report.summary()
    );
    // Like with like: one connection, or a connection per attempt, as the floor's.
    let last = trace.attempts.last().and_then(|a| a.conn_id);
    let expected = if keep_alive { 1 } else { attempts() };
    assert_eq!(last, Some(expected), "{}", report.summary());
    (elapsed, trace.end_ms)
}

/// hyper-util's client and hyper's HTTP/2 server over `tokio::io::duplex`. The server shuts
/// each connection down after its first response when `closing` is set.
#[derive(Clone)]
struct DuplexConnector {
    closing: bool,
}

/// Serves one floor connection over HTTP/2: a 503 to every request, and a graceful shutdown
/// after the first when `closing` is set.
async fn serve(io: tokio::io::DuplexStream, closing: bool) {
    let answered = Arc::new(Notify::new());
    let service = service_fn({
        let answered = Arc::clone(&answered);
        move |_req| {
            answered.notify_one();
            async move {
                let response = http::Response::builder().status(503);
                Ok::<_, std::convert::Infallible>(
                    response.body(Full::new(Bytes::new())).unwrap_or_default(),
                )
            }
        }
    });
    let builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    let mut connection = pin!(builder.serve_connection(TokioIo::new(io), service));
    if !closing {
        let _ = connection.await;
        return;
    }
    tokio::select! {
        biased;
        _ = connection.as_mut() => return,
        () = answered.notified() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

impl tower_service::Service<http::Uri> for DuplexConnector {
    type Response = Stream<tokio::io::DuplexStream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let closing = self.closing;
        Box::pin(async move {
            let (client, server) = tokio::io::duplex(64 * 1024);
            tokio::spawn(serve(server, closing));
            Ok(Stream(TokioIo::new(client)))
        })
    }
}

/// The wall time of the floor's attempts, and the virtual time they took.
fn floor(closing: bool) -> (Duration, Duration) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let virtual_time = runtime.block_on(async {
        let start = tokio::time::Instant::now();
        // `env.http2_client()`'s settings.
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .retry_canceled_requests(true)
            .http2_only(true)
            .timer(TokioTimer::new())
            .build(DuplexConnector { closing });
        let mut answered = 0;
        for _ in 0..attempts() {
            let request = http::Request::post("http://api/orders")
                .body(Full::new(Bytes::new()))
                .unwrap_or_default();
            if let Ok(response) = client.request(request).await {
                answered += u64::from(response.status() == 503);
                let _ = response.into_body().collect().await;
            }
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        // A floor whose requests failed would be cheap for the wrong reason.
        assert_eq!(
            answered,
            attempts(),
            "the floor's server answered {answered} requests with 503"
        );
        start.elapsed()
    });
    (started.elapsed(), virtual_time)
}

/// Whether `ATTEMPTS_PROTOCOL` (`http1`, `http2`, both by default) asks for `protocol`.
pub(crate) fn asked(protocol: &str) -> bool {
    match std::env::var("ATTEMPTS_PROTOCOL") {
        Err(_) => true,
        Ok(value) if value == "http1" || value == "http2" => value == protocol,
        Ok(value) => {
            eprintln!("ATTEMPTS_PROTOCOL={value}: expected one of http1, http2");
            std::process::exit(2)
        }
    }
}

/// Prints the HTTP/2 lines: each mode's harness and floor, and their ratio. `ATTEMPTS_ONLY`
/// picks a mode as it does for HTTP/1.
pub(crate) fn run(mode: impl Fn(bool) -> bool) {
    for keep_alive in [false, true] {
        if !mode(keep_alive) {
            continue;
        }
        let label = if keep_alive {
            "HTTP/2 keep-alive (a stream per attempt)"
        } else {
            "HTTP/2 new connection per attempt"
        };
        let (floor_wall, floor_virtual) = floor(!keep_alive);
        let (wall, end_ms) = harness(keep_alive);
        same_virtual_time(label, end_ms, Some((floor_wall, floor_virtual)));
        println!(
            "{label}, no latency: retrylab {} attempts in {:.3}s wall ({:.1} us/attempt); \
             floor hyper-util http2_only to hyper's HTTP/2 server over duplex{} {:.3}s \
             ({:.1} us/attempt, ratio {:.2})",
            attempts(),
            wall.as_secs_f64(),
            per_attempt(wall),
            if keep_alive { "" } else { ", server closing" },
            floor_wall.as_secs_f64(),
            per_attempt(floor_wall),
            wall.as_secs_f64() / floor_wall.as_secs_f64(),
        );
    }
}
