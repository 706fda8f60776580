//! Transparent retries: a request the server never processed (HTTP/2's `REFUSED_STREAM`, or a
//! stream above a GOAWAY's last stream id) is safe to send again whatever its method (RFC
//! 9113 section 8.7), and gRPC's A6 sends it again at once, outside the retry policy: the
//! attempt does not count toward `max_attempts`, and no backoff comes before the next one.
//!
//! A6 allows one such retry per call for a request that reached the server ("the client
//! library will immediately retry it once. If this fails, then the RPC will be handled by the
//! configured retry policy"): the bound also keeps a server that refuses every stream from
//! spinning a client forever. The reference client retries so, and the conformance check
//! reads a call's attempts the same way ([`fold_transparent`]).

use super::attempt::AttemptView;

/// How many transparent retries one call gets.
pub const TRANSPARENT_RETRIES_PER_CALL: u32 = 1;

/// The attempts of one call as its retry policy counts them, from `(unprocessed, attempt)`
/// in order: the first [`TRANSPARENT_RETRIES_PER_CALL`] unprocessed attempts are no attempts
/// of the policy's, each folded into the attempt after it (which then starts when the
/// transparent one started, so that the policy's delay before it is measured as the client
/// waited it), and the rest are numbered from 1 again.
///
/// ```
/// use retrylab::policy::{AttemptView, Observed, fold_transparent};
/// use std::io::ErrorKind::ConnectionReset;
///
/// let refused = AttemptView::new(2, Observed::Transport(ConnectionReset), 110, None, 112);
/// let call = [
///     (false, AttemptView::new(1, Observed::Status(503), 0, Some(10), 10)),
///     (true, refused),
///     (false, AttemptView::new(3, Observed::Status(200), 112, Some(120), 120)),
/// ];
/// let counted = fold_transparent(call);
/// assert_eq!(counted.len(), 2);
/// assert_eq!((counted[1].n, counted[1].start_ms), (2, 110));
/// ```
pub fn fold_transparent(
    attempts: impl IntoIterator<Item = (bool, AttemptView)>,
) -> Vec<AttemptView> {
    let mut counted = Vec::new();
    let mut transparent = 0;
    let mut folded_start: Option<u64> = None;
    let mut folded = false;
    for (unprocessed, mut attempt) in attempts {
        if unprocessed && transparent < TRANSPARENT_RETRIES_PER_CALL {
            transparent += 1;
            folded = true;
            folded_start.get_or_insert(attempt.start_ms);
            continue;
        }
        if let Some(start) = folded_start.take() {
            attempt.start_ms = start;
        }
        counted.push(attempt);
    }
    if folded {
        for (i, attempt) in counted.iter_mut().enumerate() {
            attempt.n = i as u32 + 1;
        }
    }
    counted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Observed;
    use std::io::ErrorKind::ConnectionReset;

    fn attempt(n: u32, outcome: Observed, start: u64, end: u64) -> AttemptView {
        AttemptView::new(n, outcome, start, None, end)
    }

    #[test]
    fn only_the_first_unprocessed_attempt_of_a_call_is_transparent() {
        let refused = Observed::Transport(ConnectionReset);
        let call = [
            (true, attempt(1, refused, 0, 2)),
            (true, attempt(2, refused, 2, 4)),
            (false, attempt(3, Observed::Status(200), 104, 106)),
        ];
        let counted = fold_transparent(call);
        // The second refusal is an attempt of the policy's, and starts when the first did.
        assert_eq!(counted.len(), 2);
        assert_eq!((counted[0].n, counted[0].start_ms), (1, 0));
        assert_eq!((counted[1].n, counted[1].start_ms), (2, 104));
    }

    #[test]
    fn a_call_without_unprocessed_attempts_is_left_as_it_was() {
        let call = [
            (false, attempt(1, Observed::Status(503), 0, 10)),
            (false, attempt(2, Observed::Status(200), 110, 120)),
        ];
        let counted = fold_transparent(call.clone());
        let unchanged: Vec<AttemptView> = call.into_iter().map(|(_, a)| a).collect();
        assert_eq!(counted, unchanged);
    }
}
