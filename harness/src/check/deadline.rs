//! `no_attempt_after: <duration>`: a client-side deadline (or `max_elapsed_time`), checked on
//! the attempts themselves: no attempt of a call starts later than the limit after the call
//! started.
//!
//! `total_time` cannot say this: a client that honours its deadline may still return after
//! it, because the last attempt it started in time takes a while, and one that breaks its
//! deadline may return early, because a late attempt is answered fast. Here an attempt that
//! starts exactly at the limit is in time; one that starts a millisecond later is not, unless
//! a tolerance raises the limit.

use super::Ctx;
use crate::report::Verdict;
use crate::scenario::Millis;
use crate::trace::seconds;

pub(super) const CHECK: &str = "no_attempt_after";

pub(super) fn check(ctx: &Ctx<'_>, limit: Millis) -> Verdict {
    let limit_ms = limit.as_ms();
    let tolerance = ctx.tolerance;
    // `later than 2.000s (plus the 50ms tolerance)`: the limit as the verdict prints it.
    let limit_text = format!("{}{}", seconds(limit_ms), tolerance.plus());
    let mut problems = Vec::new();
    let mut attempts = 0usize;
    // The attempt that started latest after its call's start, for the passing message.
    let mut latest: Option<(String, u32, u64)> = None;
    for call in &ctx.trace.calls {
        let name = ctx.call_name(call.client_id, call.call_id);
        let mine = ctx.attempts_of(call.client_id, call.call_id);
        attempts += mine.len();
        let offset = |start_ms: u64| start_ms.saturating_sub(call.start_ms);
        let late: Vec<_> = mine
            .iter()
            .filter(|a| !tolerance.at_most(offset(a.start_ms), limit_ms))
            .collect();
        if let Some(first) = late.first() {
            let more = match late.len() - 1 {
                0 => String::new(),
                1 => " (and 1 attempt after it)".to_string(),
                n => format!(" (and {n} attempts after it)"),
            };
            problems.push(format!(
                "{name}: attempt {} started {} after the call started, later than \
                 {limit_text}{more}",
                first.n,
                seconds(offset(first.start_ms)),
            ));
        }
        if let Some(last) = mine.last() {
            if latest
                .as_ref()
                .is_none_or(|(_, _, t)| offset(last.start_ms) > *t)
            {
                latest = Some((name, last.n, offset(last.start_ms)));
            }
        }
    }
    if !problems.is_empty() {
        // A late attempt is a late attempt, however the run ended.
        return Verdict::fail(CHECK, problems.join("; "));
    }
    if let Some(end) = ctx.end.verdict_name() {
        return Verdict::not_judged(
            CHECK,
            format!(
                "the run ended early ({end}): a call that had not returned could still have \
                 made an attempt later than {limit_text}"
            ),
        );
    }
    match latest {
        Some((name, n, t)) => Verdict::pass(
            CHECK,
            format!(
                "every attempt of every call started within {limit_text} of its call's start \
                 ({attempts} attempts; the latest, {name}'s attempt {n}, at {})",
                seconds(t)
            ),
        ),
        None => Verdict::not_judged(
            CHECK,
            "no call made an attempt, so no attempt start could be judged",
        ),
    }
}
