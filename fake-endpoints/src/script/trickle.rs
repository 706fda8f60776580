//! Trickles: how a step's body is spread over time after the head, in chunks at fixed
//! instants (see [`Step::trickle`](crate::Step::trickle)), for the step's schedule and the
//! body the server writes.

use std::time::Duration;

/// The most chunks a trickled body is split into: a long trickle of a large body stays a
/// thousand timer wake-ups, not one per byte.
pub(crate) const MAX_TRICKLE_CHUNKS: u64 = 1000;

/// How a body of `len` bytes is spread over a trickle (see
/// [`Step::trickle`](crate::Step::trickle)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pace {
    len: u64,
    trickle_ms: u64,
    /// How many chunks, at least 1 and at most `len` and `trickle_ms`.
    pub(crate) chunks: u64,
}

impl Pace {
    /// `None` when there is nothing to spread (no body, or under a millisecond).
    pub(crate) fn new(len: usize, trickle: Duration) -> Option<Pace> {
        let len = len as u64;
        let trickle_ms = u64::try_from(trickle.as_millis()).unwrap_or(u64::MAX);
        let chunks = len.min(trickle_ms).min(MAX_TRICKLE_CHUNKS);
        (chunks > 0).then_some(Pace {
            len,
            trickle_ms,
            chunks,
        })
    }

    /// When chunk `k` (1-based) leaves, in ms after the head.
    pub(crate) fn offset_ms(&self, k: u64) -> u64 {
        mul_div(k, self.trickle_ms, self.chunks)
    }

    /// The body bytes of chunk `k` (1-based).
    pub(crate) fn bytes(&self, k: u64) -> std::ops::Range<usize> {
        let at = |k: u64| usize::try_from(mul_div(k, self.len, self.chunks)).unwrap_or(usize::MAX);
        at(k - 1)..at(k)
    }
}

/// `a × b / c` rounded down, without overflow (`c` > 0, `a` ≤ `c`).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    u64::try_from(u128::from(a) * u128::from(b) / u128::from(c)).unwrap_or(u64::MAX)
}
