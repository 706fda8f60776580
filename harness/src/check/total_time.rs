//! `total_time`: how long each call took, from the closure's call to its return, against a
//! bound widened by the tolerance.

use super::{Ctx, verdict};
use crate::report::{Finding, Verdict};
use crate::scenario::BoundSpec;
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, bound: BoundSpec) -> Verdict {
    let mut problems = Vec::new();
    for call in &ctx.trace.calls {
        let name = ctx.call_name(call.client_id, call.call_id);
        match call.end_ms {
            Some(end) => {
                let took = end.saturating_sub(call.start_ms);
                if !ctx.tolerance.contains(bound, took) {
                    problems.push(Finding::call(
                        call.client_id,
                        call.call_id,
                        format!(
                            "{name} took {}, expected {}",
                            seconds(took),
                            ctx.bound_text(bound)
                        ),
                    ));
                }
            }
            None => problems.push(Finding::call(
                call.client_id,
                call.call_id,
                format!("{name} never returned"),
            )),
        }
    }
    verdict("total_time", problems, || {
        format!("every call took {}", ctx.bound_text(bound))
    })
}
