//! `max_rate: { window, at_most, from }`: no endpoint received more than `at_most` requests
//! in any sliding window of `window` (a window `[t, t + window)` starting at any request);
//! with `from`, only the requests that arrived at or after it count, so a scenario can bound
//! the rate once it settled.
//!
//! Under a tolerance the window is narrowed by it, to 1 ms at least: two requests measured
//! `window - tolerance` apart may really have been a whole window apart, so only requests
//! closer than that surely shared a window. A narrower window holds fewer requests, so the
//! bound forgives, as every widened bound does.

use super::{Ctx, verdict_on};
use crate::report::Verdict;
use crate::scenario::MaxRateSpec;
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, spec: MaxRateSpec) -> Verdict {
    let written = spec.window.as_ms();
    let window = written.saturating_sub(ctx.tolerance.ms()).max(1);
    // Why the window is narrower than written: `the 1.000s window less the 50ms tolerance`.
    let narrowed = (!ctx.tolerance.is_zero()).then(|| {
        format!(
            "the {} window less the {}ms tolerance{}",
            seconds(written),
            ctx.tolerance.ms(),
            if written <= ctx.tolerance.ms() {
                ", 1ms at least"
            } else {
                ""
            }
        )
    });
    let from = spec.from.map_or(0, |f| f.as_ms());
    // ` from 3.000s on`: where the counted requests begin, when not at the start.
    let since = spec
        .from
        .map(|f| format!(" from {} on", seconds(f.as_ms())))
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut seen = 0;
    for (name, ledger) in ctx.ledgers {
        if ctx.is_dead_letter(name) {
            continue;
        }
        let arrivals: Vec<u64> = ledger
            .requests
            .iter()
            .map(|r| r.at_ms)
            .filter(|&at| at >= from)
            .collect();
        seen += arrivals.len();
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
                "`{name}` received {} requests from {} to {}, within {} ({}at most {} allowed{since})",
                l - f + 1,
                seconds(arrivals[f]),
                seconds(arrivals[l]),
                seconds(window),
                narrowed
                    .as_ref()
                    .map(|n| format!("{n}; "))
                    .unwrap_or_default(),
                spec.at_most
            ));
        }
    }
    ctx.unless_unsettled(verdict_on(
        "max_rate",
        seen,
        || format!("no request reached an endpoint{since}, so there was no rate to bound"),
        problems,
        || {
            format!(
                "no endpoint received more than {} requests in {}{}{since}",
                spec.at_most,
                seconds(window),
                narrowed.map(|n| format!(" ({n})")).unwrap_or_default()
            )
        },
    ))
}
