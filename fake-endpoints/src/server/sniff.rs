//! An `auto` endpoint's look at a connection's first bytes: the HTTP/2 connection preface
//! (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, RFC 9113 section 3.4) means HTTP/2 with prior
//! knowledge, anything else HTTP/1.1. The bytes read to tell are handed back in front of the
//! transport ([`Rewind`]), so the server that serves the connection reads them as if nobody
//! had.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::common::{End, Idle};
use super::conn::ConnShared;

/// The HTTP/2 client connection preface.
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What the first bytes of a connection asked for.
pub(crate) enum Sniffed<T> {
    /// The HTTP/2 preface.
    Http2(Rewind<T>),
    /// Anything else, or nothing: the client closed (or broke) the connection before its
    /// bytes could tell, and the HTTP/1 server reads what there is as it would.
    Http1(Rewind<T>),
    /// The endpoint ended the connection first (a kill, or its idle timeout).
    Ended(End, T),
}

/// Reads `io` until its bytes tell the preface from anything else. Polled in a fixed order
/// (kill, transport, idle timer), as the serving loops are.
pub(crate) async fn sniff<T>(
    mut io: T,
    shared: &Arc<ConnShared>,
    idle_timeout: Option<Duration>,
) -> Sniffed<T>
where
    T: AsyncRead + Unpin,
{
    let mut seen = [0u8; PREFACE.len()];
    let mut filled = 0;
    let mut idle = Idle::new(idle_timeout);
    let told = poll_fn(|cx| {
        if let Some(kill) = shared.poll_kill(cx.waker()) {
            return Poll::Ready(Err(End::Kill(kill)));
        }
        loop {
            let mut buf = ReadBuf::new(&mut seen[filled..]);
            match Pin::new(&mut io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) => {
                    let n = buf.filled().len();
                    if n == 0 {
                        return Poll::Ready(Ok(false));
                    }
                    filled += n;
                    if seen[..filled] != PREFACE[..filled] {
                        return Poll::Ready(Ok(false));
                    }
                    if filled == PREFACE.len() {
                        return Poll::Ready(Ok(true));
                    }
                }
                // The transport noted the error; the HTTP/1 server meets it again.
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(false)),
                Poll::Pending => break,
            }
        }
        if idle.poll_expired(cx, shared) {
            return Poll::Ready(Err(End::Done));
        }
        Poll::Pending
    })
    .await;
    let prefix = seen[..filled].to_vec();
    match told {
        Ok(true) => Sniffed::Http2(Rewind::new(prefix, io)),
        Ok(false) => Sniffed::Http1(Rewind::new(prefix, io)),
        Err(end) => Sniffed::Ended(end, io),
    }
}

/// A transport whose first reads give back bytes already read from it.
pub(crate) struct Rewind<T> {
    prefix: Vec<u8>,
    /// How much of `prefix` has been read again.
    at: usize,
    io: T,
}

impl<T> Rewind<T> {
    pub(crate) fn new(prefix: Vec<u8>, io: T) -> Rewind<T> {
        Rewind { prefix, at: 0, io }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = &this.prefix[this.at..];
        if !rest.is_empty() {
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
