//! The pinned-bound check: delays that sit on one bound of a uniform jitter window again and
//! again, which a client drawing from the window does with a vanishing chance.

use super::violation::{Violation, ViolationKind};
use crate::policy::Anchor;
use crate::policy::units::fmt_ms;

/// The false-alarm bound of the pinned-bound check, per call and bound.
pub const PIN_PROBABILITY: f64 = 1e-9;

/// Windows narrower than this (ms) do not count for the pinned-bound check: on them a
/// correct client hits a bound too often for a repeat to mean much.
pub const PIN_MIN_WIDTH_MS: u64 = 10;

/// A retry that landed in a uniform window, for the pinned-bound check. It keeps the facts,
/// not their text: every jittered retry of a call lands, and only a pinned finding is
/// described (a string per landing was most of the judging of a long jittered call).
pub(super) struct Landing {
    pub(super) attempt: u32,
    pub(super) width_ms: u64,
    pub(super) at_min: bool,
    pub(super) at_max: bool,
    /// The delay, measured from `from` of attempt `after`.
    pub(super) gap_ms: u64,
    pub(super) from: Anchor,
    pub(super) after: u32,
}

impl Landing {
    /// `3s after the end of attempt 2`.
    fn description(&self) -> String {
        format!(
            "{} after the {} of attempt {}",
            fmt_ms(self.gap_ms),
            self.from.as_str(),
            self.after
        )
    }
}

/// The largest pin count the tail computation tracks: `P(at least k)` is bounded by
/// `P(at least 64)` beyond it, which is already far below any threshold, and the cap keeps
/// the computation linear in the number of attempts.
const PIN_TAIL_CAP: usize = 64;

/// `P(at least k of the events happen)` for independent events of probabilities `ps`
/// (Poisson-binomial tail, by dynamic programming over the count, capped at
/// [`PIN_TAIL_CAP`]). Monotone in every `p`, so upper bounds on the `p`s give an upper bound.
fn tail_at_least(ps: &[f64], k: usize) -> f64 {
    let top = k.min(PIN_TAIL_CAP);
    if top == 0 {
        return 1.0;
    }
    // dist[j] = P(exactly j so far) for j < top; dist[top] = P(at least top so far).
    let mut dist = vec![0.0f64; top + 1];
    dist[0] = 1.0;
    for &p in ps {
        dist[top] += dist[top - 1] * p;
        for j in (1..top).rev() {
            dist[j] = dist[j] * (1.0 - p) + dist[j - 1] * p;
        }
        dist[0] *= 1.0 - p;
    }
    dist[top]
}

/// The pinned-bound check over one call's uniform landings.
pub(super) fn pinned(landings: &[Landing]) -> Vec<Violation> {
    // Chance that a correct client's delay rounds to one given bound: the nanoseconds that
    // round to that millisecond span at most 1 ms of a window at least `width - 1` ms wide.
    let ps: Vec<f64> = landings
        .iter()
        .map(|l| 1.0 / (l.width_ms.saturating_sub(1)).max(1) as f64)
        .collect();
    let mut out = Vec::new();
    for (is_max, word, cause) in [
        (
            true,
            "maximum",
            "a cap applied after the jitter, or no jitter at all, does this every time",
        ),
        (
            false,
            "minimum",
            "a client that skips or collapses the jittered sleep does this every time",
        ),
    ] {
        let hits: Vec<&Landing> = landings
            .iter()
            .filter(|l| if is_max { l.at_max } else { l.at_min })
            .collect();
        if hits.len() < 2 || tail_at_least(&ps, hits.len()) >= PIN_PROBABILITY {
            continue;
        }
        let numbers: Vec<u32> = hits.iter().map(|l| l.attempt).collect();
        out.push(Violation {
            attempt: numbers[0],
            kind: ViolationKind::PinnedAtBound,
            message: format!(
                "attempts {} each started exactly at the {word} of the policy's uniform jitter \
                 window (attempt {}: {}); a correct client does this with probability below \
                 {PIN_PROBABILITY:e} ({cause})",
                join_and(&numbers),
                numbers[0],
                hits[0].description(),
            ),
        });
    }
    out
}

/// `6, 7 and 8`.
fn join_and(items: &[u32]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(u32::to_string).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_binomial_tail() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(tail_at_least(&[0.5, 0.5], 0), 1.0));
        assert!(close(tail_at_least(&[0.5, 0.5], 1), 0.75));
        assert!(close(tail_at_least(&[0.5, 0.5], 2), 0.25));
        assert!(close(tail_at_least(&[0.5, 0.5], 3), 0.0));
        assert!(close(tail_at_least(&[0.1, 0.2, 0.3], 2), 0.098));
        // Beyond the cap the tail is bounded by P(at least PIN_TAIL_CAP).
        let ps = vec![0.5; 100];
        assert!(tail_at_least(&ps, 90) >= tail_at_least(&ps, 64) - 1e-15);
    }

    #[test]
    fn words() {
        assert_eq!(join_and(&[3]), "3");
        assert_eq!(join_and(&[3, 4, 5]), "3, 4 and 5");
    }
}
