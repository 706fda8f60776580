//! `conforms_to: { <policy>: { params } }`: every call's attempts fall within what the
//! policy allows any correct client to do, its timing bounds widened by the tolerance on
//! both sides (and the two findings that need exact instants, a delay pinned at a bound and
//! the nominal schedule, not made under one).

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Ctx, verdict_on};
use crate::policy::nominal::Nominal;
use crate::policy::{
    AttemptView, ClientHistory, Conformance, RetryAfterValue, ViolationKind, fold_transparent,
};
use crate::report::{Finding, Verdict};
use crate::scenario::{ClientSpec, PolicySpec};
use crate::scenario::{DedupeAnswerSpec, EndpointSpec, ThrottlePreset, WhenEmptySpec};
use crate::scenario::{RetryAfterSpec, StepSpec, TimelineStep};
use crate::trace::AttemptOutcome;
use retrylab_endpoints::wire::attempt_tag;
use retrylab_endpoints::{Branch, DedupeOutcome, RateLimit, RequestRecord};

/// `max_attempts` left out of `conforms_to` means the attempt count is not judged (only the
/// delays and what is retried): a client may stop early or go on, as the format's example
/// expects `attempts: 4` beside a `conforms_to` without a count.
fn with_open_count(spec: &PolicySpec) -> (PolicySpec, bool) {
    let mut spec = spec.clone();
    let open = match &mut spec {
        ClientSpec::Fixed(p) => p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX,
        ClientSpec::Exponential(p) => p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX,
        ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => {
            p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX
        }
        ClientSpec::GrpcConnectionBackoff(p) => p.max_attempts.get_or_insert(u32::MAX) == &u32::MAX,
        _ => false,
    };
    (spec, open)
}

/// The response an endpoint step wrote, as the scenario scripted it: its headers (with the
/// `Retry-After` the step renders) and body. Policies that read more than the status (AWS
/// error codes, `x-amz-retry-after`, gRPC pushback) judge attempts on these.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Answer {
    /// Header names lowercased, values as scripted.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

/// The scripted answers by attempt id, from the endpoints' ledgers: each request names its
/// attempt (a header the harness surfaces add), its route and the step that ran.
pub(super) fn answers<'a>(ctx: &Ctx<'a>) -> BTreeMap<u32, Answer> {
    let mut out = BTreeMap::new();
    for (name, ledger) in ctx.ledgers {
        let Some(endpoint) = ctx.scenario.endpoints.get(name) else {
            continue;
        };
        // Routes as the plan builds them: a bare `script:` or `timeline:` first, then
        // `routes:` in order; a timeline's steps are indexed as written.
        let steps_of =
            |script: &'a Option<Vec<StepSpec>>, timeline: &Option<Vec<TimelineStep>>| match (
                script, timeline,
            ) {
                (Some(script), _) => Cow::Borrowed(script.as_slice()),
                (None, Some(timeline)) => {
                    Cow::Owned(timeline.iter().map(TimelineStep::as_step).collect())
                }
                (None, None) => Cow::Borrowed(&[][..]),
            };
        let mut scripts: Vec<Cow<'a, [StepSpec]>> = Vec::new();
        if endpoint.script.is_some() || endpoint.timeline.is_some() {
            scripts.push(steps_of(&endpoint.script, &endpoint.timeline));
        }
        for route in &endpoint.routes {
            scripts.push(steps_of(&route.script, &route.timeline));
        }
        let limited = limiter_answer(endpoint);
        for request in &ledger.requests {
            let Some(attempt) = attempt_tag(&request.headers) else {
                continue;
            };
            // A request the rate limiter answered reached no step: its answer is the
            // limiter's.
            if ledger.rate_limited.binary_search(&request.id).is_ok() {
                if let Some(answer) = &limited {
                    out.insert(attempt, answer.clone());
                }
                continue;
            }
            let step_of = |request: &RequestRecord| {
                request
                    .route
                    .zip(request.step)
                    .and_then(|(route, step)| scripts.get(route)?.get(step))
                    .map(|step| {
                        // A random step answered with the branches it took.
                        request.branches.iter().fold(step, |step, branch| {
                            let next = match branch {
                                Branch::Then => step.then.as_deref(),
                                Branch::Else => step.r#else.as_deref(),
                            };
                            next.unwrap_or(step)
                        })
                    })
            };
            // Dedupe answers without a step: with its own responses, or the replayed
            // response of the step that sent it.
            let dedupe = endpoint.dedupe.as_ref();
            let answer = match request.dedupe {
                DedupeOutcome::InFlight { .. } => dedupe.map(|d| dedupe_answer(&d.in_flight)),
                DedupeOutcome::Mismatch { .. } => dedupe.map(|d| dedupe_answer(&d.mismatch)),
                DedupeOutcome::Replay { of } => {
                    ledger.request(of).and_then(step_of).map(scripted_answer)
                }
                DedupeOutcome::NotApplied
                | DedupeOutcome::First
                | DedupeOutcome::AfterCommit { .. } => step_of(request).map(scripted_answer),
            };
            if let Some(answer) = answer {
                out.insert(attempt, answer);
            }
        }
    }
    out
}

/// Dedupe's in-flight or mismatch answer, as written: a bare status has no headers or body.
fn dedupe_answer(spec: &DedupeAnswerSpec) -> Answer {
    match spec {
        DedupeAnswerSpec::Status(_) => Answer {
            headers: Vec::new(),
            body: Vec::new(),
        },
        DedupeAnswerSpec::Step(step) => scripted_answer(step),
    }
}

/// Headers the endpoint crate writes, as (name, value) text like a scenario's.
fn written(headers: &[(http::HeaderName, http::HeaderValue)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (n.as_str().to_owned(), value)
        })
        .collect()
}

/// The answer a scripted step writes: on a broker, an `error_code` step's is the error the
/// broker sends for that code, from the endpoint crate, the one place that writes it.
fn scripted_answer(step: &StepSpec) -> Answer {
    let broker_error = step
        .error_code
        .and_then(|code| u32::try_from(code).ok())
        .map(|code| retrylab_endpoints::Broker::error_code(code).respond);
    let mut headers = broker_error
        .as_ref()
        .map(|respond| written(&respond.headers))
        .unwrap_or_default();
    if let Some(h) = &step.headers {
        headers.extend(
            h.entries()
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.clone())),
        );
    }
    if let Some(RetryAfterSpec::Seconds(s)) = &step.retry_after {
        headers.push(("retry-after".to_owned(), s.to_string()));
    }
    // A gRPC answer's status fields, wherever they travelled (trailers, or a trailers-only
    // head): a gRPC client reads its status from either, and the policies from these.
    if let Some(status) = step.grpc {
        headers.push(("grpc-status".to_owned(), status.code().code().to_string()));
        if let Some(message) = &step.message {
            headers.push(("grpc-message".to_owned(), message.clone()));
        }
        if let Some(pushback) = &step.pushback {
            headers.push(("grpc-retry-pushback-ms".to_owned(), pushback.value()));
        }
    }
    let body = match broker_error {
        Some(respond) => respond.body.to_vec(),
        None => step.body.clone().unwrap_or_default().into_bytes(),
    };
    Answer { headers, body }
}

/// What a `rate_limiter` (or a `broker`'s flow control) answers a request that finds its
/// bucket empty, as written (the `Retry-After` it computes is in the trace): a preset's
/// headers and body, or the step's. `None` for an endpoint without a bucket.
fn limiter_answer(endpoint: &EndpointSpec) -> Option<Answer> {
    if !endpoint.has_bucket() {
        return None;
    }
    let preset = |limit: RateLimit| {
        let respond = limit.when_empty;
        Answer {
            headers: written(&respond.headers),
            body: respond.body.to_vec(),
        }
    };
    // The presets' bytes come from the endpoint crate, the one place that sends them; the
    // rate does not change them.
    Some(match &endpoint.when_empty {
        None => Answer {
            headers: Vec::new(),
            body: Vec::new(),
        },
        Some(WhenEmptySpec::Preset(ThrottlePreset::AwsThrottling)) => {
            preset(RateLimit::per_second(1).aws_throttling())
        }
        Some(WhenEmptySpec::Preset(ThrottlePreset::RocketmqThrottled)) => {
            preset(RateLimit::per_second(1).rocketmq_throttled())
        }
        Some(WhenEmptySpec::Step(step)) => scripted_answer(step),
    })
}

pub(super) fn check(ctx: &Ctx<'_>, spec: &PolicySpec) -> Verdict {
    let answers = answers(ctx);
    let (spec, open_count) = with_open_count(spec);
    let spec = &spec;
    let policy = match spec.policy() {
        Ok(policy) => policy,
        Err(why) => return Verdict::fail("conforms_to", why.to_string()),
    };
    let name = policy.name();
    let tolerance = ctx.tolerance.ms();
    // A jittered policy also flags a client whose jitter is off; under a tolerance instants
    // are not exact, so a match means nothing.
    let mut nominal = spec
        .without_jitter()
        .filter(|_| tolerance == 0)
        .and_then(|plain| plain.policy().ok())
        .map(|plain| Nominal::new(policy.clone_box(), plain));
    let mut problems = Vec::new();
    let mut judged = 0;
    for (client, calls) in by_client(ctx) {
        let (mut conformance, views) = match client_check(ctx, spec, &answers, client, &calls) {
            Ok(checked) => checked,
            Err(why) => return Verdict::fail("conforms_to", why),
        };
        judged += views.iter().map(Vec::len).sum::<usize>();
        let attempts: Vec<&[AttemptView]> = views.iter().map(Vec::as_slice).collect();
        if let Some(nominal) = &mut nominal {
            let names: Vec<String> = calls.iter().map(|&c| ctx.call_name(client, c)).collect();
            let observed: Vec<(ClientHistory, &str, &[AttemptView])> = calls
                .iter()
                .zip(&names)
                .zip(&attempts)
                .map(|((&call, name), attempts)| {
                    let history = ClientHistory {
                        client_index: client,
                        call_index: call,
                        attempts_before: 0,
                    };
                    (history, name.as_str(), *attempts)
                })
                .collect();
            nominal.next_client();
            nominal.observe_calls(&observed);
        }
        for (&call, violations) in calls.iter().zip(conformance.check_calls(&attempts)) {
            for violation in violations {
                if open_count && violation.kind == ViolationKind::StoppedEarly {
                    continue;
                }
                problems.push((
                    violation.kind,
                    Finding::call(
                        client,
                        call,
                        format!("{}: {}", ctx.call_name(client, call), violation.message),
                    )
                    .attempt(violation.attempt),
                ));
            }
        }
    }
    if let Some(finding) = nominal.as_ref().and_then(Nominal::finding) {
        // Every delay on its nominal instant pins the full and equal jitters' windows at
        // their top: the finding says it once for the run.
        problems.retain(|(kind, _)| *kind != ViolationKind::PinnedAtBound);
        problems.push((ViolationKind::PinnedAtBound, Finding::from(finding)));
    }
    let problems: Vec<Finding> = problems.into_iter().map(|(_, finding)| finding).collect();
    verdict_on(
        "conforms_to",
        judged,
        || format!("no attempt ended with a response or an error to judge against {name}"),
        problems,
        || {
            format!(
                "{judged} attempts conform to {name}{}",
                ctx.tolerance.either_way()
            )
        },
    )
}

/// Retry windows by call: (client, call, window).
#[cfg(feature = "plot")]
pub(crate) type CallWindows = Vec<(u32, u32, crate::policy::RetryWindow)>;

/// The windows `spec` allows each retry of each call in, as (client, call, window), judged
/// on the same views of the attempts as [`check`]: what a plot shades.
#[cfg(feature = "plot")]
pub(crate) fn windows(ctx: &Ctx<'_>, spec: &PolicySpec) -> Result<CallWindows, String> {
    let answers = answers(ctx);
    let (spec, _) = with_open_count(spec);
    let mut out = Vec::new();
    for (client, calls) in by_client(ctx) {
        let (mut conformance, views) = client_check(ctx, &spec, &answers, client, &calls)?;
        let attempts: Vec<&[AttemptView]> = views.iter().map(Vec::as_slice).collect();
        for (&call, windows) in calls.iter().zip(conformance.windows_of_calls(&attempts)) {
            out.extend(windows.into_iter().map(|w| (client, call, w)));
        }
    }
    Ok(out)
}

/// A checker for one client of the run, with a policy of its own (each client of a fleet
/// has its own policy state, a quota or a rate, as separate processes would; the calls of one
/// client share it), and the views of its `calls`' attempts.
fn client_check(
    ctx: &Ctx<'_>,
    spec: &PolicySpec,
    answers: &BTreeMap<u32, Answer>,
    client: u32,
    calls: &[u32],
) -> Result<(Conformance, Vec<Vec<AttemptView>>), String> {
    let policy = spec.policy().map_err(|why| why.to_string())?;
    let conformance = Conformance::new(policy)
        .with_tolerance_ms(ctx.tolerance.ms())
        .with_attempt_timeout_ms(spec.attempt_timeout().map(|t| t.as_ms()))
        .with_client(ClientHistory {
            client_index: client,
            call_index: 0,
            attempts_before: 0,
        });
    let views = calls
        .iter()
        .map(|&call| views_of(ctx, answers, &conformance, client, call))
        .collect();
    Ok((conformance, views))
}

/// The calls of each client, clients in index order and each one's calls in the order the
/// trace lists them.
fn by_client(ctx: &Ctx<'_>) -> BTreeMap<u32, Vec<u32>> {
    let mut out: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (client, call) in ctx.calls() {
        out.entry(client).or_default().push(call);
    }
    out
}

/// The attempts of one call as the policy sees them: those that ended, with their
/// `Retry-After`, the scripted answer's headers and the policy's error code; a transparent
/// retry (a request the server never processed, [`fold_transparent`]) is no attempt of the
/// policy's.
fn views_of(
    ctx: &Ctx<'_>,
    answers: &BTreeMap<u32, Answer>,
    conformance: &Conformance,
    client: u32,
    call: u32,
) -> Vec<AttemptView> {
    let attempts = ctx.attempts_of(client, call);
    let views = attempts.iter().filter_map(|a| {
        // A body that broke after the head is what the client saw last: a transport error,
        // as the reference client tells its policy.
        let outcome = match a.body_error.and_then(AttemptOutcome::observed) {
            Some(broke) => broke,
            None => a.outcome.observed()?,
        };
        let end = a.end_ms?;
        let at = a.head_ms.unwrap_or(end);
        let mut view = AttemptView::new(a.n, outcome, a.start_ms, a.head_ms, end)
            .with_system_ms(ctx.epoch_unix_ms as i64 + at as i64);
        if let Some(raw) = a.retry_after {
            view = view.with_retry_after(RetryAfterValue::parse(ctx.trace.name(raw)));
        }
        let answer = answers.get(&a.id);
        if answer.is_none() {
            // A request with no attempt tag (a command client's: only the harness's own
            // surfaces add one) matched no scripted answer, but the trace kept what a gRPC
            // answer said: without it the policy would read a trailers-only UNAVAILABLE as
            // the HTTP 200 it travels in, a success.
            if let Some(grpc) = a.grpc {
                view = view.with_header("grpc-status", &grpc.code.to_string());
                if let Some(raw) = grpc.pushback {
                    view = view.with_header("grpc-retry-pushback-ms", ctx.trace.name(raw));
                }
            }
        }
        if let Some(answer) = answer {
            for (name, value) in &answer.headers {
                if name != "retry-after" {
                    view = view.with_header(name, value);
                }
            }
            if let Some(status) = a.outcome.status() {
                let code = conformance
                    .policy()
                    .error_code(status, &answer.headers, &answer.body);
                if let Some(code) = code {
                    view = view.with_error_code(&code);
                }
            }
        }
        Some((a.outcome.is_unprocessed(), view))
    });
    fold_transparent(views)
}
