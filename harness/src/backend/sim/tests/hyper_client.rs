//! HTTP over the network: the connector connecting to the URI's host only, `hyper_util`'s
//! client reusing a pooled connection to a hyper server, and a benchmark of a new connection
//! per attempt (ignored unless asked for).

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::time::{Instant, sleep};

use super::{C2S, Data, Fin, Fixture, L, S2C, kind, seg};
use crate::backend::sim::{ConnId, ConnectAction, Host, NetEvent, Network, SimStream, SynOutcome};

#[tokio::test(start_paused = true)]
async fn connector_uses_the_uri_host_only() {
    use tower_service::Service;
    let mut f = Fixture::new(ConnectAction::Accept);
    let mut connector = f.net.connector();
    let s = connector
        .call("https://api:8443/x".parse().unwrap())
        .await
        .unwrap();
    assert_eq!((s.conn_id(), f.net.now_ms()), (ConnId(1), 500));
    assert_eq!(f.accepted.recv().await.unwrap().1.conn_id(), ConnId(1));
    let err = connector.call("/relative".parse().unwrap()).await;
    assert_eq!(kind(err), io::ErrorKind::InvalidInput);
    let err = connector.call("http://other/".parse().unwrap()).await;
    assert_eq!(kind(err), io::ErrorKind::NotFound);
}

/// Serves every request with 200 "ok" through hyper's http1 server.
struct HyperHost;

impl Host for HyperHost {
    fn on_syn(&self, _conn: ConnId) -> ConnectAction {
        ConnectAction::Accept
    }
    fn accept(&self, _conn: ConnId, stream: SimStream) {
        let svc = hyper::service::service_fn(|_req| async {
            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"ok"))))
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .auto_date_header(false)
                .header_read_timeout(None)
                .serve_connection(stream, svc)
                .await;
        });
    }
}

#[tokio::test(start_paused = true)]
async fn hyper_util_client_reuses_a_pooled_connection() {
    let net = Network::new(Instant::now(), L);
    net.add_host("api", Arc::new(HyperHost));
    let client = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .build::<_, Empty<Bytes>>(net.connector());

    let res = client.get("http://api/a".parse().unwrap()).await.unwrap();
    assert_eq!(net.now_ms(), 1000); // connect (2L), request (L), response (L)
    assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
    assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "ok");

    let res = client.get("http://api/b".parse().unwrap()).await.unwrap();
    assert_eq!(net.now_ms(), 1500); // reused: request and response only
    assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
    assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "ok");
    drop(client);
    sleep(Duration::from_secs(1)).await;

    let host = net.host_id("api").unwrap();
    assert_eq!(
        net.log().events(),
        &[
            NetEvent::ConnectStart {
                at: 0,
                conn: ConnId(1),
                host
            },
            NetEvent::SynArrived {
                at: 250,
                conn: ConnId(1),
                outcome: SynOutcome::Accept
            },
            NetEvent::Connected {
                at: 500,
                conn: ConnId(1)
            },
            // "GET /a HTTP/1.1\r\nhost: api\r\n\r\n" and "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
            seg(1, C2S, 0, (500, 750), (0, 30), Data),
            seg(1, S2C, 0, (750, 1000), (0, 40), Data),
            seg(1, C2S, 1, (1000, 1250), (30, 30), Data),
            seg(1, S2C, 1, (1250, 1500), (40, 40), Data),
            // Dropping the client closes the pooled connection; hyper's server answers FIN.
            seg(1, C2S, 2, (1500, 1750), (60, 0), Fin),
            seg(1, S2C, 2, (1750, 2000), (80, 0), Fin),
        ]
    );
    assert_eq!(net.lock().free.len(), 1, "both ends released");
}

#[test]
#[ignore = "benchmark: cargo test -p retrylab --release -- --ignored bench_sim"]
fn bench_sim_new_connection_per_attempt() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    for latency in [Duration::ZERO, Duration::from_millis(1)] {
        let wall = std::time::Instant::now();
        let n = 20_000;
        rt.block_on(async {
            let net = Network::new(Instant::now(), latency);
            net.add_host("api", Arc::new(HyperHost));
            let client = Client::builder(TokioExecutor::new())
                .pool_timer(TokioTimer::new())
                .pool_max_idle_per_host(0)
                .build::<_, Empty<Bytes>>(net.connector());
            for _ in 0..n {
                let res = client.get("http://api/a".parse().unwrap()).await.unwrap();
                res.into_body().collect().await.unwrap();
            }
            println!("log events: {}", net.log_len());
        });
        let per = wall.elapsed() / n;
        println!("latency {latency:?}: {per:?} per attempt");
    }
}
