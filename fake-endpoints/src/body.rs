//! The response body hyper writes: the whole body in one chunk, or a prefix of it followed by
//! a stall that the connection's kill cuts short.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::conn::{ConnShared, FlushHook};

pub(crate) struct ResponseBody {
    chunk: Bytes,
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
            remaining: full_len,
            truncated,
            hook: Some((shared, hook)),
        }
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
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
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
