//! `amplification: { at_most }`: the requests the endpoints received per logical call, over
//! the whole run (a fleet's calls together), is at most `at_most`.
//!
//! Retries multiply the load a service sees: a fleet whose every call retries four times
//! sends five times the requests its callers asked for. The total ratio is what the service
//! carries, so it is the one judged; the verdict also gives the 99th percentile and the
//! largest count of one call's attempts, which show whether a few calls or all of them
//! retried.

use super::{Ctx, verdict_on};
use crate::report::Verdict;
use crate::scenario::AmplificationSpec;

pub(super) fn check(ctx: &Ctx<'_>, spec: AmplificationSpec) -> Verdict {
    let calls = ctx.trace.calls.len();
    let received: usize = ctx
        .ledgers
        .iter()
        .filter(|(name, _)| !ctx.is_dead_letter(name))
        .map(|(_, ledger)| ledger.requests.len())
        .sum();
    let ratio = if calls == 0 {
        0.0
    } else {
        received as f64 / calls as f64
    };
    let mut per_call: Vec<usize> = ctx
        .calls()
        .map(|(client, call)| ctx.attempts_of(client, call).len())
        .collect();
    per_call.sort_unstable();
    let spread = match per_call.last() {
        Some(&max) => format!(
            "; attempts per call: p99 {}, max {max}",
            per_call[percentile_index(per_call.len(), 99)]
        ),
        None => String::new(),
    };
    let mut problems = Vec::new();
    if ratio > spec.at_most {
        problems.push(format!(
            "the endpoints received {received} requests for {calls} calls, {ratio:.3} per \
             call, more than {} allowed{spread}",
            spec.at_most
        ));
    }
    ctx.unless_unsettled(verdict_on(
        "amplification",
        if calls == 0 { 0 } else { received },
        || "no request reached an endpoint, so there was nothing to amplify".to_owned(),
        problems,
        || {
            format!(
                "the endpoints received {received} requests for {calls} calls, {ratio:.3} \
                 per call (at most {} allowed){spread}",
                spec.at_most
            )
        },
    ))
}

/// The index of the `p`th percentile of `n` sorted values (nearest rank), `n` at least 1.
fn percentile_index(n: usize, p: usize) -> usize {
    (n * p).div_ceil(100).clamp(1, n) - 1
}

#[cfg(test)]
mod tests {
    use super::percentile_index;

    #[test]
    fn nearest_rank() {
        assert_eq!(percentile_index(1, 99), 0);
        assert_eq!(percentile_index(100, 99), 98);
        assert_eq!(percentile_index(1000, 99), 989);
        assert_eq!(percentile_index(3, 99), 2);
    }
}
