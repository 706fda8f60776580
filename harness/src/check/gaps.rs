//! `gaps` and `gaps_each`: `gap(n+1) = start(n+1) - end(n)` within a call, each bound
//! widened by the tolerance.

use super::{Ctx, verdict, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::BoundSpec;
use crate::trace::{Attempt, seconds};

/// The gap before `next`, or why there is none.
fn gap(previous: &Attempt, next: &Attempt) -> Result<u64, String> {
    match previous.end_ms {
        Some(end) => Ok(next.start_ms.saturating_sub(end)),
        None => Err(format!("attempt {} never ended", previous.n)),
    }
}

/// `gaps: [...]`: entry i bounds the gap before attempt i+2 of every call; fewer attempts
/// than entries fails, extra attempts are unchecked.
pub(super) fn gaps(ctx: &Ctx<'_>, bounds: &[BoundSpec]) -> Verdict {
    let mut problems = Vec::new();
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        if attempts.len() < bounds.len() + 1 {
            problems.push(Finding::call(
                client,
                call,
                format!(
                    "{} made {} attempts, but gaps lists {} (needs at least {} attempts)",
                    ctx.call_name(client, call),
                    attempts.len(),
                    bounds.len(),
                    bounds.len() + 1
                ),
            ));
        }
        for (pair, bound) in attempts.windows(2).zip(bounds) {
            check_one(ctx, client, call, pair[0], pair[1], *bound, &mut problems);
        }
    }
    verdict("gaps", problems, || {
        format!(
            "every call's first {} gaps were in bounds{}",
            bounds.len(),
            ctx.tolerance.widened()
        )
    })
}

/// `gaps_each:` bounds every gap of every call.
pub(super) fn gaps_each(ctx: &Ctx<'_>, bound: BoundSpec) -> Verdict {
    let mut problems = Vec::new();
    let mut seen = 0;
    for (client, call) in ctx.calls() {
        for pair in ctx.attempts_of(client, call).windows(2) {
            seen += 1;
            check_one(ctx, client, call, pair[0], pair[1], bound, &mut problems);
        }
    }
    verdict_on(
        "gaps_each",
        seen,
        || "no call made a second attempt, so there was no gap to bound".to_owned(),
        problems,
        || {
            format!(
                "every gap was {} (gaps: {seen}{})",
                super::bound_text(bound),
                ctx.tolerance.clause_for(bound)
            )
        },
    )
}

fn check_one(
    ctx: &Ctx<'_>,
    client: u32,
    call: u32,
    previous: &Attempt,
    next: &Attempt,
    bound: BoundSpec,
    problems: &mut Vec<Finding>,
) {
    match gap(previous, next) {
        Ok(gap) if ctx.tolerance.contains(bound, gap) => {}
        Ok(gap) => problems.push(
            Finding::call(
                client,
                call,
                format!(
                    "{}: attempt {} started {} after attempt {} ended, expected {}",
                    ctx.call_name(client, call),
                    next.n,
                    seconds(gap),
                    previous.n,
                    ctx.bound_text(bound)
                ),
            )
            .attempt(next.n),
        ),
        Err(why) => problems.push(Finding::call(
            client,
            call,
            format!("{}: {why}", ctx.call_name(client, call)),
        )),
    }
}
