//! `amplification: { at_most, p99_at_most }`: the requests the endpoints received per
//! logical call, over the whole run (a fleet's calls together), is at most `at_most`; and
//! the attempts of one call, at the 99th percentile across the calls, at most
//! `p99_at_most`.
//!
//! Retries multiply the load a service sees: a fleet whose every call retries four times
//! sends five times the requests its callers asked for. The total ratio is what the service
//! carries; the 99th percentile tells a few calls that retried much from every call
//! retrying, and bounds what the slowest calls' callers wait through. Each bound written is
//! judged; the verdict gives both figures, and the largest count of one call's attempts.

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
    // (p99, max) of the attempts per call; `None` with no call.
    let spread = per_call
        .last()
        .map(|&max| (per_call[percentile_index(per_call.len(), 99)], max));
    let spread_text = match spread {
        Some((p99, max)) => format!("; attempts per call: p99 {p99}, max {max}"),
        None => String::new(),
    };
    let total = format!(
        "the endpoints received {received} requests for {calls} calls, {ratio:.3} per call"
    );
    let mut problems = Vec::new();
    if let Some(at_most) = spec.at_most.filter(|&at_most| ratio > at_most) {
        problems.push(format!("{total}, more than {at_most} allowed{spread_text}"));
    }
    if let (Some(bound), Some((p99, max))) = (spec.p99_at_most, spread) {
        if p99 > bound as usize {
            problems.push(format!(
                "the 99th percentile of attempts per call is {p99} (of {} calls; max {max}), \
                 more than {bound} allowed",
                per_call.len()
            ));
        }
    }
    // The p99 judges the calls' attempts: with no attempt in any call there is nothing to
    // rank, whatever reached the endpoints.
    let attempted = per_call.iter().filter(|&&n| n > 0).count();
    let no_request = || "no request reached an endpoint, so there was nothing to amplify";
    let no_attempt = || {
        format!(
            "no call has an attempt of its own ({received} requests reached the endpoints, \
             none attributed to a call), so there is no 99th percentile to rank"
        )
    };
    // The message says which evidence was missing: the one the bounds written judge on.
    let (evidence, nothing) = match (spec.at_most, spec.p99_at_most) {
        _ if calls == 0 => (0, "no call ran, so there was nothing to amplify".to_owned()),
        (Some(_), Some(_)) if received == 0 => (0, no_request().to_owned()),
        (Some(_), Some(_)) => (attempted, no_attempt()),
        (Some(_), None) => (received, no_request().to_owned()),
        (None, _) if received == 0 => (0, no_request().to_owned()),
        (None, _) => (attempted, no_attempt()),
    };
    ctx.unless_unsettled(verdict_on(
        "amplification",
        evidence,
        || nothing,
        problems,
        || {
            let at_most = spec
                .at_most
                .map(|x| format!(" (at most {x} allowed)"))
                .unwrap_or_default();
            let p99 = spec
                .p99_at_most
                .map(|n| format!(" (p99 at most {n} allowed)"))
                .unwrap_or_default();
            format!("{total}{at_most}{spread_text}{p99}")
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
    use crate::scenario::AmplificationSpec;

    const BURST: &str = include_str!("../../templates/5xx-burst.yaml");

    /// With requests received but none of them a call's (every attempt unattributed), the
    /// p99 cannot be judged and says so, rather than claiming no request arrived; the total
    /// ratio still judges what arrived.
    #[test]
    fn not_judged_says_which_evidence_was_missing() {
        let judge = |spec: AmplificationSpec| {
            super::super::with_edited_report(
                BURST,
                |report| {
                    let trace = &mut report.trace;
                    trace.unattributed = trace.attempts.iter().map(|a| a.id).collect();
                    trace.unattributed.sort_unstable();
                },
                |ctx| super::check(ctx, spec),
            )
        };
        let p99 = judge(AmplificationSpec {
            at_most: None,
            p99_at_most: Some(4),
        });
        assert_eq!(
            p99.judgement,
            crate::report::Judgement::NotJudged,
            "{p99:?}"
        );
        assert!(
            p99.message
                .contains("no call has an attempt of its own (4 requests reached the endpoints"),
            "{p99:?}"
        );
        let total = judge(AmplificationSpec {
            at_most: Some(4.0),
            p99_at_most: None,
        });
        assert!(total.passed(), "{total:?}");
    }

    #[test]
    fn nearest_rank() {
        assert_eq!(percentile_index(1, 99), 0);
        assert_eq!(percentile_index(100, 99), 98);
        assert_eq!(percentile_index(1000, 99), 989);
        assert_eq!(percentile_index(3, 99), 2);
    }
}
