//! `not_retried_on: [400, ...]`: no attempt follows a response with one of these statuses.

use super::{Ctx, verdict};
use crate::report::Verdict;

pub(super) fn check(ctx: &Ctx<'_>, statuses: &[u16]) -> Verdict {
    let mut problems = Vec::new();
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        for pair in attempts.windows(2) {
            if let Some(status) = pair[0].outcome.status().filter(|s| statuses.contains(s)) {
                problems.push(format!(
                    "{}: attempt {} got {status} and attempt {} retried it",
                    ctx.call_name(client, call),
                    pair[0].n,
                    pair[1].n
                ));
            }
        }
    }
    verdict("not_retried_on", problems, || {
        format!("no call retried after {statuses:?}")
    })
}
