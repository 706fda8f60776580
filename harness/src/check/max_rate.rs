//! `max_rate: { window, at_most }`: no endpoint received more than `at_most` requests in any
//! sliding window of `window` (a window `[t, t + window)` starting at any request).

use super::{Ctx, verdict_on};
use crate::report::Verdict;
use crate::scenario::MaxRateSpec;
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, spec: MaxRateSpec) -> Verdict {
    let window = spec.window.as_ms();
    let mut problems = Vec::new();
    let mut seen = 0;
    for (name, ledger) in ctx.ledgers {
        if ctx.is_dead_letter(name) {
            continue;
        }
        seen += ledger.requests.len();
        let arrivals: Vec<u64> = ledger.requests.iter().map(|r| r.at_ms).collect();
        // Arrivals are in order: a two-pointer sweep finds the fullest window.
        let mut first = 0;
        let mut worst: Option<(usize, usize)> = None;
        for last in 0..arrivals.len() {
            while arrivals[last] >= arrivals[first] + window {
                first += 1;
            }
            let n = last - first + 1;
            if n as u64 > spec.at_most && worst.is_none_or(|(f, l)| l - f + 1 < n) {
                worst = Some((first, last));
            }
        }
        if let Some((f, l)) = worst {
            problems.push(format!(
                "`{name}` received {} requests from {} to {}, within {} (at most {} allowed)",
                l - f + 1,
                seconds(arrivals[f]),
                seconds(arrivals[l]),
                seconds(window),
                spec.at_most
            ));
        }
    }
    ctx.unless_unsettled(verdict_on(
        "max_rate",
        seen,
        || "no request reached an endpoint, so there was no rate to bound".to_owned(),
        problems,
        || {
            format!(
                "no endpoint received more than {} requests in {}",
                spec.at_most,
                seconds(window)
            )
        },
    ))
}
