//! Cross-field validation: rules that no single field's type can state.
//!
//! Every rule reports through [`Scenario::error_at`], so each error is located in the file
//! (or at the nearest written ancestor of a defaulted field), and all of them are reported at
//! once.

use std::collections::BTreeMap;

use super::client::{ClientSpec, GrpcRetryPolicy, SnsEndpointType};
use super::duration::{DurationOrNone, Millis};
use super::endpoint::{ConnectAction, EndpointKind, EndpointSpec, ScriptScope};
use super::error::{ScenarioError, did_you_mean};
use super::expect::Expectations;
use super::headers::HeadersSpec;
use super::latency::LatencySpec;
use super::locations::{index, join};
use super::model::Scenario;
use super::network::FaultSpec;
use super::search::VarySpec;
use super::step::{CommitSpec, FailSpec, RetryAfterSpec, StepSpec, TimelineStep};
use super::turmoil::{BackendKind, WindowSpec};
use super::values::{DurationRange, Probability};

/// Every cross-field error of `scenario`, unsorted.
pub(crate) fn validate(scenario: &Scenario) -> Vec<ScenarioError> {
    let mut v = Validator {
        s: scenario,
        errors: Vec::new(),
    };
    v.top();
    v.endpoints();
    v.network();
    v.operation();
    v.policy("client", &scenario.client);
    v.expect();
    v.turmoil();
    v.search();
    v.errors
}

struct Validator<'a> {
    s: &'a Scenario,
    errors: Vec<ScenarioError>,
}

/// The fields shared by script and timeline steps, borrowed.
struct StepView<'a> {
    status: Option<u16>,
    headers: Option<&'a HeadersSpec>,
    body: bool,
    retry_after: Option<&'a RetryAfterSpec>,
    latency: Option<&'a LatencySpec>,
    trickle: Option<Millis>,
    fail: Option<FailSpec>,
    commit: Option<CommitSpec>,
    p: Option<Probability>,
    then: Option<&'a StepSpec>,
    otherwise: Option<&'a StepSpec>,
    error_code: Option<i64>,
    times: Option<u32>,
}

macro_rules! step_view {
    ($s:expr, $times:expr) => {
        StepView {
            status: $s.status,
            headers: $s.headers.as_ref(),
            body: $s.body.is_some(),
            retry_after: $s.retry_after.as_ref(),
            latency: $s.latency.as_ref(),
            trickle: $s.trickle,
            fail: $s.fail,
            commit: $s.commit,
            p: $s.p,
            then: $s.then.as_deref(),
            otherwise: $s.r#else.as_deref(),
            error_code: $s.error_code,
            times: $times,
        }
    };
}

fn script_view(s: &StepSpec) -> StepView<'_> {
    step_view!(s, s.times)
}

fn timeline_view(s: &TimelineStep) -> StepView<'_> {
    step_view!(s, None)
}

/// RFC 9110 `tchar`: what a method or header name may contain.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Validator<'_> {
    fn err(&mut self, path: &str, message: impl Into<String>) {
        let e = self.s.error_at(path, message);
        self.errors.push(e);
    }

    fn err_key(&mut self, path: &str, message: impl Into<String>) {
        let e = self.s.error_at_key(path, message);
        self.errors.push(e);
    }

    fn err_expected(
        &mut self,
        path: &str,
        message: impl Into<String>,
        expected: impl Into<String>,
    ) {
        let e = self.s.error_at(path, message).with_expected(expected);
        self.errors.push(e);
    }

    /// An error for a name that must be one of `endpoints`, with a did-you-mean.
    fn endpoint_ref(&mut self, path: &str, name: &str) {
        if self.s.endpoints.contains_key(name) {
            return;
        }
        let known: Vec<&str> = self.s.endpoints.keys().map(String::as_str).collect();
        let expected = if known.is_empty() {
            "the name of an endpoint (none is declared)".to_string()
        } else {
            format!(
                "one of the endpoints: {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let e = self
            .s
            .error_at(path, format!("no endpoint is named `{name}`"))
            .with_expected(expected)
            .with_suggestion(did_you_mean(name, known));
        self.errors.push(e);
    }

    fn positive(&mut self, path: &str, d: Millis, what: &str) {
        if d.is_zero() {
            self.err_expected(path, format!("{what} is 0"), "a positive duration");
        }
    }

    fn count_at_least_one(&mut self, path: &str, n: Option<u32>, what: &str) {
        if n == Some(0) {
            self.err_expected(path, format!("`{what}: 0` is not allowed"), "at least 1");
        }
    }

    fn top(&mut self) {
        let s = self.s;
        if s.version != 1 {
            self.err_expected(
                "version",
                format!("unsupported format version {}", s.version),
                "1",
            );
        }
        if s.name.trim().is_empty() {
            self.err_expected("name", "empty name", "a name for reports and snapshots");
        }
        if s.endpoints.is_empty() {
            self.err_expected("endpoints", "no endpoints", "at least one endpoint");
        }
        if let Some(epoch) = &s.epoch {
            if !valid_rfc3339(epoch) && httpdate::parse_http_date(epoch).is_err() {
                self.err_expected(
                    "epoch",
                    format!("invalid date `{epoch}`"),
                    "an RFC 3339 date such as `2026-01-01T00:00:00Z` or an IMF date such as `Thu, 01 Jan 2026 00:00:00 GMT`",
                );
            }
        }
        if s.status.is_some() && !s.must_fail.is_empty() {
            self.err(
                "must_fail",
                "`must_fail` cannot be combined with `status: known_failure`; a known failure is expected to fail until fixed, a must_fail scenario always fails the named checks",
            );
        }
        let present = s.expect.check_names();
        let mut seen = Vec::new();
        for (i, name) in s.must_fail.iter().enumerate() {
            let path = index("must_fail", i);
            if !Expectations::CHECK_NAMES.contains(&name.as_str()) {
                let e = self
                    .s
                    .error_at(&path, format!("unknown check `{name}`"))
                    .with_expected(format!(
                        "one of {}",
                        Expectations::CHECK_NAMES
                            .iter()
                            .map(|c| format!("`{c}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .with_suggestion(did_you_mean(
                        name,
                        Expectations::CHECK_NAMES.iter().copied(),
                    ));
                self.errors.push(e);
            } else if !present.contains(&name.as_str()) {
                self.err_expected(
                    &path,
                    format!("`{name}` is not among the checks of `expect:`, so it cannot fail"),
                    format!("a check set in `expect:` (set: {})", present.join(", ")),
                );
            }
            if seen.contains(&name) {
                self.err(&path, format!("`{name}` is listed twice"));
            }
            seen.push(name);
        }
        let limits = s.limits;
        if let Some(t) = limits.max_virtual_time {
            self.positive("limits.max_virtual_time", t, "`max_virtual_time`");
        }
        if let Some(t) = limits.wall {
            self.positive("limits.wall", t, "`wall`");
        }
        if limits.max_client_attempts == Some(0) {
            self.err_expected(
                "limits.max_client_attempts",
                "`max_client_attempts: 0` is not allowed",
                "at least 1",
            );
        }
    }

    fn endpoints(&mut self) {
        for (name, e) in &self.s.endpoints {
            let path = join("endpoints", name);
            let valid_name = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !valid_name {
                self.err_key(&path, format!("invalid endpoint name `{name}`"));
                if let Some(last) = self.errors.last_mut() {
                    last.expected = Some(
                        "letters, digits, `_`, `-` and `.`, starting with a letter or digit".into(),
                    );
                }
            }
            self.endpoint(&path, e);
        }
    }

    fn endpoint(&mut self, path: &str, e: &EndpointSpec) {
        let kind = e.kind;
        if !e.routes.is_empty() {
            if e.script.is_some() {
                self.err_key(
                    &join(path, "script"),
                    "`script` cannot be combined with `routes`; a bare script is the catch-all route",
                );
            }
            if e.timeline.is_some() {
                self.err_key(
                    &join(path, "timeline"),
                    "`timeline` cannot be combined with `routes`",
                );
            }
        }
        if e.script.is_some() && e.timeline.is_some() {
            self.err_key(
                &join(path, "timeline"),
                "`timeline` cannot be combined with `script`; choose steps by count or by time",
            );
        }
        if kind == EndpointKind::DeadLetter
            && (e.script.is_some() || e.timeline.is_some() || !e.routes.is_empty())
        {
            self.err(
                &join(path, "kind"),
                "a `dead_letter` endpoint records what it receives and takes no script or routes",
            );
        }
        let rate_keys = [
            ("rate", e.rate.is_some()),
            ("burst", e.burst.is_some()),
            ("when_empty", e.when_empty.is_some()),
        ];
        for (key, set) in rate_keys {
            if set && kind != EndpointKind::RateLimiter {
                self.err_key(
                    &join(path, key),
                    format!(
                        "`{key}` belongs to `kind: rate_limiter`, not `{}`",
                        kind.name()
                    ),
                );
            }
        }
        if kind == EndpointKind::RateLimiter {
            match e.rate {
                None => self.err_expected(
                    path,
                    "missing required key `rate` for a rate limiter",
                    "`rate: <tokens per second>`",
                ),
                Some(r) if !(r.is_finite() && r > 0.0) => self.err_expected(
                    &join(path, "rate"),
                    format!("rate {r} is not positive"),
                    "tokens per second, above 0",
                ),
                _ => {}
            }
            self.count_at_least_one(&join(path, "burst"), e.burst, "burst");
        }
        if !e.topics.is_empty() && kind != EndpointKind::Broker {
            self.err_key(
                &join(path, "topics"),
                format!("`topics` belongs to `kind: broker`, not `{}`", kind.name()),
            );
        }
        for (i, t) in e.topics.iter().enumerate() {
            if t.trim().is_empty() {
                self.err(&index(&join(path, "topics"), i), "empty topic name");
            }
        }
        self.scope(&join(path, "scope"), e.scope);
        if let Some(steps) = &e.script {
            self.script(&join(path, "script"), steps, kind);
        }
        if let Some(steps) = &e.timeline {
            self.timeline(&join(path, "timeline"), steps, kind);
        }
        if let Some(step) = &e.when_empty {
            self.step(&join(path, "when_empty"), &script_view(step), kind, false);
        }
        for (i, r) in e.routes.iter().enumerate() {
            let rp = index(&join(path, "routes"), i);
            match (&r.script, &r.timeline) {
                (None, None) => {
                    self.err_expected(&rp, "a route needs steps", "`script:` or `timeline:`")
                }
                (Some(_), Some(_)) => self.err_key(
                    &join(&rp, "timeline"),
                    "`timeline` cannot be combined with `script`",
                ),
                _ => {}
            }
            if let Some(m) = &r.r#match.method {
                if !is_token(m) {
                    self.err_expected(
                        &join(&rp, "match.method"),
                        format!("invalid method `{m}`"),
                        "an HTTP method such as `POST`",
                    );
                }
            }
            if let Some(p) = &r.r#match.path {
                if !p.starts_with('/') || p.contains(char::is_whitespace) {
                    self.err_expected(
                        &join(&rp, "match.path"),
                        format!("invalid path `{p}`"),
                        "a path starting with `/`, without spaces",
                    );
                }
            }
            if let Some(h) = &r.r#match.headers {
                self.headers(&join(&rp, "match.headers"), h);
            }
            self.scope(&join(&rp, "scope"), r.scope);
            if let Some(steps) = &r.script {
                self.script(&join(&rp, "script"), steps, kind);
            }
            if let Some(steps) = &r.timeline {
                self.timeline(&join(&rp, "timeline"), steps, kind);
            }
        }
        for (i, c) in e.connect.iter().enumerate() {
            let cp = index(&join(path, "connect"), i);
            self.count_at_least_one(&join(&cp, "times"), c.times, "times");
            if self.s.backend == BackendKind::Real && c.action != ConnectAction::Accept {
                self.err(
                    &join(&cp, "action"),
                    "refused and black-holed connections cannot be made on the real backend",
                );
            }
        }
        if let Some(k) = &e.keep_alive {
            let kp = join(path, "keep_alive");
            if let DurationOrNone::After(d) = k.idle_timeout {
                self.positive(&join(&kp, "idle_timeout"), d, "`idle_timeout`");
            }
            self.count_at_least_one(&join(&kp, "max_requests"), k.max_requests, "max_requests");
        }
        if let Some(d) = &e.dedupe {
            let dp = join(path, "dedupe");
            if !is_token(&d.header) {
                self.err_expected(
                    &join(&dp, "header"),
                    format!("invalid header name `{}`", d.header),
                    "a header name such as `Idempotency-Key`",
                );
            }
            if let DurationOrNone::After(t) = d.ttl {
                self.positive(&join(&dp, "ttl"), t, "`ttl`");
            }
        }
    }

    fn scope(&mut self, path: &str, scope: ScriptScope) {
        let has_key = self.s.operation.idempotency_key.is_some();
        if scope == ScriptScope::Key && !has_key {
            self.err_expected(
                path,
                "`scope: key` counts per idempotency key, but the operation sends none",
                "`operation.idempotency_key: { header: ... }`",
            );
        }
    }

    fn script(&mut self, path: &str, steps: &[StepSpec], kind: EndpointKind) {
        if steps.is_empty() {
            self.err_expected(path, "empty script", "at least one step");
        }
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), &script_view(step), kind, false);
        }
    }

    fn timeline(&mut self, path: &str, steps: &[TimelineStep], kind: EndpointKind) {
        if steps.is_empty() {
            self.err_expected(path, "empty timeline", "at least one step");
        }
        let mut windows: Vec<(usize, DurationRange)> =
            steps.iter().map(|s| s.during).enumerate().collect();
        windows.sort_by_key(|(_, w)| (w.min, w.max));
        for pair in windows.windows(2) {
            let ((i, a), (j, b)) = (pair[0], pair[1]);
            if b.min <= a.max {
                self.err(
                    &join(&index(path, j), "during"),
                    format!(
                        "window [{}, {}] overlaps [{}, {}] of step {i}; a request at that time would match both",
                        b.min, b.max, a.min, a.max
                    ),
                );
            }
        }
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), &timeline_view(step), kind, false);
        }
    }

    fn step(&mut self, path: &str, s: &StepView<'_>, kind: EndpointKind, nested: bool) {
        let broker = kind == EndpointKind::Broker;
        let mut forms = Vec::new();
        // A cut response (`fail: { close|reset: { after_bytes } }`) may say what it cuts:
        // its status, headers and body, of which `after_bytes` bytes go out on the wire.
        let truncates = matches!(
            s.fail,
            Some(
                FailSpec::Close {
                    after_bytes: Some(_)
                } | FailSpec::Reset {
                    after_bytes: Some(_)
                }
            )
        );
        if s.status.is_some() {
            forms.push("status");
        }
        if s.fail.is_some() && !(truncates && s.status.is_some()) {
            forms.push("fail");
        }
        if s.p.is_some() {
            forms.push("p");
        }
        if s.error_code.is_some() && broker {
            forms.push("error_code");
        }
        let one_of = if broker {
            "one of `status`, `fail`, `p` or `error_code`"
        } else {
            "one of `status`, `fail` or `p`"
        };
        match forms.len() {
            0 => self.err_expected(path, "a step needs something to do", one_of),
            1 => {}
            _ => self.err_expected(
                path,
                format!(
                    "a step does one thing, but this one has {}",
                    forms
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                format!("exactly {one_of}"),
            ),
        }
        if s.error_code.is_some() && !broker {
            self.err_key(
                &join(path, "error_code"),
                format!(
                    "`error_code` is for `kind: broker` endpoints, not `{}`",
                    kind.name()
                ),
            );
        }
        // Headers may come with a broker's error response; a body and its pacing only with
        // a status the step writes itself.
        let responds = s.status.is_some() || (broker && s.error_code.is_some());
        let response_fields = [
            ("headers", s.headers.is_some(), responds),
            ("retry_after", s.retry_after.is_some(), responds),
            ("body", s.body, s.status.is_some()),
            ("trickle", s.trickle.is_some(), s.status.is_some()),
        ];
        for (key, set, allowed) in response_fields {
            if set && !allowed {
                self.err_key(
                    &join(path, key),
                    format!("`{key}` is part of a response and needs `status`"),
                );
            }
        }
        if s.p.is_some() {
            if s.then.is_none() {
                self.err_expected(
                    path,
                    "missing required key `then` of a random step",
                    "`then: <step>`",
                );
            }
            if s.otherwise.is_none() {
                self.err_expected(
                    path,
                    "missing required key `else` of a random step",
                    "`else: <step>`",
                );
            }
            for (key, set) in [
                ("latency", s.latency.is_some()),
                ("commit", s.commit.is_some()),
            ] {
                if set {
                    self.err_key(
                        &join(path, key),
                        format!("`{key}` belongs inside `then` and `else` of a random step"),
                    );
                }
            }
        } else {
            for (key, set) in [("then", s.then.is_some()), ("else", s.otherwise.is_some())] {
                if set {
                    self.err_key(&join(path, key), format!("`{key}` needs `p`"));
                }
            }
        }
        if nested && s.times.is_some() {
            self.err_key(
                &join(path, "times"),
                "`times` belongs to the random step itself: it consumes one count whichever branch it takes",
            );
        } else if s.times == Some(0) {
            self.err_expected(
                &join(path, "times"),
                "`times: 0` would never run the step",
                "at least 1 (remove the step instead)",
            );
        }
        if let Some(h) = s.headers {
            self.headers(&join(path, "headers"), h);
        }
        if let Some(RetryAfterSpec::Raw(raw)) = s.retry_after {
            if raw.contains(['\r', '\n']) {
                self.err(
                    &join(path, "retry_after.raw"),
                    "a header value cannot contain a line break",
                );
            }
        }
        if let Some(l) = s.latency {
            self.latency(&join(path, "latency"), l);
        }
        if let Some(t) = s.trickle {
            self.positive(&join(path, "trickle"), t, "`trickle`");
        }
        if let Some(then) = s.then {
            self.step(&join(path, "then"), &script_view(then), kind, true);
        }
        if let Some(otherwise) = s.otherwise {
            self.step(&join(path, "else"), &script_view(otherwise), kind, true);
        }
    }

    fn headers(&mut self, path: &str, h: &HeadersSpec) {
        let mut seen: Vec<String> = Vec::new();
        for (i, (name, value)) in h.entries().iter().enumerate() {
            let (name_path, value_path) = match h {
                HeadersSpec::Map(_) => (join(path, name), join(path, name)),
                HeadersSpec::Pairs(_) => (index(path, i), index(path, i)),
            };
            if !is_token(name) {
                self.err_expected(
                    &name_path,
                    format!("invalid header name `{name}`"),
                    "letters, digits and `-` (an HTTP token)",
                );
            }
            if value.contains(['\r', '\n', '\0']) {
                self.err(
                    &value_path,
                    format!("the value of `{name}` contains a line break or NUL"),
                );
            }
            let lower = name.to_ascii_lowercase();
            if matches!(h, HeadersSpec::Map(_)) && seen.contains(&lower) {
                self.err_expected(
                    &name_path,
                    format!("header `{name}` repeats (names are case-insensitive)"),
                    "a list of pairs `[[Name, value], ...]` when a name repeats",
                );
            }
            seen.push(lower);
        }
    }

    fn latency(&mut self, path: &str, l: &LatencySpec) {
        match l {
            LatencySpec::Fixed(_) | LatencySpec::Uniform(_) => {}
            LatencySpec::Lognormal(ln) => {
                let lp = join(path, "lognormal");
                if !(ln.sigma.is_finite() && ln.sigma > 0.0) {
                    self.err_expected(
                        &join(&lp, "sigma"),
                        format!("sigma {} is not positive", ln.sigma),
                        "a number above 0",
                    );
                }
                self.positive(&join(&lp, "median"), ln.median, "`median`");
                if let Some(max) = ln.max {
                    if max < ln.median {
                        self.err(
                            &join(&lp, "max"),
                            format!("max {max} is below the median {}", ln.median),
                        );
                    }
                }
            }
            LatencySpec::Exponential(ex) => {
                let ep = join(path, "exponential");
                self.positive(&join(&ep, "mean"), ex.mean, "`mean`");
                if let Some(max) = ex.max {
                    if max < ex.mean {
                        self.err(
                            &join(&ep, "max"),
                            format!("max {max} is below the mean {}", ex.mean),
                        );
                    }
                }
            }
        }
    }

    fn network(&mut self) {
        let n = &self.s.network;
        self.latency("network.latency", &n.latency);
        for (name, l) in &n.endpoint_latency {
            let p = join("network.endpoint_latency", name);
            if !self.s.endpoints.contains_key(name) {
                let known: Vec<&str> = self.s.endpoints.keys().map(String::as_str).collect();
                let e = self
                    .s
                    .error_at_key(&p, format!("no endpoint is named `{name}`"))
                    .with_suggestion(did_you_mean(name, known));
                self.errors.push(e);
            }
            self.latency(&p, l);
        }
        if !n.faults.is_empty() && self.s.backend == BackendKind::Turmoil {
            self.err_expected(
                "network.faults",
                "`network.faults` are sim-only: their turmoil semantics differ",
                "turmoil-native faults under `turmoil:`",
            );
        }
        let horizon = self.s.limits.max_virtual_time;
        let mut by_endpoint: BTreeMap<&str, Vec<(usize, &FaultSpec)>> = BTreeMap::new();
        for (i, f) in n.faults.iter().enumerate() {
            let fp = index("network.faults", i);
            let key = f.kind();
            self.endpoint_ref(&join(&fp, key), f.endpoint());
            match f {
                FaultSpec::Partition { r#for, .. } => {
                    self.positive(&join(&fp, "for"), *r#for, "`for`");
                }
                FaultSpec::Crash { restart_after, .. } => {
                    if let Some(r) = restart_after {
                        self.positive(&join(&fp, "restart_after"), *r, "`restart_after`");
                    }
                }
            }
            if let Some(h) = horizon {
                if f.at() >= h {
                    self.err(
                        &join(&fp, "at"),
                        format!(
                            "the fault starts at {} but the run stops at limits.max_virtual_time {h}",
                            f.at()
                        ),
                    );
                }
            }
            by_endpoint.entry(f.endpoint()).or_default().push((i, f));
        }
        for faults in by_endpoint.values_mut() {
            faults.sort_by_key(|(i, f)| (f.at(), *i));
            for (k, (j, later)) in faults.iter().enumerate() {
                for (i, earlier) in &faults[..k] {
                    let same_kind = earlier.kind() == later.kind();
                    let never_restarts = matches!(
                        earlier,
                        FaultSpec::Crash {
                            restart_after: None,
                            ..
                        }
                    );
                    let overlaps = earlier.window_end().is_none_or(|end| later.at() < end);
                    if never_restarts {
                        self.err(
                            &join(&index("network.faults", *j), "at"),
                            format!(
                                "`{}` never restarts after the crash of network.faults[{i}], so this fault cannot happen",
                                later.endpoint()
                            ),
                        );
                    } else if same_kind && overlaps {
                        self.err(
                            &join(&index("network.faults", *j), "at"),
                            format!(
                                "this {} of `{}` starts at {} while the {} of network.faults[{i}] is still on",
                                later.kind(),
                                later.endpoint(),
                                later.at(),
                                earlier.kind()
                            ),
                        );
                    }
                }
            }
        }
    }

    fn operation(&mut self) {
        let o = &self.s.operation;
        self.endpoint_ref("operation.endpoint", &o.endpoint);
        if !is_token(&o.method) {
            self.err_expected(
                "operation.method",
                format!("invalid method `{}`", o.method),
                "an HTTP method such as `GET` or `POST`",
            );
        }
        if !o.path.starts_with('/') || o.path.contains(char::is_whitespace) {
            self.err_expected(
                "operation.path",
                format!("invalid path `{}`", o.path),
                "a path starting with `/`, without spaces",
            );
        }
        if let Some(h) = &o.headers {
            self.headers("operation.headers", h);
        }
        if let Some(k) = &o.idempotency_key {
            if !is_token(&k.header) {
                self.err_expected(
                    "operation.idempotency_key.header",
                    format!("invalid header name `{}`", k.header),
                    "a header name such as `Idempotency-Key`",
                );
            }
        }
        for (key, n) in [
            ("calls", o.calls),
            ("concurrency", o.concurrency),
            ("clients", o.clients),
        ] {
            self.count_at_least_one(&join("operation", key), Some(n), key);
        }
        if let Some(start) = &o.start {
            self.latency("operation.start", start);
        }
    }

    fn policy(&mut self, path: &str, policy: &ClientSpec) {
        let p = join(path, policy.name());
        if let Some(t) = policy.attempt_timeout() {
            self.positive(&join(&p, "attempt_timeout"), t, "`attempt_timeout`");
        }
        if policy.max_attempts() == Some(0) {
            self.err_expected(
                &join(&p, "max_attempts"),
                "`max_attempts: 0` is not allowed",
                "at least 1 (the first attempt counts)",
            );
        }
        match policy {
            ClientSpec::NoRetry => {}
            ClientSpec::Fixed(_) => {}
            ClientSpec::Exponential(x) => {
                self.multiplier(&join(&p, "multiplier"), x.multiplier);
                self.not_above(&p, ("initial", x.initial), ("max_delay", x.max_delay));
            }
            ClientSpec::Linear(x) | ClientSpec::Fibonacci(x) => {
                self.not_above(&p, ("initial", x.initial), ("max_delay", x.max_delay));
            }
            ClientSpec::AwsStandard(x)
            | ClientSpec::AwsStandard21(x)
            | ClientSpec::AwsAdaptive(x) => {
                self.positive(&join(&p, "max_backoff"), x.max_backoff, "`max_backoff`");
                if x.initial_tokens == 0 {
                    self.err_expected(
                        &join(&p, "initial_tokens"),
                        "`initial_tokens: 0` leaves no retry quota",
                        "at least 1",
                    );
                }
            }
            ClientSpec::SnsDelivery(x) => self.sns(&p, x),
            ClientSpec::GrpcRetry(x) => {
                let sc = &x.service_config;
                let scp = join(&p, "service_config");
                let mut policies: Vec<(String, &GrpcRetryPolicy)> = Vec::new();
                if let Some(r) = &sc.retry_policy {
                    policies.push((join(&scp, "retryPolicy"), r));
                }
                for (i, m) in sc.method_config.iter().enumerate() {
                    if let Some(r) = &m.retry_policy {
                        policies.push((
                            join(&index(&join(&scp, "methodConfig"), i), "retryPolicy"),
                            r,
                        ));
                    }
                }
                match policies.len() {
                    0 => self.err_expected(
                        &scp,
                        "the service config has no retry policy",
                        "`retryPolicy` at the top level or in one `methodConfig` entry",
                    ),
                    1 => {}
                    _ => self.err_expected(
                        &policies[1].0,
                        "a second retry policy: the scenario has one operation, so it is ambiguous",
                        "exactly one `retryPolicy`",
                    ),
                }
                for (rp, r) in &policies {
                    self.grpc_retry_policy(rp, r);
                }
                if let Some(t) = &sc.retry_throttling {
                    let tp = join(&scp, "retryThrottling");
                    if !(t.max_tokens > 0.0 && t.max_tokens <= 1000.0) {
                        self.err_expected(
                            &join(&tp, "maxTokens"),
                            format!("maxTokens {} is out of range", t.max_tokens),
                            "a number in (0, 1000]",
                        );
                    }
                    if !(t.token_ratio.is_finite() && t.token_ratio > 0.0) {
                        self.err_expected(
                            &join(&tp, "tokenRatio"),
                            format!("tokenRatio {} is not positive", t.token_ratio),
                            "a number above 0",
                        );
                    }
                }
            }
            ClientSpec::GrpcConnectionBackoff(x) => {
                self.multiplier(&join(&p, "multiplier"), x.multiplier);
                self.positive(
                    &join(&p, "initial_backoff"),
                    x.initial_backoff,
                    "`initial_backoff`",
                );
                self.not_above(
                    &p,
                    ("initial_backoff", x.initial_backoff),
                    ("max_backoff", x.max_backoff),
                );
            }
            ClientSpec::RocketmqProducer(x) => {
                self.multiplier(&join(&p, "multiplier"), x.multiplier);
                self.not_above(
                    &p,
                    ("initial_backoff", x.initial_backoff),
                    ("max_backoff", x.max_backoff),
                );
            }
            ClientSpec::ServicenowExponential(x) => {
                self.not_above(&p, ("base_delay", x.base_delay), ("max_delay", x.max_delay));
            }
            ClientSpec::ServicenowHeader(x) => {
                if !is_token(&x.header) {
                    self.err_expected(
                        &join(&p, "header"),
                        format!("invalid header name `{}`", x.header),
                        "a header name such as `Retry-After`",
                    );
                }
            }
            ClientSpec::Custom(name) => {
                if name.trim().is_empty() {
                    self.err_expected(
                        &p,
                        "empty client name",
                        "the name of a client registered in Rust",
                    );
                }
                if path.ends_with("conforms_to") {
                    self.err_expected(
                        &p,
                        "a custom client has no envelope to conform to",
                        "a built-in policy",
                    );
                }
            }
        }
    }

    fn multiplier(&mut self, path: &str, m: f64) {
        if !(m.is_finite() && m >= 1.0) {
            self.err_expected(
                path,
                format!("multiplier {m} would not grow the delay"),
                "a number of at least 1",
            );
        }
    }

    /// `lower` must not exceed `upper` (such as `initial <= max_delay`).
    fn not_above(&mut self, path: &str, lower: (&str, Millis), upper: (&str, Millis)) {
        if lower.1 > upper.1 {
            self.err_expected(
                &join(path, lower.0),
                format!(
                    "`{}` {} is above `{}` {}",
                    lower.0, lower.1, upper.0, upper.1
                ),
                format!("`{}` <= `{}`", lower.0, upper.0),
            );
        }
    }

    fn grpc_retry_policy(&mut self, path: &str, r: &GrpcRetryPolicy) {
        if r.max_attempts < 2 {
            self.err_expected(
                &join(path, "maxAttempts"),
                format!("maxAttempts {} leaves no retry", r.max_attempts),
                "at least 2 (gRPC rejects a policy below 2; values above 5 are treated as 5)",
            );
        }
        self.positive(
            &join(path, "initialBackoff"),
            r.initial_backoff.0,
            "`initialBackoff`",
        );
        self.positive(&join(path, "maxBackoff"), r.max_backoff.0, "`maxBackoff`");
        if !(r.backoff_multiplier.is_finite() && r.backoff_multiplier > 0.0) {
            self.err_expected(
                &join(path, "backoffMultiplier"),
                format!("backoffMultiplier {} is not positive", r.backoff_multiplier),
                "a number above 0",
            );
        }
        if r.retryable_status_codes.is_empty() {
            self.err_expected(
                &join(path, "retryableStatusCodes"),
                "no retryable status codes",
                "at least one code such as `UNAVAILABLE`",
            );
        }
    }

    fn sns(&mut self, path: &str, x: &super::client::SnsParams) {
        let dp = join(path, "delivery_policy");
        let Some(policy) = &x.delivery_policy else {
            return;
        };
        if x.endpoint_type != SnsEndpointType::Http {
            self.err_key(
                &dp,
                "a `delivery_policy` applies to `endpoint_type: http` only; the other endpoint types use AWS's presets",
            );
            return;
        }
        if let Some(t) = &policy.throttle_policy {
            if t.max_receives_per_second < 1 {
                self.err_expected(
                    &join(&dp, "throttlePolicy.maxReceivesPerSecond"),
                    "maxReceivesPerSecond is 0",
                    "at least 1",
                );
            }
        }
        let Some(h) = &policy.healthy_retry_policy else {
            return;
        };
        let hp = join(&dp, "healthyRetryPolicy");
        if h.min_delay_target < 1 {
            self.err_expected(
                &join(&hp, "minDelayTarget"),
                "minDelayTarget is 0",
                "at least 1 second",
            );
        }
        if h.min_delay_target > h.max_delay_target {
            self.err_expected(
                &join(&hp, "minDelayTarget"),
                format!(
                    "minDelayTarget {} is above maxDelayTarget {}",
                    h.min_delay_target, h.max_delay_target
                ),
                "minDelayTarget <= maxDelayTarget",
            );
        }
        if h.max_delay_target > 3600 {
            self.err_expected(
                &join(&hp, "maxDelayTarget"),
                format!("maxDelayTarget {} is above SNS's limit", h.max_delay_target),
                "at most 3600 seconds",
            );
        }
        if h.num_retries > 100 {
            self.err_expected(
                &join(&hp, "numRetries"),
                format!("numRetries {} is above SNS's limit", h.num_retries),
                "at most 100",
            );
        }
        let phases = u64::from(h.num_no_delay_retries)
            + u64::from(h.num_min_delay_retries)
            + u64::from(h.num_max_delay_retries);
        // SNS's 3600 s limit on the total retry time of a custom HTTP/S policy, judged only
        // when the phases and targets make sense (otherwise the total means nothing and the
        // errors above say why).
        if phases <= u64::from(h.num_retries)
            && (1..=h.max_delay_target).contains(&h.min_delay_target)
        {
            let total = x.config().total_retry_time();
            if total > crate::policy::sns::MAX_TOTAL_RETRY_TIME {
                self.err_expected(
                    &dp,
                    format!(
                        "the delivery policy's retries add up to {} (the sum of the delays \
                         of its {} retries, before jitter), above SNS's limit for HTTP/S \
                         endpoints",
                        crate::policy::fmt_ms(u64::try_from(total.as_millis()).unwrap_or(u64::MAX)),
                        h.num_retries
                    ),
                    "a total retry time of at most 3600s",
                );
            }
        }
        if phases > u64::from(h.num_retries) {
            self.err_expected(
                &join(&hp, "numRetries"),
                format!(
                    "the phases add up to {phases} retries (numNoDelayRetries {} + numMinDelayRetries {} + numMaxDelayRetries {}) but numRetries is {}",
                    h.num_no_delay_retries, h.num_min_delay_retries, h.num_max_delay_retries, h.num_retries
                ),
                "numRetries >= the sum of the phase counts",
            );
        }
    }

    fn expect(&mut self) {
        let s = self.s;
        let e = &s.expect;
        let o = &s.operation;
        if e.outcome.is_some() && e.outcomes.is_some() {
            self.err_key(
                "expect.outcomes",
                "`outcomes` cannot be combined with `outcome`; use one",
            );
        }
        if let Some(outcomes) = &e.outcomes {
            let calls = u64::from(o.calls) * u64::from(o.clients);
            if outcomes.len() as u64 != calls {
                self.err_expected(
                    "expect.outcomes",
                    format!("{} outcomes for {calls} calls", outcomes.len()),
                    "one outcome per logical call",
                );
            }
        }
        if e.stop_reason.is_some() && matches!(s.client, ClientSpec::Custom(_)) {
            self.err(
                "expect.stop_reason",
                "`stop_reason` is reported by reference clients only, and `client` is custom",
            );
        }
        if e.effects.is_some() && o.is_concurrent() && o.idempotency_key.is_none() && !o.call_tag {
            self.err_expected(
                "expect.effects",
                "concurrent calls without an idempotency key or a call tag: effects cannot be attributed to calls",
                "`operation.idempotency_key: { header: ... }` or `operation.call_tag: true`",
            );
        }
        let has_keys =
            o.idempotency_key.is_some() || s.endpoints.values().any(|e| e.dedupe.is_some());
        for (key, set) in [
            ("same_idempotency_key", e.same_idempotency_key.is_some()),
            ("distinct_keys", e.distinct_keys.is_some()),
        ] {
            if set && !has_keys {
                self.err_expected(
                    &join("expect", key),
                    format!("`{key}` needs to know which header holds the key"),
                    "`operation.idempotency_key` or an endpoint's `dedupe.header`",
                );
            }
        }
        if e.dead_lettered.is_some()
            && !s
                .endpoints
                .values()
                .any(|e| e.kind == EndpointKind::DeadLetter)
        {
            self.err_expected(
                "expect.dead_lettered",
                "no endpoint is a dead-letter store",
                "an endpoint with `kind: dead_letter`",
            );
        }
        if e.late_requests.is_some() && s.drain.is_zero() {
            self.err_expected(
                "expect.late_requests",
                "`late_requests` can see nothing with `drain: 0`: the run ends when the client returns",
                "a positive `drain:`",
            );
        }
        if let Some(h) = &e.header {
            if !is_token(&h.name) {
                self.err_expected(
                    "expect.header.name",
                    format!("invalid header name `{}`", h.name),
                    "a header name",
                );
            }
            if h.values.is_empty() {
                self.err_expected(
                    "expect.header.values",
                    "no values",
                    "at least one allowed value",
                );
            }
        }
        if let Some(m) = &e.max_rate {
            self.positive("expect.max_rate.window", m.window, "`window`");
        }
        if let Some(w) = &e.retry_waves {
            self.positive("expect.retry_waves.window", w.window, "`window`");
            if w.k == 0 {
                self.err_expected(
                    "expect.retry_waves.k",
                    "`k: 0` is not allowed",
                    "at least 1",
                );
            }
        }
        if let Some(a) = &e.amplification {
            if !(a.at_most.is_finite() && a.at_most >= 1.0) {
                self.err_expected(
                    "expect.amplification.at_most",
                    format!(
                        "{} is below 1: every call makes at least one request",
                        a.at_most
                    ),
                    "a number of at least 1",
                );
            }
        }
        if let Some(c) = &e.conforms_to {
            self.policy("expect.conforms_to", c);
        }
    }

    fn turmoil(&mut self) {
        let Some(t) = &self.s.turmoil else {
            return;
        };
        if self.s.backend != BackendKind::Turmoil {
            self.err_key(
                "turmoil",
                format!(
                    "`turmoil:` applies to `backend: turmoil`, but the backend is `{}`",
                    self.s.backend.name()
                ),
            );
        }
        if let Some(l) = &t.latency {
            self.latency("turmoil.latency", l);
        }
        self.windows("turmoil.hold", &t.hold, "hold");
        self.windows("turmoil.partition", &t.partition, "partition");
        let mut crashes: Vec<(usize, Millis, Option<Millis>, &str)> = Vec::new();
        for (i, c) in t.crash.iter().enumerate() {
            let cp = index("turmoil.crash", i);
            self.endpoint_ref(&join(&cp, "endpoint"), &c.endpoint);
            if let Some(b) = c.bounce_after {
                self.positive(&join(&cp, "bounce_after"), b, "`bounce_after`");
            }
            crashes.push((
                i,
                c.at,
                c.bounce_after.map(|b| Millis(c.at.0.saturating_add(b.0))),
                &c.endpoint,
            ));
        }
        crashes.sort_by_key(|c| (c.3, c.1, c.0));
        for pair in crashes.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.3 == b.3 && a.2.is_none_or(|end| b.1 < end) {
                self.err(
                    &join(&index("turmoil.crash", b.0), "at"),
                    format!("`{}` is still down from turmoil.crash[{}]", b.3, a.0),
                );
            }
        }
    }

    fn windows(&mut self, path: &str, windows: &[WindowSpec], what: &str) {
        let mut spans: Vec<(usize, &str, Millis, Millis)> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            let wp = index(path, i);
            self.endpoint_ref(&join(&wp, "endpoint"), &w.endpoint);
            self.positive(&join(&wp, "for"), w.r#for, "`for`");
            spans.push((
                i,
                &w.endpoint,
                w.at,
                Millis(w.at.0.saturating_add(w.r#for.0)),
            ));
        }
        spans.sort_by_key(|s| (s.1, s.2, s.0));
        for pair in spans.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.1 == b.1 && b.2 < a.3 {
                self.err(
                    &join(&index(path, b.0), "at"),
                    format!("this {what} of `{}` overlaps {path}[{}]", b.1, a.0),
                );
            }
        }
    }

    fn search(&mut self) {
        let Some(search) = &self.s.search else {
            return;
        };
        if search.cases == 0 {
            self.err_expected("search.cases", "`cases: 0` is not allowed", "at least 1");
        }
        for (key, vary) in &search.vary {
            let vp = join("search.vary", key);
            if key.trim().is_empty() {
                self.err_key(&vp, "empty path");
            }
            match vary {
                VarySpec::Integers([a, b]) if a > b => self.err_expected(
                    &vp,
                    format!("range [{a}, {b}] is reversed"),
                    "[min, max] with min <= max",
                ),
                VarySpec::Numbers([a, b])
                    if a.partial_cmp(b) != Some(std::cmp::Ordering::Less) && a != b =>
                {
                    self.err_expected(
                        &vp,
                        format!("range [{a}, {b}] is reversed"),
                        "[min, max] with min <= max",
                    )
                }
                VarySpec::OneOf(values) if values.is_empty() => {
                    self.err_expected(&vp, "no values to choose from", "at least one value")
                }
                _ => {}
            }
        }
        if let Some(c) = &search.invariants.conforms_to {
            self.policy("search.invariants.conforms_to", c);
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, with field ranges checked (RFC 3339, section 5.6).
fn valid_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    if b[13] != b':' || b[16] != b':' {
        return false;
    }
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || min > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &frac[digits..];
    }
    match rest {
        "Z" | "z" => true,
        offset if offset.len() == 6 => {
            let ob = offset.as_bytes();
            matches!(ob[0], b'+' | b'-')
                && ob[3] == b':'
                && two_digits(offset.get(1..3)).is_some_and(|h| h <= 23)
                && two_digits(offset.get(4..6)).is_some_and(|m| m <= 59)
        }
        _ => false,
    }
}

fn two_digits(s: Option<&str>) -> Option<u32> {
    s.filter(|s| s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::valid_rfc3339;

    #[test]
    fn rfc3339() {
        for ok in [
            "2026-01-01T00:00:00Z",
            "2024-02-29T23:59:60.123+05:30",
            "2026-12-31t10:00:00-00:00",
        ] {
            assert!(valid_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+5:30",
            "2026-01-01",
            "2026-01-01T00:00:00Zjunk",
            "２０２６-01-01T00:00:00Z",
        ] {
            assert!(!valid_rfc3339(bad), "{bad}");
        }
    }
}
