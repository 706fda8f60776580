//! `retry_after: { honour, cap, invalid }`: did the client wait as the server asked?
//!
//! A delay-seconds value is measured from `head(n)`; an HTTP-date is compared with the
//! virtual wall clock at `start(n+1)` (docs/architecture.md#attempts-time-and-ordering).
//! Under a tolerance a retry may come up to it early, and under `honour: exact` up to it
//! early or late.

use super::{Ctx, verdict_on};
use crate::policy::RetryAfterValue;
use crate::report::{Finding, Verdict};
use crate::scenario::{InvalidRetryAfter, RetryAfterCheckSpec, RetryAfterHonour};
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, spec: RetryAfterCheckSpec) -> Verdict {
    let cap_ms = spec.cap.millis().map(|m| m.as_ms());
    let mut problems = Vec::new();
    // The values the check could judge: a valid one followed by a retry (whose wait it
    // bounds), or an invalid one under `invalid: give_up` (where stopping is the point). A
    // valid value after which the call stopped, or an invalid one that is ignored, bounds
    // nothing, and a run made only of those is not judged.
    let mut judged = 0;
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        for (i, attempt) in attempts.iter().enumerate() {
            let (Some(raw), Some(head)) = (attempt.retry_after, attempt.head_ms) else {
                continue;
            };
            let raw = ctx.trace.name(raw);
            let next = attempts.get(i + 1);
            let status = attempt.outcome.status().unwrap_or(0);
            let what = format!("a {status} with Retry-After: {raw}");
            // The wait the server asked for, in ms after the head.
            let asked = match RetryAfterValue::parse(raw) {
                RetryAfterValue::Seconds(s) => Some(s.saturating_mul(1000)),
                RetryAfterValue::Date(unix_s) => {
                    let head_system = ctx.epoch_unix_ms as i64 + head as i64;
                    Some((unix_s * 1000 - head_system).max(0) as u64)
                }
                RetryAfterValue::Invalid(_) => None,
            };
            let Some(asked) = asked else {
                if spec.invalid == InvalidRetryAfter::GiveUp {
                    judged += 1;
                    if let Some(next) = next {
                        problems.push(
                            Finding::call(
                                client,
                                call,
                                format!(
                                    "{}: attempt {} was made after {what} (invalid: the client \
                             should have given up)",
                                    ctx.call_name(client, call),
                                    next.n
                                ),
                            )
                            .attempt(next.n),
                        );
                    }
                }
                continue;
            };
            let Some(next) = next else { continue };
            judged += 1;
            let needed = cap_ms.map_or(asked, |cap| asked.min(cap));
            let waited = next.start_ms.saturating_sub(head);
            let tolerance = ctx.tolerance;
            let ok = match spec.honour {
                RetryAfterHonour::Max => tolerance.at_least(waited, needed),
                RetryAfterHonour::Exact => tolerance.equals(waited, needed),
            };
            if !ok {
                let (relation, note) = match spec.honour {
                    RetryAfterHonour::Max => (">=", tolerance.less_clause()),
                    RetryAfterHonour::Exact => ("exactly", tolerance.either_way_clause()),
                };
                problems.push(Finding::call(client, call, format!(
                    "{}: attempt {} started {} after the head of {what} (needed {relation} {}{note})",
                    ctx.call_name(client, call),
                    next.n,
                    seconds(waited),
                    seconds(needed)
                )).attempt(next.n));
            }
        }
    }
    verdict_on(
        "retry_after",
        judged,
        || {
            "no Retry-After was followed by a retry it could bound (none was sent, every \
             call stopped after it, or it was invalid and `invalid: ignore` skips it), so \
             there was nothing to honour"
                .to_owned()
        },
        problems,
        || {
            let note = match spec.honour {
                RetryAfterHonour::Max => ctx.tolerance.less(),
                RetryAfterHonour::Exact => ctx.tolerance.either_way(),
            };
            format!("all {judged} Retry-After values were honoured{note}")
        },
    )
}
