//! The order in which a client's decisions were made, when its calls overlap.
//!
//! A client with several calls in flight (`operation.concurrency`) decides after each
//! attempt, as the attempt ends; a quota or a rate that spans its calls changes in that
//! order. A replay of that state ([`Conformance`](super::Conformance), the nominal-schedule
//! evidence) takes the attempts in the same order: by the instant each ended, each call's
//! own attempts in turn (a client that starts a retry before the attempt it follows has ended
//! is still judged attempt by attempt). Attempts that end at the same instant are taken in
//! the order of their calls; for calls made one after another this is the order they were
//! made in.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::attempt::AttemptView;

/// `(call, attempt)` positions into `calls`, in the order the client decided on them: for
/// call 0 ending its attempts at 10 and 30 ms and call 1 at 20 ms, `0/0, 1/0, 0/1`.
pub(crate) fn decision_order(calls: &[&[AttemptView]]) -> Vec<(usize, usize)> {
    let mut order = Vec::with_capacity(calls.iter().map(|c| c.len()).sum());
    // The next attempt of each call that has one, keyed by when it ended and its call.
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = calls
        .iter()
        .enumerate()
        .filter_map(|(c, attempts)| attempts.first().map(|a| Reverse((a.end_ms, c))))
        .collect();
    let mut taken = vec![0usize; calls.len()];
    while let Some(Reverse((_, c))) = next.pop() {
        order.push((c, taken[c]));
        taken[c] += 1;
        if let Some(a) = calls[c].get(taken[c]) {
            next.push(Reverse((a.end_ms, c)));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Observed;

    fn attempt(n: u32, start: u64, end: u64) -> AttemptView {
        AttemptView::new(n, Observed::Status(503), start, Some(end), end)
    }

    #[test]
    fn overlapping_calls_interleave_by_end() {
        let a = [attempt(1, 0, 10), attempt(2, 20, 30)];
        let b = [attempt(1, 0, 20)];
        assert_eq!(decision_order(&[&a, &b]), [(0, 0), (1, 0), (0, 1)]);
    }

    #[test]
    fn calls_one_after_another_keep_their_order() {
        // Call 1 starts the instant call 0 ends, with an attempt that takes no time.
        let a = [attempt(1, 0, 10), attempt(2, 10, 10)];
        let b = [attempt(1, 10, 10)];
        assert_eq!(decision_order(&[&a, &b]), [(0, 0), (0, 1), (1, 0)]);
    }

    #[test]
    fn a_call_is_taken_in_order_even_when_a_retry_ends_first() {
        // A hedging client: attempt 2 started before attempt 1 ended, and ended first.
        let a = [attempt(1, 0, 50), attempt(2, 10, 20)];
        let b = [attempt(1, 0, 30)];
        assert_eq!(decision_order(&[&a, &b]), [(1, 0), (0, 0), (0, 1)]);
    }
}
