//! An endpoint of the plan: its scenario spec converted to the endpoint's configuration
//! (routes, steps and their latencies, connect schedule, keep-alive, dedupe, rate limits),
//! every conversion through the functions validation calls, every error kept.

use std::time::Duration;

use http::{HeaderName, HeaderValue, Method};
use retrylab_endpoints::{
    Broker, Commit, ConnectStep, Dedupe, Draws, EndpointConfig, Fail, GrpcReply, HttpDateFormat,
    KeepAlive, LatencyDistribution, LimitScope, RateLimit, Respond, RetryAfter, Route, Scope, Step,
    Window,
};

use super::labels::{draws_label, latency_draws_label};
use crate::scenario::model::grpc::decode_reply;
use crate::scenario::{
    CommitSpec, DateFormat, DedupeAnswerSpec, EndpointKind, EndpointSpec, FailSpec, GrpcStatusSpec,
    HeadersSpec, LatencySpec, PushbackSpec, RetryAfterSpec, RouteSpec, Scenario, ScenarioError,
    ScriptScope, StepSpec, ThrottlePreset, TimelineStep, WhenEmptySpec, millitokens,
};

/// Where a `kind: dead_letter` endpoint takes messages.
const DEAD_LETTER_PATH: &str = "/dead-letters";

/// The value of `converted`, or its error kept in `errors`.
pub(super) fn keep<T>(
    converted: Result<T, Box<ScenarioError>>,
    errors: &mut Vec<ScenarioError>,
) -> Option<T> {
    converted.map_err(|e| errors.push(*e)).ok()
}

/// A latency: fixed, or the distribution each request (step) or segment (network) draws
/// from. A step's runs on both backends (the endpoint draws it); the real backend refuses
/// network latency of any kind.
pub(super) fn step_latency(latency: &LatencySpec) -> Result<Duration, LatencyDistribution> {
    match latency {
        LatencySpec::Fixed(d) => Ok(d.as_duration()),
        LatencySpec::Uniform(r) => Err(LatencyDistribution::Uniform {
            low_ms: r.min.as_ms(),
            high_ms: r.max.as_ms(),
        }),
        LatencySpec::Lognormal(l) => Err(LatencyDistribution::Lognormal {
            median_ms: l.median.as_ms(),
            sigma: l.sigma,
            max_ms: l.max.map(|m| m.as_ms()),
        }),
        LatencySpec::Exponential(e) => Err(LatencyDistribution::Exponential {
            mean_ms: e.mean.as_ms(),
            max_ms: e.max.map(|m| m.as_ms()),
        }),
    }
}

pub(super) fn header_map(
    scenario: &Scenario,
    path: &str,
    headers: &HeadersSpec,
    errors: &mut Vec<ScenarioError>,
) -> Vec<(HeaderName, HeaderValue)> {
    let (converted, problems) = scenario.headers_at(path, headers);
    errors.extend(problems);
    converted
}

pub(super) fn endpoint_config(
    scenario: &Scenario,
    path: &str,
    name: &str,
    spec: &EndpointSpec,
    key_header: Option<&HeaderName>,
    errors: &mut Vec<ScenarioError>,
) -> EndpointConfig {
    let mut config = EndpointConfig::http(name).protocol(spec.protocol);
    if spec.kind == EndpointKind::DeadLetter {
        // A dead-letter store: records what is posted to it (each post is an effect, so the
        // ledger keeps its body) and answers 404 to anything else.
        return config.route(
            Route::any()
                .method(Method::POST)
                .path(DEAD_LETTER_PATH)
                .script([Step::status(201).commit(Commit::Arrival)]),
        );
    }
    if let Some(script) = &spec.script {
        let steps = steps(scenario, &format!("{path}.script"), script, errors);
        config = config.route(Route::any().script(steps).scope(scope(spec.scope)));
    } else if let Some(timeline) = &spec.timeline {
        let windows = timeline_windows(scenario, &format!("{path}.timeline"), timeline, errors);
        config = config.timeline(windows);
    } else if spec.routes.is_empty() {
        // An endpoint with neither `script` nor `routes` answers 200 to everything: an empty
        // script's only step.
        config = config.route(Route::any().scope(scope(spec.scope)));
    }
    for (i, route) in spec.routes.iter().enumerate() {
        let built = route_config(scenario, &format!("{path}.routes[{i}]"), route, errors);
        config = config.route(built);
    }
    if !spec.connect.is_empty() {
        config = config.connect(spec.connect.iter().map(|step| {
            let built = ConnectStep::new(step.action);
            match (step.times, step.until) {
                (_, Some(at)) => built.until_ms(at.as_ms()),
                (Some(n), None) => built.times(n),
                (None, None) => built,
            }
        }));
    }
    if let Some(max) = spec.max_concurrent_streams {
        config = config.max_concurrent_streams(max);
    }
    if let Some(keep_alive) = &spec.keep_alive {
        let mut built = KeepAlive::default();
        if let Some(idle) = keep_alive.idle_timeout.millis() {
            built = built.idle_timeout(idle.as_duration());
        }
        if let Some(n) = keep_alive.max_requests {
            built = built.max_requests(n);
        }
        config = config.keep_alive(built);
    }
    if let Some(dedupe) = &spec.dedupe {
        let header = scenario.header_name_at(&format!("{path}.dedupe.header"), &dedupe.header);
        if let Some(header) = keep(header, errors) {
            let mut built = Dedupe::header(header)
                .in_flight(dedupe_answer(
                    scenario,
                    &format!("{path}.dedupe.in_flight"),
                    &dedupe.in_flight,
                    errors,
                ))
                .mismatch(dedupe_answer(
                    scenario,
                    &format!("{path}.dedupe.mismatch"),
                    &dedupe.mismatch,
                    errors,
                ));
            if let Some(ttl) = dedupe.ttl.millis() {
                built = built.ttl(ttl.as_duration());
            }
            config = config.dedupe(built);
        }
    }
    if let Some(header) = key_header {
        config = config.key_header(header.clone());
    }
    if spec.has_bucket() {
        if let Some(limit) = rate_limit(scenario, path, spec, errors) {
            config = config.rate_limit(limit);
        }
    }
    if spec.kind == EndpointKind::Broker {
        config = config.broker(Broker::new().topics(spec.topics.iter().cloned()));
    }
    config
}

/// A route of an endpoint: its match (method, path, headers) and its script or timeline.
fn route_config(
    scenario: &Scenario,
    route_path: &str,
    route: &RouteSpec,
    errors: &mut Vec<ScenarioError>,
) -> Route {
    let mut built = Route::any().scope(scope(route.scope));
    if let Some(method) = &route.r#match.method {
        let method = scenario.method_at(&format!("{route_path}.match.method"), method);
        if let Some(m) = keep(method, errors) {
            built = built.method(m);
        }
    }
    if let Some(p) = &route.r#match.path {
        built = built.path(p.clone());
    }
    if let Some(headers) = &route.r#match.headers {
        for (n, v) in header_map(
            scenario,
            &format!("{route_path}.match.headers"),
            headers,
            errors,
        ) {
            built = built.header(n, v);
        }
    }
    if let Some(script) = &route.script {
        built = built.script(steps(
            scenario,
            &format!("{route_path}.script"),
            script,
            errors,
        ));
    }
    if let Some(timeline) = &route.timeline {
        built = built.timeline(timeline_windows(
            scenario,
            &format!("{route_path}.timeline"),
            timeline,
            errors,
        ));
    }
    built
}

/// Dedupe's answer to a key in flight or reused with another body, as the endpoint sends it.
fn dedupe_answer(
    scenario: &Scenario,
    path: &str,
    spec: &DedupeAnswerSpec,
    errors: &mut Vec<ScenarioError>,
) -> Respond {
    match spec {
        DedupeAnswerSpec::Status(status) => Step::status(*status).respond,
        DedupeAnswerSpec::Step(step_spec) => step(scenario, path, step_spec, errors).respond,
    }
}

/// A `rate_limiter`'s bucket, or a `broker`'s flow control. Validation has checked `rate` and `burst`; a value it let
/// through that the bucket cannot count is an error here too, never a guess.
fn rate_limit(
    scenario: &Scenario,
    path: &str,
    spec: &EndpointSpec,
    errors: &mut Vec<ScenarioError>,
) -> Option<RateLimit> {
    let Some(rate) = spec.rate.and_then(millitokens) else {
        errors.push(scenario.error_at_key(
            &format!("{path}.rate"),
            "a rate limiter needs a `rate` in thousandths of a token per second, above 0",
        ));
        return None;
    };
    let burst = spec.burst.unwrap_or(1);
    if burst == 0 {
        errors.push(scenario.error_at_key(
            &format!("{path}.burst"),
            "a rate limiter's `burst` must be at least 1",
        ));
        return None;
    }
    let mut limit = RateLimit::millitokens_per_second(rate).burst(burst);
    if spec.scope == ScriptScope::Client {
        limit = limit.scope(LimitScope::Client);
    }
    Some(match &spec.when_empty {
        None => limit,
        Some(WhenEmptySpec::Preset(ThrottlePreset::AwsThrottling)) => limit.aws_throttling(),
        Some(WhenEmptySpec::Preset(ThrottlePreset::RocketmqThrottled)) => {
            limit.rocketmq_throttled()
        }
        Some(WhenEmptySpec::Step(step_spec)) => {
            let built = step(scenario, &format!("{path}.when_empty"), step_spec, errors);
            limit.when_empty(built.respond)
        }
    })
}

/// Gives each route with a random step, or a sampled latency, its own substreams of the
/// run's seed, made afresh for each endpoint built from the configuration.
pub(super) fn with_draws(mut config: EndpointConfig, seed: u64) -> EndpointConfig {
    fn stream(seed: u64, label: String) -> Draws {
        Draws::new(move || Box::new(crate::rng::Stream::new(seed, &label)))
    }
    for (i, route) in config.routes.iter_mut().enumerate() {
        let steps = || {
            route
                .script
                .iter()
                .chain(route.timeline.iter().map(|w| &w.step))
        };
        if steps().any(|s| s.chance.is_some()) {
            route.draws = Some(stream(seed, draws_label(&config.name, i)));
        }
        if steps().any(sampled) {
            route.latency_draws = Some(stream(seed, latency_draws_label(&config.name, i)));
        }
    }
    config
}

/// Whether `step`, or a branch it may take, draws its latency.
fn sampled(step: &Step) -> bool {
    step.latency_distribution.is_some()
        || step
            .chance
            .as_ref()
            .is_some_and(|c| sampled(&c.then) || sampled(&c.otherwise))
}

fn scope(scope: ScriptScope) -> Scope {
    match scope {
        ScriptScope::Endpoint => Scope::Endpoint,
        ScriptScope::Connection => Scope::Connection,
        ScriptScope::Client => Scope::Client,
        ScriptScope::Key => Scope::Key,
    }
}

fn steps(
    scenario: &Scenario,
    path: &str,
    specs: &[StepSpec],
    errors: &mut Vec<ScenarioError>,
) -> Vec<Step> {
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| step(scenario, &format!("{path}[{i}]"), spec, errors))
        .collect()
}

/// A `timeline:` as windows: `during: [a, b]` holds the instants from `a` up to, not
/// including, `b`.
fn timeline_windows(
    scenario: &Scenario,
    path: &str,
    specs: &[TimelineStep],
    errors: &mut Vec<ScenarioError>,
) -> Vec<Window> {
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let during = spec.during.min.as_duration()..spec.during.max.as_duration();
            let built = step(scenario, &format!("{path}[{i}]"), &spec.as_step(), errors);
            Window::new(during, built)
        })
        .collect()
}

fn step(scenario: &Scenario, path: &str, spec: &StepSpec, errors: &mut Vec<ScenarioError>) -> Step {
    if let (Some(p), Some(then), Some(otherwise)) = (spec.p, &spec.then, &spec.r#else) {
        // `times` is the random step's own; everything else belongs to its branches.
        let then = step(scenario, &format!("{path}.then"), then, errors);
        let otherwise = step(scenario, &format!("{path}.else"), otherwise, errors);
        let built = Step::chance(p.value(), then, otherwise);
        return match spec.times {
            Some(times) => built.times(times),
            None => built,
        };
    }
    let mut built = match (spec.status, spec.error_code) {
        (Some(status), _) => Step::status(status),
        // Validation keeps `error_code` to brokers, within a broker's codes.
        (None, Some(code)) => match u32::try_from(code) {
            Ok(code) => Broker::error_code(code),
            Err(_) => {
                errors.push(scenario.error_at_key(
                    &format!("{path}.error_code"),
                    format!("error code {code} is not a broker error code"),
                ));
                Step::status(500)
            }
        },
        (None, None) => match spec.grpc {
            Some(status) => Step::grpc(grpc_reply(scenario, path, spec, status, errors)),
            None => Step::status(200),
        },
    };
    if let Some(fail) = &spec.fail {
        let fail = match fail {
            FailSpec::Close { after_bytes: None } => Fail::Close,
            FailSpec::Reset { after_bytes: None } => Fail::Reset,
            FailSpec::Hang => Fail::Hang,
            FailSpec::RstStream { code, body_bytes } => Fail::RstStream {
                code: *code,
                body_bytes: *body_bytes,
            },
            FailSpec::GoAway { code } => Fail::GoAway { code: *code },
            FailSpec::Close {
                after_bytes: Some(bytes),
            } => Fail::CloseAfter { bytes: *bytes },
            FailSpec::Reset {
                after_bytes: Some(bytes),
            } => Fail::ResetAfter { bytes: *bytes },
        };
        built = built.fail_with(fail);
    }
    if let Some(headers) = &spec.headers {
        for (n, v) in header_map(scenario, &format!("{path}.headers"), headers, errors) {
            built = built.header(n, v);
        }
    }
    if let Some(body) = &spec.body {
        built = built.body(body.clone());
    }
    if let Some(retry_after) = &spec.retry_after {
        built = built.retry_after(match retry_after {
            RetryAfterSpec::Seconds(s) => RetryAfter::seconds(*s),
            RetryAfterSpec::Raw(raw) => RetryAfter::raw(raw.clone()),
            RetryAfterSpec::HttpDate { offset, format } => {
                let format = match format {
                    DateFormat::Imf => HttpDateFormat::Imf,
                    DateFormat::Rfc850 => HttpDateFormat::Rfc850,
                    DateFormat::Asctime => HttpDateFormat::Asctime,
                };
                let after = scenario.http_date_offset(&format!("{path}.retry_after"), *offset);
                let after = keep(after, errors).unwrap_or_default();
                RetryAfter::http_date(after.as_duration()).format(format)
            }
        });
    }
    if let Some(latency) = &spec.latency {
        built = match step_latency(latency) {
            Ok(fixed) => built.latency(fixed),
            Err(distribution) => built.latency_sampled(distribution),
        };
    }
    if let Some(trickle) = spec.trickle {
        built = built.trickle(trickle.as_duration());
    }
    if let Some(times) = spec.times {
        built = built.times(times);
    }
    if let Some(commit) = spec.commit {
        built = built.commit(match commit {
            CommitSpec::Arrival => Commit::Arrival,
            CommitSpec::BeforeResponse => Commit::BeforeResponse,
            CommitSpec::Never => Commit::Never,
        });
    }
    built
}

/// A `grpc` step's answer. Validation has checked `reply` and a raw `pushback`; a value it
/// let through that cannot be sent is an error here too, never a guess.
fn grpc_reply(
    scenario: &Scenario,
    path: &str,
    spec: &StepSpec,
    status: GrpcStatusSpec,
    errors: &mut Vec<ScenarioError>,
) -> GrpcReply {
    let mut reply = GrpcReply::new(status.code());
    if let Some(message) = &spec.message {
        reply = reply.message(message.clone());
    }
    match &spec.pushback {
        Some(PushbackSpec::After(ms)) => reply = reply.pushback_ms(ms.as_ms()),
        Some(raw) => match HeaderValue::from_str(&raw.value()) {
            Ok(value) => reply = reply.pushback_raw(value),
            Err(_) => errors.push(scenario.error_at_key(
                &format!("{path}.pushback.raw"),
                "a pushback value must be one header line of visible text",
            )),
        },
        None => {}
    }
    if let Some(text) = &spec.reply {
        match decode_reply(text) {
            Ok(bytes) => reply = reply.reply(bytes),
            Err(e) => errors.push(scenario.error_at_key(
                &format!("{path}.reply"),
                format!("`reply` is not base64 ({e})"),
            )),
        }
    }
    reply
}
