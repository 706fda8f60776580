//! `not_retried_on: [400, ...]`: no attempt follows a response with one of these statuses.

use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};

pub(super) fn check(ctx: &Ctx<'_>, statuses: &[u16]) -> Verdict {
    let mut problems = Vec::new();
    let mut seen = 0;
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        seen += attempts
            .iter()
            .filter(|a| a.outcome.status().is_some_and(|s| statuses.contains(&s)))
            .count();
        for pair in attempts.windows(2) {
            if let Some(status) = pair[0].outcome.status().filter(|s| statuses.contains(s)) {
                problems.push(
                    Finding::call(
                        client,
                        call,
                        format!(
                            "{}: attempt {} got {status} and attempt {} retried it",
                            ctx.call_name(client, call),
                            pair[0].n,
                            pair[1].n
                        ),
                    )
                    .attempt(pair[1].n),
                );
            }
        }
    }
    verdict_on(
        "not_retried_on",
        seen,
        || format!("no attempt got one of {statuses:?}, so none could be retried or not"),
        problems,
        || format!("no call retried after {statuses:?} ({seen} seen)"),
    )
}
