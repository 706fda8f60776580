//! `endpoints:`: names, the keys each kind takes, routes, scopes, connect schedules, keep-alive
//! and deduplication ([scenario format](../../../../docs/scenario-format.md#endpoints)).

use super::Validator;
use super::steps::script_view;
use crate::scenario::model::bounds::{
    MAX_ENDPOINT_NAME_CHARS, MAX_ENDPOINTS, MAX_RATE, MAX_ROUTES, MAX_STEPS, endpoint_name_too_long,
};
use crate::scenario::model::dedupe::DedupeAnswerSpec;
use crate::scenario::model::duration::DurationOrNone;
use crate::scenario::model::endpoint::{
    EndpointKind, EndpointSpec, Protocol, ScriptScope, millitokens,
};
use crate::scenario::yaml::locations::{index, join};

impl Validator<'_> {
    pub(super) fn endpoints(&mut self) {
        let count = self.s.endpoints.len();
        self.too_many(
            "endpoints",
            count,
            MAX_ENDPOINTS,
            "endpoints",
            "in a scenario",
        );
        for (name, e) in &self.s.endpoints {
            let path = join("endpoints", name);
            if endpoint_name_too_long(name) {
                let e = self
                    .s
                    .error_at_key(
                        &path,
                        format!(
                            "an endpoint name of {} characters, over the limit of the format",
                            name.chars().count()
                        ),
                    )
                    .with_expected(format!(
                        "at most {MAX_ENDPOINT_NAME_CHARS} characters (the name is the host of \
                         the endpoint's URL)"
                    ));
                self.errors.push(e);
                // Its other errors would all carry the name in their paths: the name first.
                continue;
            }
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
        self.protocol = e.protocol;
        self.max_concurrent_streams(path, e);
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
        if kind == EndpointKind::DeadLetter && e.protocol == Protocol::Http2 {
            let e = self
                .s
                .error_at(
                    &join(path, "protocol"),
                    "a `dead_letter` endpoint cannot speak HTTP/2 only: the built-in clients \
                     hand messages off over HTTP/1.1",
                )
                .with_expected("`http1` or `auto`".to_owned());
            self.errors.push(e);
        }
        if kind == EndpointKind::DeadLetter
            && (e.script.is_some() || e.timeline.is_some() || !e.routes.is_empty())
        {
            self.err(
                &join(path, "kind"),
                "a `dead_letter` endpoint records what it receives and takes no script or routes",
            );
        }
        self.rate_limit(path, e);
        self.broker(path, e);
        self.scripts(path, e);
        self.grpc_protocol(path, e);
        self.connect_schedule(path, e);
        if let Some(k) = &e.keep_alive {
            let kp = join(path, "keep_alive");
            if let DurationOrNone::After(d) = k.idle_timeout {
                self.positive(&join(&kp, "idle_timeout"), d, "`idle_timeout`");
            }
            self.count_at_least_one(&join(&kp, "max_requests"), k.max_requests, "max_requests");
        }
        if let Some(d) = &e.dedupe {
            let dp = join(path, "dedupe");
            self.converts(self.s.header_name_at(&join(&dp, "header"), &d.header));
            if let DurationOrNone::After(t) = d.ttl {
                self.positive(&join(&dp, "ttl"), t, "`ttl`");
            }
            for (key, answer) in [("in_flight", &d.in_flight), ("mismatch", &d.mismatch)] {
                match answer {
                    DedupeAnswerSpec::Step(step) => {
                        self.step(&join(&dp, key), &script_view(step), kind, false);
                    }
                    DedupeAnswerSpec::Status(code) => self.status_code(&join(&dp, key), *code),
                }
            }
        }
    }

    /// A rate limiter's keys, only on `kind: rate_limiter`, and its bucket.
    fn rate_limit(&mut self, path: &str, e: &EndpointSpec) {
        let kind = e.kind;
        let rate_keys = [
            ("rate", e.rate.is_some()),
            ("burst", e.burst.is_some()),
            ("when_empty", e.when_empty.is_some()),
        ];
        for (key, set) in rate_keys {
            // A broker's bucket is its flow control.
            if set && !matches!(kind, EndpointKind::RateLimiter | EndpointKind::Broker) {
                self.err_key(
                    &join(path, key),
                    format!(
                        "`{key}` belongs to `kind: rate_limiter` or `kind: broker`, not `{}`",
                        kind.name()
                    ),
                );
            }
        }
        if e.has_bucket() {
            match e.rate {
                None => self.err_expected(
                    path,
                    format!(
                        "missing required key `rate` for a {}'s token bucket",
                        kind.name()
                    ),
                    "`rate: <tokens per second>`",
                ),
                Some(r) if !(r.is_finite() && r > 0.0) => self.err_expected(
                    &join(path, "rate"),
                    format!("rate {r} is not positive"),
                    "tokens per second, above 0",
                ),
                Some(r) if r > f64::from(MAX_RATE) => self.over_limit(
                    &join(path, "rate"),
                    format_args!("`rate: {r}`"),
                    format!("at most {MAX_RATE} tokens per second"),
                ),
                // The bucket counts thousandths of a token a second, so that its refill
                // schedule is exact in whole milliseconds.
                Some(r) if millitokens(r).is_none() => self.err_expected(
                    &join(path, "rate"),
                    format!("rate {r} is finer than a thousandth of a token per second"),
                    "tokens per second in thousandths at the finest, such as `2` or `0.125`",
                ),
                _ => {}
            }
            self.count_at_least_one(&join(path, "burst"), e.burst, "burst");
            if matches!(e.scope, ScriptScope::Connection | ScriptScope::Key) {
                self.err_expected(
                    &join(path, "scope"),
                    "a token bucket is kept per endpoint or per client",
                    "`scope: endpoint` or `scope: client`",
                );
            }
        }
    }

    /// A broker's keys, only on `kind: broker`, and its topics.
    fn broker(&mut self, path: &str, e: &EndpointSpec) {
        let kind = e.kind;
        if kind == EndpointKind::Broker {
            if !e.routes.is_empty() {
                self.err_expected(
                    &join(path, "routes"),
                    "a broker routes its sends itself (`POST /topics/{topic}/messages`)",
                    "its steps in `script:` or `timeline:`",
                );
            }
            if e.dedupe.is_some() {
                self.err_expected(
                    &join(path, "dedupe"),
                    "a broker does not deduplicate: `RocketMQ` stores every send it is given",
                    "the consumer's deduplication, judged with `expect.consumer: { idempotent_by: key }`",
                );
            }
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
            } else if !is_topic_name(t) {
                // `RocketMQ`'s own rule for topic names; it also keeps the name one segment
                // of the send's path, `/topics/{topic}/messages`.
                // A name over the limit is not quoted: it may be megabytes long.
                let what = if t.len() > MAX_TOPIC_CHARS {
                    format!("a topic name of {} characters", t.chars().count())
                } else {
                    format!("`{t}`")
                };
                self.err_expected(
                    &index(&join(path, "topics"), i),
                    format!("{what} is not a topic name"),
                    format!(
                        "letters, digits, `_`, `-`, `%` and `|`, at most {MAX_TOPIC_CHARS} characters"
                    ),
                );
            }
        }
    }

    /// The endpoint's scripts: its scope, its script or timeline, `when_empty`, and its
    /// routes with theirs.
    fn scripts(&mut self, path: &str, e: &EndpointSpec) {
        let kind = e.kind;
        self.scope(&join(path, "scope"), e.scope);
        if let Some(steps) = &e.script {
            self.script(&join(path, "script"), steps, kind);
        }
        if let Some(steps) = &e.timeline {
            self.timeline(&join(path, "timeline"), steps, kind);
        }
        if let Some(step) = e.when_empty.as_ref().and_then(|w| w.step()) {
            self.step(&join(path, "when_empty"), &script_view(step), kind, false);
        }
        self.too_many(
            &join(path, "routes"),
            e.routes.len(),
            MAX_ROUTES,
            "routes",
            "in an endpoint",
        );
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
                self.converts(self.s.method_at(&join(&rp, "match.method"), m));
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
        self.too_many(
            &join(path, "connect"),
            e.connect.len(),
            MAX_STEPS,
            "entries",
            "in a connect schedule",
        );
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
}

/// The longest topic name `RocketMQ` accepts.
const MAX_TOPIC_CHARS: usize = 127;

/// Whether `name` is a topic name as `RocketMQ` accepts one.
fn is_topic_name(name: &str) -> bool {
    name.len() <= MAX_TOPIC_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '%' | '|'))
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    /// An endpoint name of a megabyte was copied into the path of every error about its
    /// steps, and into every path `unsupported` built: with 1,000 steps, gigabytes. The name
    /// is now its one error, cut short.
    #[test]
    fn a_long_endpoint_name_is_its_only_error() {
        let name = "n".repeat(1024 * 1024);
        let steps = "      - { status: 503, times: 0, trickle: 1s }\n".repeat(1000);
        let src = format!(
            "version: 1\nname: x\nendpoints:\n  ? {name}\n  :\n    script:\n{steps}  api: {{}}\n\
             operation: {{ endpoint: api }}\n"
        );
        let errors = Scenario::from_yaml_str(&src, "x.yaml")
            .map(|_| ())
            .unwrap_err();
        assert_eq!(errors.len(), 1);
        let text = errors.to_string();
        assert!(text.len() < 4500, "{} bytes", text.len());
        assert!(
            text.ends_with(
                "…: an endpoint name of 1048576 characters, over the limit of the format, \
                 expected at most 255 characters (the name is the host of the endpoint's URL)"
            ),
            "{}",
            &text[text.len() - 200..]
        );
    }

    fn errors(endpoint: &str) -> String {
        let src = format!(
            "version: 1\nname: x\nendpoints:\n  api: {endpoint}\noperation: {{ endpoint: api }}\n"
        );
        match Scenario::from_yaml_str(&src, "x.yaml") {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_rate_limiter_counts_thousandths_of_a_token_and_buckets_per_endpoint_or_client() {
        assert_eq!(
            errors("{ kind: rate_limiter, rate: 2.125, burst: 3, scope: client }"),
            ""
        );
        assert_eq!(errors("{ kind: rate_limiter, rate: 0.3 }"), "");
        let finer = errors("{ kind: rate_limiter, rate: 0.0005 }");
        let fast = errors("{ kind: rate_limiter, rate: 2000000 }");
        assert!(
            fast.contains("over the limit of the format, expected at most 1000000"),
            "{fast}"
        );
        assert!(
            finer.contains("api.rate: rate 0.0005 is finer than a thousandth"),
            "{finer}"
        );
        let scope = errors("{ kind: rate_limiter, rate: 1, scope: connection }");
        assert!(scope.contains("per endpoint or per client"), "{scope}");
        let missing = errors("{ kind: rate_limiter }");
        assert!(missing.contains("missing required key `rate`"), "{missing}");
    }

    #[test]
    fn when_empty_is_a_preset_or_a_response() {
        assert_eq!(
            errors("{ kind: rate_limiter, rate: 1, when_empty: aws_throttling }"),
            ""
        );
        assert_eq!(
            errors("{ kind: rate_limiter, rate: 1, when_empty: { status: 503, retry_after: 5 } }"),
            ""
        );
        let delayed =
            errors("{ kind: rate_limiter, rate: 1, when_empty: { status: 429, latency: 1s } }");
        assert!(
            delayed.contains("`latency` in a rate limiter's `when_empty` is not supported yet"),
            "{delayed}"
        );
        let unknown = errors("{ kind: rate_limiter, rate: 1, when_empty: slow_down }");
        assert!(unknown.contains("slow_down"), "{unknown}");
        let misplaced = errors("{ rate: 1 }");
        assert!(
            misplaced
                .contains("`rate` belongs to `kind: rate_limiter` or `kind: broker`, not `http`"),
            "{misplaced}"
        );
    }

    #[test]
    fn dedupe_answers_are_a_status_or_a_response_located_where_written() {
        assert_eq!(
            errors("{ dedupe: { header: K, in_flight: 429, mismatch: 400 } }"),
            ""
        );
        let stripe = "{ dedupe: { header: K, in_flight: { status: 409, retry_after: 1, \
            headers: { content-type: application/json }, body: '{}' }, \
            mismatch: { status: 400, body: '{}' } } }";
        assert_eq!(errors(stripe), "");
        let delayed = errors("{ dedupe: { header: K, in_flight: { status: 409, latency: 1s } } }");
        assert!(
            delayed.contains(
                "x.yaml:4:57 endpoints.api.dedupe.in_flight.latency: `latency` in \
                 `dedupe.in_flight` is not supported yet"
            ),
            "{delayed}"
        );
        let bare = errors("{ dedupe: { header: K, mismatch: { headers: { a: b } } } }");
        assert!(
            bare.contains("x.yaml:4:") && bare.contains("endpoints.api.dedupe.mismatch"),
            "{bare}"
        );
        let range = errors("{ dedupe: { header: K, mismatch: 42 } }");
        assert!(range.contains("status code 42 is out of range"), "{range}");
        let typo = errors("{ dedupe: { header: K, in_flight: { statuss: 409 } } }");
        assert!(typo.contains("did you mean `status`"), "{typo}");
    }

    /// Parsing cannot give a status out of range, but a scenario built in Rust can; building
    /// its endpoint would then panic, so validation names the field instead.
    #[test]
    fn statuses_set_in_rust_are_range_checked() {
        use crate::scenario::DedupeAnswerSpec;
        use crate::scenario::DedupeSpec;
        use crate::scenario::StepSpec;
        let src = "version: 1\nname: x\nendpoints:\n  api: {}\noperation: { endpoint: api }\n";
        let mut s = Scenario::from_yaml_str(src, "x.yaml").unwrap();
        let api = s.endpoints.get_mut("api").unwrap();
        api.dedupe = Some(DedupeSpec::header("K").in_flight(DedupeAnswerSpec::Status(42)));
        api.script = Some(vec![StepSpec::status(1000)]);
        let text = s.validate().unwrap_err().to_string();
        for expected in [
            "endpoints.api.dedupe.in_flight: status code 42 is out of range",
            "endpoints.api.script[0].status: status code 1000 is out of range",
        ] {
            assert!(text.contains(expected), "{text}");
        }
    }
}
