//! A plan: a scenario resolved into exactly what one run needs (endpoint configurations,
//! latencies, the operation, limits), with every name checked and every default applied.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use retrylab_endpoints::{
    Commit, ConnectStep, Dedupe, EndpointConfig, Fail, HttpDateFormat, KeepAlive, RetryAfter,
    Route, Scope, Step,
};

use crate::env::Operation;
use crate::scenario::{
    CommitSpec, DateFormat, EndpointKind, EndpointSpec, FailSpec, FaultSpec, LatencySpec,
    RetryAfterSpec, Scenario, ScenarioError, ScenarioErrors, ScriptScope, StepSpec,
};

/// One endpoint of the run.
#[derive(Debug, Clone)]
pub(crate) struct PlannedEndpoint {
    pub(crate) name: String,
    pub(crate) config: EndpointConfig,
    /// One-way latency, each direction.
    pub(crate) latency: Duration,
}

/// A fault at a fixed virtual instant.
#[derive(Debug, Clone)]
pub(crate) enum PlannedFault {
    /// `network.faults: [{ at, partition, for }]`.
    Partition {
        at: Duration,
        endpoint: String,
        lasts: Duration,
    },
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) epoch_unix_ms: u64,
    pub(crate) default_latency: Duration,
    pub(crate) endpoints: Vec<PlannedEndpoint>,
    pub(crate) faults: Vec<PlannedFault>,
    pub(crate) operation: Operation,
    pub(crate) key_header: Option<HeaderName>,
    pub(crate) calls: u32,
    /// Calls in flight at once (`operation.concurrency`).
    pub(crate) concurrency: u32,
    pub(crate) max_virtual_time: Duration,
    pub(crate) max_attempts: Option<u64>,
    pub(crate) wall: Duration,
    pub(crate) drain: Duration,
    pub(crate) https_as_http: bool,
    /// The first `kind: dead_letter` endpoint, where built-in clients hand off messages they
    /// gave up on.
    pub(crate) dead_letter: Option<String>,
}

impl Plan {
    /// Resolves `scenario` for a run with `seed`, or explains, located, why it cannot run.
    pub(crate) fn from_scenario(scenario: &Scenario, seed: u64) -> Result<Plan, ScenarioErrors> {
        let mut errors = scenario.unsupported();
        let mut endpoints = Vec::with_capacity(scenario.endpoints.len());
        let default_latency = fixed_latency(
            scenario,
            "network.latency",
            &scenario.network.latency,
            &mut errors,
        );
        for (name, spec) in &scenario.endpoints {
            let path = format!("endpoints.{name}");
            let config = endpoint_config(scenario, &path, name, spec, &mut errors);
            let latency = match scenario.network.endpoint_latency.get(name) {
                Some(latency) => fixed_latency(
                    scenario,
                    &format!("network.endpoint_latency.{name}"),
                    latency,
                    &mut errors,
                ),
                None => default_latency,
            };
            endpoints.push(PlannedEndpoint {
                name: name.clone(),
                config,
                latency,
            });
        }
        let mut faults = Vec::new();
        for (i, fault) in scenario.network.faults.iter().enumerate() {
            if let FaultSpec::Partition {
                at,
                endpoint,
                r#for,
            } = fault
            {
                faults.push(PlannedFault::Partition {
                    at: at.as_duration(),
                    endpoint: endpoint.clone(),
                    lasts: r#for.as_duration(),
                });
            } else {
                errors.push(scenario.error_at_key(
                    &format!("network.faults[{i}]"),
                    format!("`{}` faults are not supported yet", fault.kind()),
                ));
            }
        }
        let operation = operation(scenario, &mut errors);
        let key_header =
            scenario.operation.idempotency_key.as_ref().and_then(
                |key| match HeaderName::from_bytes(key.header.as_bytes()) {
                    Ok(name) => Some(name),
                    Err(_) => {
                        errors.push(scenario.error_at(
                            "operation.idempotency_key.header",
                            format!("`{}` is not a valid header name", key.header),
                        ));
                        None
                    }
                },
            );
        if !errors.is_empty() {
            errors.sort_by_key(|e| (e.line, e.column));
            return Err(ScenarioErrors(errors));
        }
        let limits = &scenario.limits;
        let calls = u64::from(scenario.operation.calls.max(1));
        let (default_time, default_attempts) = match worst_case(&scenario.client) {
            Some((ms, attempts)) => (
                Duration::from_millis(ms.saturating_mul(2).saturating_mul(calls)),
                attempts.saturating_mul(2).saturating_mul(calls),
            ),
            None => (DEFAULT_MAX_VIRTUAL_TIME, DEFAULT_MAX_ATTEMPTS),
        };
        Ok(Plan {
            name: scenario.name.clone(),
            seed,
            epoch_unix_ms: epoch_unix_ms(scenario),
            default_latency,
            endpoints,
            faults,
            https_as_http: false,
            dead_letter: scenario
                .endpoints
                .iter()
                .find(|(_, e)| e.kind == EndpointKind::DeadLetter)
                .map(|(name, _)| name.clone()),
            operation,
            key_header,
            calls: scenario.operation.calls.max(1),
            concurrency: scenario.operation.concurrency.max(1),
            max_virtual_time: limits
                .max_virtual_time
                .map_or(default_time, |m| m.as_duration()),
            max_attempts: Some(limits.max_client_attempts.unwrap_or(default_attempts)),
            wall: limits.wall.map_or(DEFAULT_WALL, |m| m.as_duration()),
            drain: scenario.drain.as_duration(),
        })
    }
}

/// Where a `kind: dead_letter` endpoint takes messages.
pub(crate) const DEAD_LETTER_PATH: &str = "/dead-letters";

/// The worst case of one call of a built-in client (docs/scenario-format.md): the sum of the longest
/// delays its policy allows plus `max_attempts × attempt_timeout`, and its attempt count; or
/// `None` when unknown or unbounded (a custom client, no attempt timeout, no native count).
fn worst_case(client: &crate::scenario::ClientSpec) -> Option<(u64, u64)> {
    use crate::policy::{AttemptView, CallHistory, ClientHistory, Envelope, Observed};
    let timeout = client.attempt_timeout()?.as_ms();
    let policy = client.policy().ok()?;
    let attempts = policy.max_attempts()?;
    let client_history = ClientHistory::default();
    let mut previous: Vec<AttemptView> = Vec::new();
    let mut at = 0u64;
    let mut total = u64::from(attempts).saturating_mul(timeout);
    for n in 1..attempts {
        // Every attempt times out: the longest each one can take.
        at = at.saturating_add(timeout);
        let view = AttemptView::new(n, Observed::Timeout, at.saturating_sub(timeout), None, at);
        let envelope = policy.envelope(&view, &CallHistory::new(&previous, &client_history));
        match envelope {
            Envelope::Retry { max_ms, .. } => {
                total = total.saturating_add(max_ms);
                at = at.saturating_add(max_ms);
            }
            Envelope::MustStop(_) => break,
        }
        previous.push(view);
    }
    Some((total, u64::from(attempts)))
}

/// `limits.max_virtual_time` when the scenario gives none and its worst case is unknown or
/// unbounded (docs/scenario-format.md).
pub(crate) const DEFAULT_MAX_VIRTUAL_TIME: Duration = Duration::from_secs(24 * 3600);
/// `limits.max_client_attempts` when the scenario gives none and its worst case is unknown.
pub(crate) const DEFAULT_MAX_ATTEMPTS: u64 = 10_000;
/// `limits.wall` when the scenario gives none.
pub(crate) const DEFAULT_WALL: Duration = Duration::from_secs(60);

fn fixed_latency(
    scenario: &Scenario,
    path: &str,
    latency: &LatencySpec,
    errors: &mut Vec<ScenarioError>,
) -> Duration {
    match latency.fixed_millis() {
        Some(ms) => ms.as_duration(),
        None => {
            errors.push(scenario.error_at(
                path,
                format!(
                    "`{}` latency distributions are not supported yet; use a fixed duration",
                    latency.kind()
                ),
            ));
            Duration::ZERO
        }
    }
}

fn operation(scenario: &Scenario, errors: &mut Vec<ScenarioError>) -> Operation {
    let spec = &scenario.operation;
    let method = Method::from_bytes(spec.method.as_bytes()).unwrap_or_else(|_| {
        errors.push(scenario.error_at(
            "operation.method",
            format!("`{}` is not a valid HTTP method", spec.method),
        ));
        Method::GET
    });
    let mut url = String::with_capacity(8 + spec.endpoint.len() + spec.path.len());
    url.push_str("http://");
    url.push_str(&spec.endpoint);
    if !spec.path.starts_with('/') {
        url.push('/');
    }
    url.push_str(&spec.path);
    if url.parse::<http::Uri>().is_err() {
        errors.push(scenario.error_at(
            "operation.path",
            format!("`{}` does not make a valid URL path", spec.path),
        ));
    }
    let headers = header_map(
        scenario,
        "operation.headers",
        spec.headers.as_ref().map(|h| h.entries()).unwrap_or(&[]),
        errors,
    );
    Operation {
        endpoint: spec.endpoint.clone(),
        method,
        path: url["http://".len() + spec.endpoint.len()..].to_owned(),
        url,
        headers: headers
            .into_iter()
            .fold(HeaderMap::new(), |mut map, (n, v)| {
                map.append(n, v);
                map
            }),
        body: Bytes::from(spec.body.clone().unwrap_or_default()),
        idempotency_key: None,
    }
}

fn header_map(
    scenario: &Scenario,
    path: &str,
    entries: &[(String, String)],
    errors: &mut Vec<ScenarioError>,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut out = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        let entry = format!("{path}.{name}");
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => out.push((n, v)),
            (Err(_), _) => errors.push(
                scenario.error_at_key(&entry, format!("`{name}` is not a valid header name")),
            ),
            (_, Err(_)) => errors.push(scenario.error_at(
                &entry,
                "not a valid header value (control characters are not allowed)",
            )),
        }
    }
    out
}

fn endpoint_config(
    scenario: &Scenario,
    path: &str,
    name: &str,
    spec: &EndpointSpec,
    errors: &mut Vec<ScenarioError>,
) -> EndpointConfig {
    let mut config = EndpointConfig::http(name);
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
    }
    for (i, route) in spec.routes.iter().enumerate() {
        let route_path = format!("{path}.routes[{i}]");
        let mut built = Route::any().scope(scope(route.scope));
        if let Some(method) = &route.r#match.method {
            match Method::from_bytes(method.as_bytes()) {
                Ok(m) => built = built.method(m),
                Err(_) => errors.push(scenario.error_at(
                    &format!("{route_path}.match.method"),
                    format!("`{method}` is not a valid HTTP method"),
                )),
            }
        }
        if let Some(p) = &route.r#match.path {
            built = built.path(p.clone());
        }
        if let Some(headers) = &route.r#match.headers {
            for (n, v) in header_map(
                scenario,
                &format!("{route_path}.match.headers"),
                headers.entries(),
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
        config = config.route(built);
    }
    if !spec.connect.is_empty() {
        config = config.connect(spec.connect.iter().map(|step| {
            let built = ConnectStep::new(step.action);
            match step.times {
                Some(n) => built.times(n),
                None => built,
            }
        }));
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
        match HeaderName::from_bytes(dedupe.header.as_bytes()) {
            Ok(header) => {
                let mut built = Dedupe::header(header)
                    .in_flight_status(dedupe.in_flight)
                    .mismatch_status(dedupe.mismatch);
                if let Some(ttl) = dedupe.ttl.millis() {
                    built = built.ttl(ttl.as_duration());
                }
                config = config.dedupe(built);
            }
            Err(_) => errors.push(scenario.error_at(
                &format!("{path}.dedupe.header"),
                format!("`{}` is not a valid header name", dedupe.header),
            )),
        }
    }
    if let Some(key) = &scenario.operation.idempotency_key {
        if let Ok(header) = HeaderName::from_bytes(key.header.as_bytes()) {
            config = config.key_header(header);
        }
    }
    config
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

fn step(scenario: &Scenario, path: &str, spec: &StepSpec, errors: &mut Vec<ScenarioError>) -> Step {
    let mut built = match spec.status {
        Some(status) => Step::status(status),
        None => Step::status(200),
    };
    if let Some(fail) = &spec.fail {
        let fail = match fail {
            FailSpec::Close { after_bytes: None } => Fail::Close,
            FailSpec::Reset { after_bytes: None } => Fail::Reset,
            FailSpec::Hang => Fail::Hang,
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
        for (n, v) in header_map(
            scenario,
            &format!("{path}.headers"),
            headers.entries(),
            errors,
        ) {
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
                let after = u64::try_from(offset.0).unwrap_or_else(|_| {
                    errors.push(scenario.error_at(
                        &format!("{path}.retry_after.http_date"),
                        "a date in the past is not supported yet; write it with `raw:`",
                    ));
                    0
                });
                RetryAfter::http_date(Duration::from_millis(after)).format(format)
            }
        });
    }
    if let Some(latency) = &spec.latency {
        built = built.latency(fixed_latency(
            scenario,
            &format!("{path}.latency"),
            latency,
            errors,
        ));
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

/// The scenario's `epoch` as Unix milliseconds (validated when the scenario was parsed:
/// RFC 3339 or an HTTP-date), 2026-01-01T00:00:00Z when unset.
fn epoch_unix_ms(scenario: &Scenario) -> u64 {
    let Some(text) = &scenario.epoch else {
        return retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS;
    };
    let parsed = humantime::parse_rfc3339_weak(text)
        .ok()
        .or_else(|| httpdate::parse_http_date(text).ok());
    parsed
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS, |d| {
            d.as_millis() as u64
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ClientSpec;

    fn client(yaml: &str) -> ClientSpec {
        let src = format!(
            "version: 1\nname: t\nendpoints: {{ api: {{}} }}\noperation: {{ endpoint: api }}\nclient: {yaml}\n"
        );
        Scenario::from_yaml_str(&src, "t.yaml")
            .unwrap_or_else(|e| panic!("{e}"))
            .client
    }

    #[test]
    fn worst_case_of_an_exponential_client() {
        // 4 attempts of at most 2s, and at most 100 + 200 + 400 ms between them.
        let spec = client(
            "{ exponential: { initial: 100ms, max_delay: 20s, jitter: full, max_attempts: 4, attempt_timeout: 2s } }",
        );
        assert_eq!(worst_case(&spec), Some((8_700, 4)));
    }

    #[test]
    fn no_attempt_timeout_is_unbounded() {
        let spec = client("{ exponential: { initial: 100ms, max_attempts: 4 } }");
        assert_eq!(worst_case(&spec), None);
        assert_eq!(worst_case(&ClientSpec::Custom("mine".into())), None);
    }

    #[test]
    fn default_limits_are_twice_the_worst_case_per_call() {
        let src = "version: 1\nname: t\nendpoints: { api: {} }\n\
                   operation: { endpoint: api, calls: 3 }\n\
                   client: { fixed: { delay: 1s, max_attempts: 3, attempt_timeout: 500ms } }\n";
        let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let plan = Plan::from_scenario(&scenario, 0).unwrap_or_else(|e| panic!("{e}"));
        // (3 × 0.5 s + 2 × 1 s) × 2 × 3 calls; 3 attempts × 2 × 3 calls.
        assert_eq!(plan.max_virtual_time, Duration::from_millis(21_000));
        assert_eq!(plan.max_attempts, Some(18));
    }
}
