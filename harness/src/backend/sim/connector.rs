//! The hyper-util connector over the simulated network.

use std::io;
use std::task::{Context, Poll};

use http::Uri;

use super::{Connect, Network, SimStream};

/// A `tower_service::Service<Uri>` that connects to the [`Network`] host named by the URI's
/// host. The port is ignored and `https` is served as plain TCP (version 1 has no TLS).
///
/// # Example
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::Arc;
/// use std::time::Duration;
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, Empty, Full};
/// use hyper_util::client::legacy::Client;
/// use hyper_util::rt::{TokioExecutor, TokioTimer};
/// use retrylab::backend::sim::{ConnId, ConnectDecision, Host, Network, SimStream};
///
/// /// Answers every request with 200 "ok".
/// struct Api;
/// impl Host for Api {
///     fn on_syn(&self, _conn: ConnId) -> ConnectDecision {
///         ConnectDecision::Accept
///     }
///     fn accept(&self, _conn: ConnId, stream: SimStream) {
///         let svc = hyper::service::service_fn(|_req| async {
///             Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from("ok"))))
///         });
///         tokio::spawn(
///             hyper::server::conn::http1::Builder::new()
///                 .auto_date_header(false)
///                 .serve_connection(stream, svc),
///         );
///     }
/// }
///
/// let rt = tokio::runtime::Builder::new_current_thread()
///     .enable_time()
///     .start_paused(true)
///     .build()?;
/// rt.block_on(async {
///     let net = Network::new(tokio::time::Instant::now(), Duration::from_millis(5));
///     net.add_host("api", Arc::new(Api));
///     let client = Client::builder(TokioExecutor::new())
///         .pool_timer(TokioTimer::new())
///         .build::<_, Empty<Bytes>>(net.connector());
///     let res = client.get("http://api/".parse()?).await?;
///     assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
///     assert_eq!(res.into_body().collect().await?.to_bytes(), "ok");
///     assert_eq!(net.now_ms(), 20); // connect, request and response: 4 one-way trips
///     Ok::<_, Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct SimConnector {
    net: Network,
}

impl SimConnector {
    /// A connector over `net` (also [`Network::connector`]).
    pub fn new(net: Network) -> SimConnector {
        SimConnector { net }
    }
}

impl tower_service::Service<Uri> for SimConnector {
    type Response = SimStream;
    type Error = io::Error;
    type Future = Connect;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        match uri.host() {
            Some(host) => self.net.connect(host),
            None => Connect::failed(
                self.net.clone(),
                io::Error::new(io::ErrorKind::InvalidInput, "uri has no host"),
            ),
        }
    }
}
