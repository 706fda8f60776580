//! `conforms_to: { <policy>: { params } }`: every call's attempts fall within what the
//! policy allows any correct client to do.

use super::{verdict, Ctx};
use crate::policy::{
    from_spec, AttemptView, ClientHistory, Conformance, Observed, RetryAfterValue, ViolationKind,
};
use crate::report::Verdict;
use crate::scenario::{ClientSpec, PolicySpec};

/// `max_attempts` left out of `conforms_to` means the attempt count is not judged (only the
/// delays and what is retried): a client may stop early or go on, as DESIGN's example
/// expects `attempts: 4` beside a `conforms_to` without a count.
fn with_open_count(spec: &PolicySpec) -> (PolicySpec, bool) {
    let mut spec = spec.clone();
    let open = match &mut spec {
        ClientSpec::Fixed(p) => p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX,
        ClientSpec::Exponential(p) => p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX,
        ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => {
            p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX
        }
        _ => false,
    };
    (spec, open)
}

pub(super) fn check(ctx: &Ctx<'_>, spec: &PolicySpec) -> Verdict {
    let (spec, open_count) = with_open_count(spec);
    let spec = &spec;
    let policy = match from_spec(spec) {
        Ok(policy) => policy,
        Err(why) => return Verdict::fail("conforms_to", why),
    };
    let name = policy.name();
    let tolerance = ctx.scenario.tolerance.map_or(0, |t| t.as_ms());
    let mut conformance = Conformance::new(policy).with_tolerance_ms(tolerance);
    let mut problems = Vec::new();
    let mut judged = 0;
    for (client, call) in ctx.calls() {
        let views: Vec<AttemptView> = ctx
            .attempts_of(client, call)
            .iter()
            .filter_map(|a| {
                let outcome = Observed::from_trace(a.outcome)?;
                let end = a.end_ms?;
                let at = a.head_ms.unwrap_or(end);
                let mut view = AttemptView::new(a.n, outcome, a.start_ms, a.head_ms, end)
                    .with_system_ms(ctx.epoch_unix_ms as i64 + at as i64);
                if let Some(raw) = a.retry_after {
                    view = view.with_retry_after(RetryAfterValue::parse(ctx.trace.name(raw)));
                }
                Some(view)
            })
            .collect();
        judged += views.len();
        conformance = conformance.with_client(ClientHistory {
            client_index: client,
            call_index: call,
            attempts_before: 0,
        });
        for violation in conformance.check_call(&views) {
            if open_count && violation.kind == ViolationKind::StoppedEarly {
                continue;
            }
            problems.push(format!(
                "{}: {}",
                ctx.call_name(client, call),
                violation.message
            ));
        }
    }
    verdict("conforms_to", problems, || {
        format!("{judged} attempts conform to {name}")
    })
}
