//! `outcome`, `outcomes` and `stop_reason`: how calls ended.

use super::{Ctx, verdict, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::{Outcome, StopReason};
use crate::trace::{Call, CallResult, DecisionKind};

fn outcome_of(result: &CallResult) -> Outcome {
    match result {
        CallResult::Success(_) => Outcome::Success,
        CallResult::Failure(_) => Outcome::Failure,
        // A call that panicked never returned.
        CallResult::Stopped | CallResult::Panicked(_) => Outcome::Stopped,
    }
}

fn describe(result: &CallResult) -> String {
    match result {
        CallResult::Success(v) => format!("success: Ok({v})"),
        CallResult::Failure(e) => format!("failure: Err({e})"),
        CallResult::Stopped => "stopped (the run ended before it returned)".to_owned(),
        CallResult::Panicked(message) => format!("a panic ({message})"),
    }
}

/// `call 0 ended in failure: Err(..), expected success`, about that call.
fn mismatch(ctx: &Ctx<'_>, call: &Call, expected: Outcome) -> Finding {
    Finding::call(
        call.client_id,
        call.call_id,
        format!(
            "{} ended in {}, expected {}",
            ctx.call_name(call.client_id, call.call_id),
            describe(&call.result),
            expected.as_str()
        ),
    )
}

/// `outcome:` applies to every call.
pub(super) fn outcome(ctx: &Ctx<'_>, expected: Outcome) -> Verdict {
    let problems = ctx
        .trace
        .calls
        .iter()
        .filter(|c| outcome_of(&c.result) != expected)
        .map(|c| mismatch(ctx, c, expected))
        .collect();
    // No call, no outcome: "every call ended in success" over none would pass on nothing.
    verdict_on(
        "outcome",
        ctx.trace.calls.len(),
        || "no call was made".to_owned(),
        problems,
        || format!("every call ended in {}", expected.as_str()),
    )
}

/// `outcomes: [...]`: one per call, in call order.
pub(super) fn outcomes(ctx: &Ctx<'_>, expected: &[Outcome]) -> Verdict {
    let mut problems = Vec::new();
    if expected.len() != ctx.trace.calls.len() {
        problems.push(Finding::from(format!(
            "{} outcomes listed for {} calls",
            expected.len(),
            ctx.trace.calls.len()
        )));
    }
    for (call, want) in ctx.trace.calls.iter().zip(expected) {
        if outcome_of(&call.result) != *want {
            problems.push(mismatch(ctx, call, *want));
        }
    }
    verdict("outcomes", problems, || {
        "every call ended as listed".to_owned()
    })
}

/// `stop_reason:` is what the reference client decided after each call's last attempt.
pub(super) fn stop_reason(ctx: &Ctx<'_>, expected: StopReason) -> Verdict {
    let want = expected;
    let mut problems = Vec::new();
    for (client, call) in ctx.calls() {
        let last = ctx.attempts_of(client, call).last().map(|a| a.id);
        let decision = last.and_then(|id| ctx.index.decision(id));
        match decision.map(|d| d.kind) {
            Some(DecisionKind::Stop(reason)) if reason == want => {}
            Some(DecisionKind::Stop(reason)) => problems.push(Finding::call(
                client,
                call,
                format!(
                    "{} stopped with {reason}, expected {want}",
                    ctx.call_name(client, call)
                ),
            )),
            Some(DecisionKind::Retry { .. }) => problems.push(Finding::call(
                client,
                call,
                format!(
                    "{} decided to retry after its last attempt (the run ended first)",
                    ctx.call_name(client, call)
                ),
            )),
            None => problems.push(Finding::call(
                client,
                call,
                format!(
                    "{} has no recorded decision: stop_reason applies to the built-in clients \
                 (`client:` policies), which record why they stopped",
                    ctx.call_name(client, call)
                ),
            )),
        }
    }
    verdict("stop_reason", problems, || {
        format!("every call stopped with {want}")
    })
}
