//! A gate in front of an endpoint's scripts: the harness's way to stop a run at a limit that
//! every client must meet, whatever HTTP stack it brings.

use http::request;

use crate::http::detach::RequestHead;

/// Decides, for each request an endpoint has read completely, whether it reaches the
/// endpoint's routes and scripts.
///
/// retrylab enforces `limits.max_client_attempts` with one: a client that builds its own HTTP
/// client on the harness's connector reaches the endpoints without passing through anything
/// else that could count its attempts. A refused request is not recorded in the ledger,
/// consumes no script step, commits nothing and is never answered: it waits until its
/// connection closes (the run it belongs to ends at once).
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
///
/// use bytes::Bytes;
/// use http_body_util::Empty;
/// use hyper_util::rt::TokioIo;
/// use retrylab_endpoints::{ConnInfo, Endpoint, EndpointConfig, Gate, Step, VirtualClock};
///
/// /// Lets two requests through, then refuses every one.
/// struct Two(AtomicU32);
///
/// impl Gate for Two {
///     fn admit(&self, _parts: &http::request::Parts) -> bool {
///         self.0.fetch_add(1, Ordering::Relaxed) < 2
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let endpoint = Endpoint::with_gate(
///     EndpointConfig::http("api").script([Step::status(503)]),
///     VirtualClock::new(),
///     Arc::new(Two(AtomicU32::new(0))),
/// );
/// let (client_io, server_io) = tokio::io::duplex(64 * 1024);
/// let server = endpoint.clone();
/// tokio::spawn(async move { server.serve(server_io, ConnInfo::without_reset(1)).await });
/// let (mut client, conn) = hyper::client::conn::http1::handshake(TokioIo::new(client_io)).await.unwrap();
/// tokio::spawn(conn);
/// for _ in 0..2 {
///     let request = http::Request::get("/").body(Empty::<Bytes>::new()).unwrap();
///     assert_eq!(client.send_request(request).await.unwrap().status(), 503);
/// }
/// // The third is refused: never answered, and not in the ledger.
/// let request = http::Request::get("/").body(Empty::<Bytes>::new()).unwrap();
/// let third = tokio::time::timeout(std::time::Duration::from_secs(60), client.send_request(request));
/// assert!(third.await.is_err());
/// assert_eq!(endpoint.ledger().requests_received(), 2);
/// # }
/// ```
pub trait Gate: Send + Sync {
    /// Whether the request with these parts (its body read completely) may proceed to the
    /// endpoint's routes. Called once per request, in arrival order.
    fn admit(&self, parts: &request::Parts) -> bool;

    /// [`admit`](Self::admit), asked with the copy of the request's head the endpoint keeps;
    /// the endpoint calls this one. By default it builds `request::Parts` from `head` (a
    /// `HeaderMap` and a copy of each value) and asks `admit`; a gate that can judge from the
    /// head itself implements it to spare those allocations on every request. Both must
    /// answer alike.
    fn admit_head(&self, head: &RequestHead) -> bool {
        self.admit(&head.to_parts())
    }
}
