//! The examples formerly on `network` and `connector`, kept as tests since the sim network is
//! internal: an echo host round trip in virtual time, and `hyper_util`'s client over the sim
//! connector.

/// Formerly the example on `network`: the sim network is internal, so its
/// example lives here.
#[test]
fn echo_host_example_round_trips_in_virtual_time() -> Result<(), std::io::Error> {
    use crate::backend::sim::{ConnId, ConnectAction, Host, Network, SimStream};
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Echoes what it reads.
    struct Echo;
    impl Host for Echo {
        fn on_syn(&self, _conn: ConnId) -> ConnectAction {
            ConnectAction::Accept
        }
        fn accept(&self, _conn: ConnId, mut stream: SimStream) {
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 || stream.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    rt.block_on(async {
        let net = Network::new(tokio::time::Instant::now(), Duration::from_millis(10));
        net.add_host("echo", Arc::new(Echo));
        let mut stream = net.connect("echo").await?;
        assert_eq!(net.now_ms(), 20); // one round trip
        stream.write_all(b"hi").await?;
        let mut buf = [0u8; 2];
        stream.read_exact(&mut buf).await?;
        assert_eq!((&buf, net.now_ms()), (b"hi", 40));
        assert_eq!(stream.conn_id(), ConnId(1));
        Ok::<_, std::io::Error>(())
    })?;
    Ok::<(), std::io::Error>(())
}

/// Formerly the example on `connector`: the sim network is internal, so its
/// example lives here.
#[test]
fn hyper_util_client_over_the_sim_connector_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::backend::sim::{ConnId, ConnectAction, Host, Network, SimStream};
    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::time::Duration;

    /// Answers every request with 200 "ok".
    struct Api;
    impl Host for Api {
        fn on_syn(&self, _conn: ConnId) -> ConnectAction {
            ConnectAction::Accept
        }
        fn accept(&self, _conn: ConnId, stream: SimStream) {
            let svc = hyper::service::service_fn(|_req| async {
                Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from("ok"))))
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .auto_date_header(false)
                    .serve_connection(stream, svc),
            );
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    rt.block_on(async {
        let net = Network::new(tokio::time::Instant::now(), Duration::from_millis(5));
        net.add_host("api", Arc::new(Api));
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build::<_, Empty<Bytes>>(net.connector());
        let res = client.get("http://api/".parse()?).await?;
        assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
        assert_eq!(res.into_body().collect().await?.to_bytes(), "ok");
        assert_eq!(net.now_ms(), 20); // connect, request and response: 4 one-way trips
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok::<(), Box<dyn std::error::Error>>(())
}
