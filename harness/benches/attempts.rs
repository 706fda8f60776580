//! Attempts per second through the public API, against the floor of hyper-util over a bare
//! in-memory stream measured in the same process.
//!
//! `cargo bench -p retrylab --bench attempts` prints one line per case, with the ratio of the
//! harness's time to its floor's. The wall clock is read here, in the benchmark, never on the
//! simulated path.
//!
//! The floor is the same work without the harness: hyper-util's client with its pool on, as
//! `env.http_client()` has it, and hyper's server over `tokio::io::duplex`. With keep-alive one
//! connection carries every request. With a new connection per attempt the floor's server
//! answers each request with `connection: close`, as an endpoint with
//! `keep_alive: { max_requests: 1 }` does, so the client drops the connection after each
//! response and connects again for the next request: that is the like-for-like floor the
//! ratio is taken against. The floor used before it turned the client's pool off instead
//! (`pool_max_idle_per_host(0)`) and let the server keep the connection open; it does less
//! than the harness's client (no `connection: close` to read, no pooled connection to drop),
//! so it is cheaper. The bench times it too and prints it beside the other, so nothing is
//! hidden.
//!
//! For profiling: `ATTEMPTS_ONLY=new` (or `keep`) runs one case, `ATTEMPTS_NOFLOOR=1` skips the
//! floors and `ATTEMPTS_NOHARNESS=1` the harness (to time each alone with `perf stat`, whose
//! CPU time a loaded machine changes less than it does wall time), and with a new connection
//! `ATTEMPTS_FLOOR=closing` (or `pool-off`) runs only that floor. The run's wall limit is
//! the most the format allows (1h), so that a run under `valgrind --tool=callgrind` makes all
//! its attempts. Run alone, the keep-alive case starts on a cold heap and reads slower than
//! in the full run, where it reuses the memory the first case freed. `ATTEMPTS_COUNT=20000`
//! shortens each case for a profiler.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use retrylab::scenario::Scenario;

/// Attempts per case: 100,000, or `ATTEMPTS_COUNT` (1 to 120,000: the scenario's 30 virtual
/// days hold 129,600 attempts 20 s apart) for a shorter run under a profiler, where the
/// figures per attempt hardly change.
fn attempts() -> u64 {
    match std::env::var("ATTEMPTS_COUNT") {
        Err(_) => 100_000,
        Ok(text) => match text.parse() {
            Ok(n @ 1..=120_000) => n,
            _ => panic!("ATTEMPTS_COUNT={text}: expected a whole number from 1 to 120000"),
        },
    }
}

fn scenario(keep_alive: bool) -> Scenario {
    let keep_alive = if keep_alive {
        ""
    } else {
        "    keep_alive: { max_requests: 1 }\n"
    };
    let yaml = format!(
        "version: 1\nname: bench\nendpoints:\n  api:\n{keep_alive}    script: [ {{ status: 503 }} ]\n\
         network: {{ latency: 1ms }}\noperation: {{ endpoint: api, method: POST, path: /orders }}\n\
         limits: {{ max_virtual_time: 30d, max_client_attempts: 200000, wall: 1h }}\n"
    );
    match Scenario::from_yaml_str(&yaml, "bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn harness(keep_alive: bool) -> (Duration, usize, u64) {
    let scenario = scenario(keep_alive);
    let started = Instant::now();
    let report = scenario.run(|env| async move {
        let client = env.http_client();
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
    // A run that stopped early would compare fewer attempts with the floor's.
    let made = report.trace().attempts.len();
    assert_eq!(
        made as u64,
        attempts(),
        "the harness made {made} attempts: {}",
        report.summary()
    );
    (
        elapsed,
        report.trace().attempts.len(),
        report.trace().end_ms,
    )
}

/// hyper-util's client and hyper's server over `tokio::io::duplex`, nothing of ours. The
/// server answers with `connection: close` when `closing` is set.
#[derive(Clone)]
struct DuplexConnector {
    closing: bool,
}

struct Stream(TokioIo<tokio::io::DuplexStream>);

impl Connection for Stream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl hyper::rt::Read for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Stream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl tower_service::Service<http::Uri> for DuplexConnector {
    type Response = Stream;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Stream>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let closing = self.closing;
        Box::pin(async move {
            let (client, server) = tokio::io::duplex(64 * 1024);
            tokio::spawn(async move {
                let service = service_fn(move |_req| async move {
                    let mut response = http::Response::builder().status(503);
                    if closing {
                        // What an endpoint with `keep_alive: { max_requests: 1 }` sends: hyper
                        // closes the connection after the response.
                        response = response.header(http::header::CONNECTION, "close");
                    }
                    Ok::<_, std::convert::Infallible>(
                        response.body(Full::new(Bytes::new())).unwrap_or_default(),
                    )
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(server), service)
                    .await;
            });
            Ok(Stream(TokioIo::new(client)))
        })
    }
}

/// The floors the bench measures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Floor {
    /// Pool on, one connection for every request.
    KeepAlive,
    /// Pool on, the server closing each connection after its response: like for like with
    /// an endpoint of `keep_alive: { max_requests: 1 }`.
    Closing,
    /// The floor used before `Closing`: pool off, the server keeping the connection open.
    PoolOff,
}

fn floor(kind: Floor) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    runtime.block_on(async {
        let connector = DuplexConnector {
            closing: kind == Floor::Closing,
        };
        let client: Client<DuplexConnector, Full<Bytes>> = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_max_idle_per_host(if kind == Floor::PoolOff {
                0
            } else {
                usize::MAX
            })
            .build(connector);
        for _ in 0..attempts() {
            let request = http::Request::post("http://api/orders")
                .body(Full::new(Bytes::new()))
                .unwrap_or_default();
            if let Ok(response) = client.request(request).await {
                let _ = response.into_body().collect().await;
            }
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
    });
    started.elapsed()
}

fn per_attempt(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6 / attempts() as f64
}

/// Times `kind` unless the environment skips it.
fn timed_floor(kind: Floor) -> Option<Duration> {
    if std::env::var("ATTEMPTS_NOFLOOR").is_ok() {
        return None;
    }
    let wanted = match kind {
        Floor::KeepAlive => return Some(floor(kind)),
        Floor::Closing => "closing",
        Floor::PoolOff => "pool-off",
    };
    match std::env::var("ATTEMPTS_FLOOR") {
        Ok(only) if only != wanted => None,
        _ => Some(floor(kind)),
    }
}

/// A floor's figures, or why there are none.
fn floor_text(name: &str, floor: Option<Duration>, wall: Duration) -> String {
    match floor {
        // No ratio without the harness's own time (`ATTEMPTS_NOHARNESS`).
        Some(floor) if wall.is_zero() => format!(
            "{name} {:.3}s ({:.1} us/attempt)",
            floor.as_secs_f64(),
            per_attempt(floor)
        ),
        Some(floor) => format!(
            "{name} {:.3}s ({:.1} us/attempt, ratio {:.2})",
            floor.as_secs_f64(),
            per_attempt(floor),
            wall.as_secs_f64() / floor.as_secs_f64()
        ),
        None => format!("{name} not run"),
    }
}

fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let only = std::env::var("ATTEMPTS_ONLY").unwrap_or_default();
    for keep_alive in [false, true] {
        if (only == "new" && keep_alive) || (only == "keep" && !keep_alive) {
            continue;
        }
        let floors = if keep_alive {
            vec![(
                "floor hyper-util over duplex",
                timed_floor(Floor::KeepAlive),
            )]
        } else {
            vec![
                (
                    "floor hyper-util over duplex, server closing",
                    timed_floor(Floor::Closing),
                ),
                ("older floor with the pool off", timed_floor(Floor::PoolOff)),
            ]
        };
        let (wall, attempts, end_ms) = if std::env::var("ATTEMPTS_NOHARNESS").is_ok() {
            (Duration::ZERO, 0, 0)
        } else {
            harness(keep_alive)
        };
        let label = if keep_alive {
            "keep-alive"
        } else {
            "new connection per attempt"
        };
        let floors: Vec<String> = floors
            .into_iter()
            .map(|(name, floor)| floor_text(name, floor, wall))
            .collect();
        println!(
            "{label}: retrylab {attempts} attempts in {:.3}s wall ({:.1} us/attempt, {:.1} virtual days); {}",
            wall.as_secs_f64(),
            per_attempt(wall),
            end_ms as f64 / 86_400_000.0,
            floors.join("; "),
        );
    }
}
