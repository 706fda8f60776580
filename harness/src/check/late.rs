//! `late_requests: n`: requests that reached an endpoint after their call returned.

use super::{Ctx, verdict};
use crate::report::Verdict;
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, expected: u32) -> Verdict {
    let late = &ctx.trace.late_requests;
    let problems = if late.len() as u32 == expected {
        vec![]
    } else {
        let list: Vec<String> = late
            .iter()
            .map(|l| {
                format!(
                    "{} at {} on `{}`",
                    ctx.call_name(l.client_id, l.call_id),
                    seconds(l.at_ms),
                    ctx.trace.name(l.endpoint)
                )
            })
            .collect();
        vec![format!(
            "{} late requests, expected {expected}{}{}",
            late.len(),
            if list.is_empty() { "" } else { ": " },
            list.join(", ")
        )]
    };
    let verdict = verdict("late_requests", problems, || {
        format!("{expected} late requests")
    });
    ctx.unless_unsettled(verdict)
}
