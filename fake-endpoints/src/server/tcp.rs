//! Serving an endpoint on real TCP: a `tokio::net::TcpListener`, in real time.
//!
//! The same scripted endpoint as on any other stream, with the transport faults made real:
//! `fail: reset` aborts the connection with a TCP RST (`SO_LINGER` set to zero before the
//! socket closes), `fail: close` closes it with a FIN, `after_bytes` cuts the response at
//! that byte, `hang` holds the connection open, and latencies are real sleeps. A listener
//! cannot refuse or black-hole a connect once the kernel accepted it, so an endpoint served
//! here accepts every connection (its connect schedule is still consumed and recorded).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use super::conn::{ConnInfo, ConnectionControl};
use crate::endpoint::Endpoint;

/// How long the accept loop waits after an error such as "too many open files" before it
/// tries again: long enough not to spin on a CPU, short enough that a client retrying sees
/// the listener come back.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// Connection ids handed out by one or more listeners, from 1 in accept order. Endpoints
/// served together share one, so that a connection id names one connection across all of
/// them, as on the sim network.
///
/// ```
/// use retrylab_endpoints::ConnIds;
///
/// let ids = ConnIds::new();
/// assert_eq!(ids.next(), 1);
/// assert_eq!(ids.clone().next(), 2);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ConnIds(Arc<AtomicU64>);

impl ConnIds {
    /// Ids starting at 1.
    pub fn new() -> ConnIds {
        ConnIds::default()
    }

    /// The next id.
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl Endpoint {
    /// Serves the endpoint on `listener` until the future is dropped: each accepted
    /// connection is served by a task of its own (which must run on a tokio runtime with IO
    /// and time enabled), with Nagle's algorithm off so that each write leaves at once.
    ///
    /// ```
    /// use retrylab_endpoints::{ConnIds, Endpoint, EndpointConfig, Step, VirtualClock};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let endpoint = Endpoint::new(
    ///     EndpointConfig::http("api").script([Step::status(503).retry_after(1)]),
    ///     VirtualClock::new(),
    /// );
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let address = listener.local_addr()?;
    /// tokio::spawn({
    ///     let endpoint = endpoint.clone();
    ///     async move { endpoint.serve_tcp(listener, ConnIds::new()).await }
    /// });
    ///
    /// let mut client = tokio::net::TcpStream::connect(address).await?;
    /// client.write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n").await?;
    /// let mut answer = String::new();
    /// client.read_to_string(&mut answer).await?;
    /// assert!(answer.starts_with("HTTP/1.1 503"));
    /// assert!(answer.contains("retry-after: 1"));
    /// assert_eq!(endpoint.ledger().snapshot().requests.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_tcp(&self, listener: TcpListener, ids: ConnIds) {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _peer)) => stream,
                Err(error) if is_per_connection(&error) => continue,
                Err(_) => {
                    // Out of file descriptors or memory: the listener itself is fine, and a
                    // connection that closes frees what the next accept needs.
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            // Without it, a response written in two pieces waits for the client's ACK of the
            // first, and the delay would be the kernel's, not the script's.
            let _ = stream.set_nodelay(true);
            let conn_id = ids.next();
            // Consumed and recorded as on any transport; a listener has accepted already.
            let _ = self.on_connect(conn_id);
            let reset = Arc::new(ResetOnDrop::default());
            let io = TcpIo {
                stream,
                reset: Arc::clone(&reset),
            };
            let info = ConnInfo::new(conn_id, reset);
            let endpoint = self.clone();
            // Boxed: the serving future, hyper's connection state included, is large.
            tokio::spawn(Box::pin(async move { endpoint.serve(io, info).await }));
        }
    }
}

/// Errors of one accepted connection (the peer gave up before it was accepted), after
/// which the listener goes on at once.
fn is_per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// The endpoint's request for a reset, carried out when the socket is dropped: the endpoint
/// drops its end right after asking (`ConnectionControl::reset`), and with `SO_LINGER` zero
/// the kernel sends RST instead of FIN when the socket closes.
#[derive(Default)]
struct ResetOnDrop(AtomicBool);

impl ConnectionControl for ResetOnDrop {
    fn reset(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// A TCP stream that closes with RST when its endpoint asked for a reset.
struct TcpIo {
    stream: TcpStream,
    reset: Arc<ResetOnDrop>,
}

impl Drop for TcpIo {
    fn drop(&mut self) {
        if self.reset.0.load(Ordering::Acquire) {
            // If it fails, the socket closes with FIN: the client still sees the
            // connection end, and the ledger still says the endpoint reset it.
            let _ = socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
        }
    }
}

impl AsyncRead for TcpIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for TcpIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.reset.0.load(Ordering::Acquire) {
            // A shutdown would send FIN before the reset: leave closing to the drop.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::{EndpointConfig, Fail, Step, VirtualClock};

    async fn serve(config: EndpointConfig) -> (Endpoint, std::net::SocketAddr) {
        let endpoint = Endpoint::new(config, VirtualClock::new());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let serving = endpoint.clone();
        tokio::spawn(async move { serving.serve_tcp(listener, ConnIds::new()).await });
        (endpoint, address)
    }

    async fn exchange(address: std::net::SocketAddr) -> (Vec<u8>, io::Result<usize>) {
        let mut client = TcpStream::connect(address).await.unwrap();
        client
            .write_all(b"GET / HTTP/1.1\r\nhost: api\r\n\r\n")
            .await
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let end = loop {
            match tokio::time::timeout(Duration::from_secs(5), client.read(&mut buf)).await {
                Ok(Ok(0)) => break Ok(0),
                Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                Ok(Err(e)) => break Err(e),
                Err(_) => panic!("no end of stream within 5 s"),
            }
        };
        (got, end)
    }

    #[tokio::test]
    async fn a_reset_step_is_a_real_rst() {
        let (endpoint, address) =
            serve(EndpointConfig::http("api").script([Step::fail(Fail::Reset)])).await;
        let (got, end) = exchange(address).await;
        assert!(got.is_empty());
        assert_eq!(end.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(endpoint.ledger().snapshot().requests.len(), 1);
    }

    #[tokio::test]
    async fn a_close_step_is_a_fin() {
        let (_endpoint, address) =
            serve(EndpointConfig::http("api").script([Step::fail(Fail::Close)])).await;
        let (got, end) = exchange(address).await;
        assert!(got.is_empty());
        assert_eq!(end.unwrap(), 0);
    }

    #[tokio::test]
    async fn after_bytes_cuts_the_response_there() {
        let (_endpoint, address) = serve(
            EndpointConfig::http("api").script([Step::status(200)
                .body("0123456789")
                .fail_with(Fail::close_after(12))]),
        )
        .await;
        let (got, end) = exchange(address).await;
        // `after_bytes` counts the response as written on the wire, head included.
        assert_eq!(String::from_utf8_lossy(&got), "HTTP/1.1 200");
        assert_eq!(end.unwrap(), 0);
    }

    #[tokio::test]
    async fn latency_is_real() {
        let (_endpoint, address) = serve(
            EndpointConfig::http("api")
                .script([Step::status(204).latency(Duration::from_millis(150))]),
        )
        .await;
        let started = tokio::time::Instant::now();
        let mut client = TcpStream::connect(address).await.unwrap();
        client
            .write_all(b"GET / HTTP/1.1\r\nhost: api\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 64];
        let n = client.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 204"));
        assert!(started.elapsed() >= Duration::from_millis(150));
    }

    #[test]
    fn ids_count_from_one() {
        let ids = ConnIds::new();
        assert_eq!((ids.next(), ids.next()), (1, 2));
    }
}
