//! The response body hyper writes: the whole body in one chunk, a prefix of it followed by
//! a stall that the connection's kill cuts short, or the body spread over a trickle in
//! chunks at fixed instants after the head ([`crate::Step::trickle`]).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use super::conn::{ConnShared, FlushHook};
use crate::script::trickle::Pace;

/// The chunks of a trickled body still to hand over, timed from the head.
struct Paced {
    pace: Pace,
    /// The next chunk (1-based).
    next: u64,
    /// The instant the head was handed to hyper: chunk offsets count from it.
    head: tokio::time::Instant,
    /// Sleeps until the next chunk is due (the tokio clock: virtual under the simulation,
    /// real on sockets).
    timer: Pin<Box<tokio::time::Sleep>>,
}

pub(crate) struct ResponseBody {
    /// The whole body (paced: the chunks are sliced from it).
    chunk: Bytes,
    paced: Option<Paced>,
    /// Bytes the head promised (`content-length`) and not yet yielded.
    remaining: u64,
    /// Whether `chunk` is shorter than the promised length (a `*After` failure).
    truncated: bool,
    hook: Option<(Arc<ConnShared>, FlushHook)>,
}

impl ResponseBody {
    /// `chunk` of a body of `full_len` bytes; `hook` is armed once the last byte that will ever
    /// be yielded is in hyper's hands.
    pub(crate) fn new(
        chunk: Bytes,
        full_len: u64,
        shared: Arc<ConnShared>,
        hook: FlushHook,
    ) -> Self {
        let truncated = (chunk.len() as u64) < full_len;
        Self {
            chunk,
            paced: None,
            remaining: full_len,
            truncated,
            hook: Some((shared, hook)),
        }
    }

    /// `body` spread as `pace` says, from now (the head); `hook` is armed with the last chunk.
    pub(crate) fn paced(body: Bytes, pace: Pace, shared: Arc<ConnShared>, hook: FlushHook) -> Self {
        let head = tokio::time::Instant::now();
        Self {
            remaining: body.len() as u64,
            chunk: body,
            paced: Some(Paced {
                pace,
                next: 1,
                head,
                timer: Box::pin(tokio::time::sleep_until(head)),
            }),
            truncated: false,
            hook: Some((shared, hook)),
        }
    }

    /// The paced body's next chunk once it is due; `None` when all have gone.
    fn poll_paced(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let Some(paced) = &mut self.paced else {
            return Poll::Ready(None);
        };
        if paced.next > paced.pace.chunks {
            return Poll::Ready(None);
        }
        let due = paced.head + Duration::from_millis(paced.pace.offset_ms(paced.next));
        if paced.timer.deadline() != due {
            paced.timer.as_mut().reset(due);
        }
        ready!(paced.timer.as_mut().poll(cx));
        let bytes = paced.pace.bytes(paced.next);
        let last = paced.next == paced.pace.chunks;
        paced.next += 1;
        let chunk = self.chunk.slice(bytes);
        self.remaining = self.remaining.saturating_sub(chunk.len() as u64);
        if last {
            // Armed in the poll that hands over the last bytes, as for a whole body.
            self.arm();
        }
        Poll::Ready(Some(chunk))
    }

    fn arm(&mut self) {
        if let Some((shared, hook)) = self.hook.take() {
            shared.arm(hook);
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.paced.is_some() {
            return match ready!(this.poll_paced(cx)) {
                Some(chunk) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
                None => Poll::Ready(None),
            };
        }
        // Armed in the same poll that hands over the last bytes: hyper buffers them before its
        // next flush, so the hook fires exactly when they have been written.
        this.arm();
        if !this.chunk.is_empty() {
            let chunk = std::mem::take(&mut this.chunk);
            this.remaining = this.remaining.saturating_sub(chunk.len() as u64);
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if this.truncated {
            // Never woken on purpose: the armed kill drops the connection, and this body with it.
            Poll::Pending
        } else {
            Poll::Ready(None)
        }
    }

    fn is_end_stream(&self) -> bool {
        if let Some(paced) = &self.paced {
            return paced.next > paced.pace.chunks;
        }
        !self.truncated && self.chunk.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        // hyper drops a body without polling it when it is empty or must not be sent (HEAD,
        // 204, 304); the head it just buffered still has to complete the record.
        self.arm();
    }
}
