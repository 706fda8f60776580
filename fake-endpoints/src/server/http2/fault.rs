//! Faults of HTTP/2 itself: a stream reset with a code (`RST_STREAM`), before its head or in
//! the middle of its body, and a GOAWAY, graceful or abrupt.
//!
//! A stream resets itself from its own future. A GOAWAY is the connection's, so a stream's
//! future only asks for one ([`Faults::ask`]), and the connection loop sends it the next time
//! it looks ([`Faults::take`]), right after polling the streams: the GOAWAY leaves in the
//! same pass as whatever the stream queued, in the order the loop polls everything.

use std::future::poll_fn;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use ::h2::SendStream;
use ::h2::server::{Connection, SendResponse};
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::H2Code;
use crate::endpoint::Inner;
use crate::ledger::GoAwayRecord;

/// What the streams of one connection asked of it, and what it needs to say what it did.
#[derive(Default)]
pub(super) struct Faults {
    /// The GOAWAY a stream asked for, not sent yet. A first ask wins: the connection goes
    /// away once.
    ask: Mutex<Option<GoAway>>,
    /// The highest stream id accepted so far: a GOAWAY's last stream id.
    last_stream_id: AtomicU32,
}

/// A GOAWAY to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GoAway {
    /// Streams in flight finish; the connection closes once they are done.
    Graceful,
    /// The connection closes at once with this code, failing the streams in flight.
    Abrupt(H2Code),
}

impl Faults {
    /// Counts stream `id` accepted.
    pub(super) fn accepted(&self, id: u32) {
        self.last_stream_id.fetch_max(id, Ordering::Relaxed);
    }

    /// Asks the connection for a GOAWAY.
    pub(super) fn ask(&self, goaway: GoAway) {
        self.lock().get_or_insert(goaway);
    }

    /// The GOAWAY asked for, if any, taken.
    pub(super) fn take(&self) -> Option<GoAway> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<GoAway>> {
        // Only a request slot: a panic while it was held leaves nothing half-written.
        self.ask.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `goaway` on `connection` and records it in the endpoint's ledger. Returns
    /// whether the connection now waits for its streams to finish before it closes (a
    /// graceful GOAWAY); an abrupt one closes it on the next poll.
    pub(super) fn go_away<T, B>(
        &self,
        connection: &mut Connection<T, B>,
        goaway: GoAway,
        inner: &Inner,
        conn_id: u64,
    ) -> bool
    where
        T: AsyncRead + AsyncWrite + Unpin,
        B: bytes::Buf,
    {
        let (code, graceful) = match goaway {
            GoAway::Graceful => {
                connection.graceful_shutdown();
                (H2Code::NO_ERROR, true)
            }
            GoAway::Abrupt(code) => {
                connection.abrupt_shutdown(code.into());
                (code, false)
            }
        };
        inner.ledger.push_goaway(GoAwayRecord {
            conn_id,
            at_ms: inner.clock().now_ms(),
            last_stream_id: self.last_stream_id.load(Ordering::Relaxed),
            code,
            graceful,
        });
        graceful
    }
}

/// Resets the stream with `code` before anything of its answer went out: the frame is queued,
/// and the connection loop writes it.
pub(super) fn reset_before_head(respond: &mut SendResponse<Bytes>, code: H2Code) {
    respond.send_reset(code.into());
}

/// Hands the first `n` bytes of `body` to the stream (never marking its end), then resets it
/// with `code`. `None` when the stream went away first.
pub(super) async fn reset_mid_body(
    stream: &mut SendStream<Bytes>,
    body: Bytes,
    n: u64,
    code: H2Code,
) -> Option<()> {
    let n = usize::try_from(n).unwrap_or(usize::MAX).min(body.len());
    let mut data = body.slice(..n);
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let granted = poll_fn(|cx| stream.poll_capacity(cx)).await?.ok()?;
        let chunk = data.split_to(granted.min(data.len()));
        stream.send_data(chunk, false).ok()?;
    }
    // h2 drops a stream's frames still queued when it is reset: the reset waits one turn of
    // the connection loop, which hands the head and the data to the transport first.
    one_turn().await;
    stream.send_reset(code.into());
    Some(())
}

/// Pending once, waking itself: the connection loop polls the connection (writing what the
/// streams queued) before it polls this stream again.
async fn one_turn() {
    let mut turned = false;
    poll_fn(|cx| {
        if turned {
            return std::task::Poll::Ready(());
        }
        turned = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}
