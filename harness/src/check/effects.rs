//! `effects: exactly_once | at_most_once | at_least_once`: side effects the endpoints
//! committed, per logical call.
//!
//! Effects are attributed by the harness's call tag (requests from its surfaces carry one),
//! else by the sequential call window they fell in.

use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::EffectsSpec;
use crate::trace::{CallResult, seconds};

pub(super) fn check(ctx: &Ctx<'_>, spec: EffectsSpec) -> Verdict {
    let mut problems = Vec::new();
    for call in &ctx.trace.calls {
        // A hand-off to a dead-letter endpoint is not the operation's effect.
        let effects: Vec<_> = ctx
            .index
            .effects_of(call.client_id, call.call_id)
            .filter(|e| !ctx.is_dead_letter(ctx.trace.name(e.endpoint)))
            .collect();
        let succeeded = matches!(call.result, CallResult::Success(_));
        let name = ctx.call_name(call.client_id, call.call_id);
        let at: Vec<String> = effects.iter().map(|e| seconds(e.at_ms)).collect();
        let too_many = effects.len() > 1;
        let too_few = succeeded && effects.is_empty();
        let wrong = match spec {
            EffectsSpec::ExactlyOnce => too_many || too_few,
            EffectsSpec::AtMostOnce => too_many,
            EffectsSpec::AtLeastOnce => too_few,
        };
        if wrong {
            if effects.is_empty() {
                problems.push(Finding::call(
                    call.client_id,
                    call.call_id,
                    format!("{name} succeeded but no effect was committed"),
                ));
            } else {
                problems.push(Finding::call(
                    call.client_id,
                    call.call_id,
                    format!(
                        "{name} committed {} effects (at {})",
                        effects.len(),
                        at.join(", ")
                    ),
                ));
            }
        }
    }
    let unattributed = ctx
        .trace
        .effects
        .iter()
        .filter(|e| e.call_id.is_none())
        .count();
    if unattributed > 0 {
        problems.push(Finding::from(format!(
            "{unattributed} effects could not be attributed to a call"
        )));
    }
    let name = match spec {
        EffectsSpec::ExactlyOnce => "exactly once",
        EffectsSpec::AtMostOnce => "at most once",
        EffectsSpec::AtLeastOnce => "at least once",
    };
    let counted = ctx
        .trace
        .effects
        .iter()
        .filter(|e| !ctx.is_dead_letter(ctx.trace.name(e.endpoint)))
        .count();
    // A call that failed without a request reaching an endpoint (refused connections) has
    // no effect and is "at most once" trivially: with no request at all, nothing was judged.
    let received: usize = ctx
        .ledgers
        .iter()
        .filter(|(endpoint, _)| !ctx.is_dead_letter(endpoint))
        .map(|(_, ledger)| ledger.requests.len())
        .sum();
    let verdict = verdict_on(
        "effects",
        received,
        || "no request reached an endpoint, so no effect could be committed or judged".to_owned(),
        problems,
        || {
            format!(
                "{counted} effects over {} calls: {name}",
                ctx.trace.calls.len()
            )
        },
    );
    ctx.unless_unsettled(verdict)
}
