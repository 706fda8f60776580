//! One end of a simulated connection.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use hyper_util::client::legacy::connect::{Connected, Connection};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::failures::{reset_error, run_ended};
use super::state::ReadStep;
use super::timer::{TimerSlot, poll_until_from};
use super::{ConnId, HostId, Network, Side};

/// One end of a connection on the [`Network`].
///
/// Implements tokio's `AsyncRead`/`AsyncWrite`, hyper's `rt::Read`/`rt::Write` (so hyper and
/// hyper-util use it without `TokioIo`) and hyper-util's `Connection`, whose `connected()`
/// carries the [`ConnId`] as extra: every response hyper-util's legacy client reads over this
/// connection has the `ConnId` in its extensions.
///
/// Writes never block (buffers are unbounded) and each becomes one segment, delivered one
/// way later. A reader sees a segment only once virtual now reaches its delivery instant.
/// `poll_shutdown` sends FIN; dropping an end that did not shut down sends FIN too; data
/// reaching a dropped end is answered with RST. [`reset`](SimStream::reset) aborts.
pub struct SimStream {
    net: Network,
    slot: u32,
    conn: ConnId,
    host: HostId,
    side: Side,
    /// Armed for the head segment's delivery instant while a read waits for it.
    timer: TimerSlot,
}

/// Aborts a connection's end from outside the task that owns its [`SimStream`], e.g. a
/// server resetting a connection hyper serves. Obtain it before moving the stream away.
///
/// It does not keep the connection alive: once the end is closed it does nothing.
#[derive(Clone)]
pub struct ResetHandle {
    net: Network,
    slot: u32,
    conn: ConnId,
    side: Side,
}

impl fmt::Debug for SimStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimStream")
            .field("conn", &self.conn)
            .field("side", &self.side)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ResetHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResetHandle")
            .field("conn", &self.conn)
            .field("side", &self.side)
            .finish_non_exhaustive()
    }
}

impl ResetHandle {
    /// Sends RST: the peer reads what was queued before it, then gets `ConnectionReset`; this
    /// end's own later operations fail with `ConnectionReset` too.
    pub fn reset(&self) {
        self.net
            .lock()
            .reset(self.slot, self.conn, self.side, Instant::now());
    }

    /// The connection.
    pub fn conn_id(&self) -> ConnId {
        self.conn
    }
}

impl SimStream {
    pub(super) fn new(
        net: Network,
        slot: u32,
        conn: ConnId,
        host: HostId,
        side: Side,
        timer: TimerSlot,
    ) -> SimStream {
        SimStream {
            net,
            slot,
            conn,
            host,
            side,
            timer,
        }
    }

    /// The connection.
    pub fn conn_id(&self) -> ConnId {
        self.conn
    }

    /// The host the connection goes to.
    pub fn host_id(&self) -> HostId {
        self.host
    }

    /// Which end this is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Sends RST; see [`ResetHandle::reset`].
    pub fn reset(&self) {
        self.reset_handle().reset();
    }

    /// A handle that can reset this end after the stream was moved (into hyper, say).
    pub fn reset_handle(&self) -> ResetHandle {
        ResetHandle {
            net: self.net.clone(),
            slot: self.slot,
            conn: self.conn,
            side: self.side,
        }
    }

    /// Reads at most `max` bytes of the next delivered data; empty at end of stream.
    fn poll_chunk(&mut self, cx: &mut Context<'_>, max: usize) -> Poll<io::Result<Bytes>> {
        if max == 0 {
            return Poll::Ready(Ok(Bytes::new()));
        }
        loop {
            // Read only when a queued segment's delivery instant is compared with it.
            let mut now = None;
            let step = self.net.lock().read(
                self.slot,
                self.conn,
                self.side,
                max,
                || *now.get_or_insert_with(Instant::now),
                cx.waker(),
            );
            return match step {
                ReadStep::Data(bytes) => Poll::Ready(Ok(bytes)),
                ReadStep::Eof => Poll::Ready(Ok(Bytes::new())),
                ReadStep::Reset => Poll::Ready(Err(reset_error())),
                ReadStep::Ended => Poll::Ready(Err(run_ended())),
                ReadStep::Wait(None) => Poll::Pending,
                ReadStep::Wait(Some(at)) => {
                    // `read` compared the segment's instant with the clock to say this.
                    let now = now.unwrap_or_else(Instant::now);
                    ready!(poll_until_from(&mut self.timer, at, now, cx));
                    // Due now: read it.
                    continue;
                }
            };
        }
    }

    fn write_now(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.net
            .lock()
            .write(self.slot, self.conn, self.side, buf, Instant::now())
    }

    fn shutdown_now(&mut self) -> io::Result<()> {
        self.net
            .lock()
            .shutdown(self.slot, self.conn, self.side, Instant::now())
    }
}

impl Drop for SimStream {
    fn drop(&mut self) {
        self.net
            .lock()
            .release(self.slot, self.conn, self.side, Instant::now());
    }
}

impl AsyncRead for SimStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let bytes = ready!(this.poll_chunk(cx, buf.remaining()))?;
        buf.put_slice(&bytes);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for SimStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write_now(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().shutdown_now())
    }
}

impl hyper::rt::Read for SimStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let bytes = ready!(this.poll_chunk(cx, buf.remaining()))?;
        buf.put_slice(&bytes);
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for SimStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write_now(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().shutdown_now())
    }
}

impl Connection for SimStream {
    fn connected(&self) -> Connected {
        Connected::new().extra(self.conn)
    }
}
