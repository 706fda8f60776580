//! Endpoints: kind, routes and scripts, and what each holds of the connection schedule
//! ([`connection`](super::connection)) and deduplication ([`dedupe`](super::dedupe)).

use serde::{Deserialize, Serialize};

use super::connection::{ConnectStepSpec, KeepAliveSpec};
use super::dedupe::DedupeSpec;
use super::headers::HeadersSpec;
use super::step::{StepSpec, TimelineStep};

/// A scripted fake endpoint.
///
/// A bare `script:` (or `timeline:`) is one catch-all route; `routes:` matches requests by
/// method, path and headers, each route with its own script. A request no route matches gets
/// 404 and is reported. An `http` endpoint with no script answers 200 to everything.
///
/// ```
/// use retrylab::scenario::{ConnectStepSpec, EndpointSpec, StepSpec};
///
/// let api = EndpointSpec::http()
///     .script([StepSpec::status(503).times(2), StepSpec::status(200)])
///     .connect([ConnectStepSpec::refuse().times(1), ConnectStepSpec::accept()])
///     .dedupe_on("Idempotency-Key");
/// assert_eq!(api.script.as_ref().map(Vec::len), Some(2));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EndpointSpec {
    /// What the endpoint is (default `http`).
    #[serde(default, skip_serializing_if = "EndpointKind::is_http")]
    pub kind: EndpointKind,
    /// The HTTP versions it speaks: `http1` (default), `http2` (h2c with prior knowledge) or
    /// `auto` (both, told apart by the HTTP/2 connection preface).
    #[serde(default, skip_serializing_if = "Protocol::is_http1")]
    pub protocol: Protocol,
    /// Routes, each with its own script; instead of a bare `script:` (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSpec>,
    /// The catch-all route's steps, consumed in request arrival order (at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Vec<StepSpec>>,
    /// Steps chosen by the virtual instant a request arrives instead of by request count (at most
    /// 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<TimelineStep>>,
    /// Which requests share a script counter (default `endpoint`).
    #[serde(default, skip_serializing_if = "ScriptScope::is_endpoint")]
    pub scope: ScriptScope,
    /// What connection attempts get, in arrival order; the last entry repeats
    /// (default: accept every connection; at most 1,000 entries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<ConnectStepSpec>,
    /// When the endpoint closes idle or used connections (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<KeepAliveSpec>,
    /// HTTP/2: the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, at least 1 (`protocol: http2`
    /// only; default: no limit). A stream past it is refused with `REFUSED_STREAM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_streams: Option<u32>,
    /// Idempotency-key deduplication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<DedupeSpec>,
    /// Rate limiter: tokens refilled per second, above 0, in thousandths at the finest
    /// (`rate_limiter`, where it is required, and `broker`, as its flow control).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Rate limiter: bucket size, at least 1 (`rate_limiter` and `broker`; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Rate limiter: the answer to a request that finds the bucket empty, a preset or a step
    /// (`rate_limiter` and `broker`; default 429 with a `Retry-After` from the refill time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_empty: Option<WhenEmptySpec>,
    /// Broker: the topics it accepts (`broker` only; default: every topic). A send to
    /// another topic is answered 404 with code 40402.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
}

impl EndpointSpec {
    /// An `http` endpoint that answers 200 until given a script.
    pub fn http() -> Self {
        EndpointSpec::default()
    }

    /// An endpoint of another kind.
    pub fn of_kind(kind: EndpointKind) -> Self {
        EndpointSpec {
            kind,
            ..EndpointSpec::default()
        }
    }

    /// Sets the HTTP versions the endpoint speaks.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::Protocol;
    ///
    /// let scenario = Scenario::builder("503 then 200 over HTTP/2")
    ///     .endpoint("api", endpoint().protocol(Protocol::Http2).script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(fixed(ms(100)).max_attempts(3))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin(); // over HTTP/2, since the endpoint speaks nothing else
    /// assert_eq!(report.trace().attempts.len(), 2);
    /// assert_eq!(report.trace().attempts[1].stream_id, Some(3));
    /// ```
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Sets the catch-all script.
    pub fn script(mut self, steps: impl IntoIterator<Item = StepSpec>) -> Self {
        self.script = Some(steps.into_iter().collect());
        self
    }

    /// Adds a route.
    pub fn route(mut self, route: RouteSpec) -> Self {
        self.routes.push(route);
        self
    }

    /// Sets the script scope.
    pub fn scope(mut self, scope: ScriptScope) -> Self {
        self.scope = scope;
        self
    }

    /// Sets the connect schedule.
    pub fn connect(mut self, steps: impl IntoIterator<Item = ConnectStepSpec>) -> Self {
        self.connect = steps.into_iter().collect();
        self
    }

    /// Sets keep-alive behaviour.
    pub fn keep_alive(mut self, keep_alive: KeepAliveSpec) -> Self {
        self.keep_alive = Some(keep_alive);
        self
    }

    /// Makes this a `rate_limiter` of `rate` tokens a second and a bucket of `burst`, in front
    /// of its script.
    ///
    /// ```
    /// use retrylab::scenario::{EndpointKind, EndpointSpec, StepSpec, ThrottlePreset, WhenEmptySpec};
    ///
    /// let limited = EndpointSpec::http()
    ///     .rate_limit(2.0, 5)
    ///     .when_empty(WhenEmptySpec::Preset(ThrottlePreset::RocketmqThrottled))
    ///     .script([StepSpec::status(200)]);
    /// assert_eq!((limited.kind, limited.burst), (EndpointKind::RateLimiter, Some(5)));
    /// ```
    pub fn rate_limit(mut self, rate: f64, burst: u32) -> Self {
        self.kind = EndpointKind::RateLimiter;
        self.rate = Some(rate);
        self.burst = Some(burst);
        self
    }

    /// A `broker` taking sends to `topics` (none: every topic), which stores the sends its
    /// steps commit (see docs/scenario-format.md, "Brokers").
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::{CommitSpec, ConsumerSpec, EndpointSpec, IdempotentBy, StepSpec};
    ///
    /// // Stored on arrival, answered after the producer's 1s timeout: stored again on retry.
    /// let broker = EndpointSpec::broker(["orders"]).script([
    ///     StepSpec::status(200).latency(secs(3)).commit(CommitSpec::Arrival),
    ///     StepSpec::status(200),
    /// ]);
    /// let scenario = Scenario::builder("duplicate")
    ///     .endpoint("broker", broker)
    ///     .operation(post("broker", "/topics/orders/messages").body(r#"{"key": "o-1"}"#))
    ///     .client(fixed(ms(10)).max_attempts(2).attempt_timeout(secs(1)))
    ///     .expect(
    ///         expect()
    ///             .duplicates(1)
    ///             .distinct_keys(false)
    ///             .consumer(ConsumerSpec::idempotent_by(IdempotentBy::Key)),
    ///     )
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// assert!(report.passed(), "{}", report.summary());
    /// assert_eq!(
    ///     report.trace().message_lines(),
    ///     [
    ///         "t=0.000s  broker  orders  id broker-1  key o-1  call 0  attempt #1",
    ///         "t=1.010s  broker  orders  id broker-2  key o-1  call 0  attempt #2",
    ///     ]
    /// );
    /// ```
    pub fn broker<T: Into<String>>(topics: impl IntoIterator<Item = T>) -> Self {
        EndpointSpec {
            kind: EndpointKind::Broker,
            topics: topics.into_iter().map(Into::into).collect(),
            ..EndpointSpec::default()
        }
    }

    /// Whether the endpoint has a token bucket in front of its steps: a `rate_limiter`
    /// always, a `broker` when it sets `rate` (or `burst` or `when_empty`), its flow control.
    pub(crate) fn has_bucket(&self) -> bool {
        let bucket_keys = self.rate.is_some() || self.burst.is_some() || self.when_empty.is_some();
        self.kind == EndpointKind::RateLimiter || (self.kind == EndpointKind::Broker && bucket_keys)
    }

    /// Sets what a rate limiter answers when its bucket is empty.
    pub fn when_empty(mut self, when_empty: WhenEmptySpec) -> Self {
        self.when_empty = Some(when_empty);
        self
    }

    /// Deduplicates requests by this header, with the default replay rules.
    pub fn dedupe_on(mut self, header: impl Into<String>) -> Self {
        self.dedupe = Some(DedupeSpec::header(header));
        self
    }

    /// Deduplicates requests as `dedupe` says: its header, its answers and its ttl.
    ///
    /// ```
    /// use retrylab::scenario::{DedupeAnswerSpec, DedupeSpec, EndpointSpec, RetryAfterSpec, StepSpec};
    ///
    /// let in_flight = StepSpec::status(409)
    ///     .header("Content-Type", "application/json")
    ///     .body(r#"{"error":"in progress"}"#)
    ///     .retry_after(RetryAfterSpec::Seconds(1));
    /// let api = EndpointSpec::http()
    ///     .dedupe(DedupeSpec::header("Idempotency-Key").in_flight(DedupeAnswerSpec::Step(Box::new(in_flight))))
    ///     .script([StepSpec::status(201)]);
    /// assert_eq!(api.dedupe.map(|d| d.in_flight.status()), Some(Some(409)));
    /// ```
    pub fn dedupe(mut self, dedupe: DedupeSpec) -> Self {
        self.dedupe = Some(dedupe);
        self
    }
}

/// The HTTP versions an endpoint speaks (`protocol:`): the endpoints' own type, so the
/// scenario and the endpoint speak one vocabulary.
///
/// ```
/// use retrylab::scenario::Protocol;
/// let p: Protocol = serde_saphyr::from_str("auto").unwrap();
/// assert_eq!(p, Protocol::Auto);
/// assert_eq!(Protocol::default(), Protocol::Http1);
/// ```
pub use retrylab_endpoints::Protocol;

/// What an endpoint is.
///
/// ```
/// use retrylab::scenario::EndpointKind;
/// assert_eq!(EndpointKind::default(), EndpointKind::Http);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EndpointKind {
    /// A scripted HTTP server (HTTP/1.1 unless its `protocol` says otherwise).
    #[default]
    Http,
    /// A RocketMQ-like broker over HTTP/JSON: stores the sends its steps commit.
    Broker,
    /// A token-bucket rate limiter in front of a script.
    RateLimiter,
    /// A dead-letter store: records every message posted to it.
    DeadLetter,
}

impl EndpointKind {
    /// Whether this is `http` (the default).
    pub fn is_http(&self) -> bool {
        *self == EndpointKind::Http
    }

    /// The name as written in YAML.
    pub fn name(&self) -> &'static str {
        match self {
            EndpointKind::Http => "http",
            EndpointKind::Broker => "broker",
            EndpointKind::RateLimiter => "rate_limiter",
            EndpointKind::DeadLetter => "dead_letter",
        }
    }
}

/// A rate limiter's `rate` in thousandths of a token per second, when it is a whole number
/// of them, at least one and at most [`MAX_RATE`](super::bounds::MAX_RATE) tokens a second.
pub(crate) fn millitokens(rate: f64) -> Option<u64> {
    let scaled = rate * 1000.0;
    let whole = scaled.round();
    // Written in decimal, a rate such as 0.3 is not exactly 300 thousandths in binary: a
    // difference far below one thousandth is that, not a finer rate.
    let max = f64::from(super::bounds::MAX_RATE) * 1000.0;
    if !(1.0..=max).contains(&whole) || (scaled - whole).abs() > 1e-6 {
        return None;
    }
    Some(whole as u64)
}

/// What a rate limiter answers a request that finds its bucket empty: a preset's name
/// (`aws_throttling`, `rocketmq_throttled`) or a step's `status`, `headers`, `body` and
/// `retry_after`. Unless the step writes its own `retry_after`, the answer carries a
/// `Retry-After` of the whole seconds until the bucket's next token.
///
/// ```
/// use retrylab::scenario::{ThrottlePreset, WhenEmptySpec};
///
/// let w: WhenEmptySpec = serde_saphyr::from_str("aws_throttling").unwrap();
/// assert_eq!(w, WhenEmptySpec::Preset(ThrottlePreset::AwsThrottling));
/// let w: WhenEmptySpec = serde_saphyr::from_str("{ status: 503 }").unwrap();
/// assert_eq!(w.step().and_then(|s| s.status), Some(503));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum WhenEmptySpec {
    /// A response as a system of record throttles.
    Preset(ThrottlePreset),
    /// A response written out.
    Step(Box<StepSpec>),
}

impl WhenEmptySpec {
    /// The step, when written out.
    pub fn step(&self) -> Option<&StepSpec> {
        match self {
            WhenEmptySpec::Step(step) => Some(step),
            WhenEmptySpec::Preset(_) => None,
        }
    }
}

impl Serialize for WhenEmptySpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            WhenEmptySpec::Preset(preset) => preset.serialize(serializer),
            WhenEmptySpec::Step(step) => step.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for WhenEmptySpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{self, IntoDeserializer, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WhenEmptySpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "`aws_throttling`, `rocketmq_throttled` or a step such as `{ status: 429 }`",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<WhenEmptySpec, E> {
                ThrottlePreset::deserialize(v.into_deserializer()).map(WhenEmptySpec::Preset)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<WhenEmptySpec, A::Error> {
                StepSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|step| WhenEmptySpec::Step(Box::new(step)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A rate limiter's answer as a real system throttles.
///
/// ```
/// use retrylab::scenario::ThrottlePreset;
/// assert_eq!(ThrottlePreset::RocketmqThrottled.name(), "rocketmq_throttled");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThrottlePreset {
    /// An AWS JSON-protocol service: 400, `x-amzn-ErrorType: ThrottlingException` and
    /// `{"__type":"ThrottlingException","message":"Rate exceeded"}`.
    AwsThrottling,
    /// A `RocketMQ` broker: 429 and `{"code":530,"message":"TOO_MANY_REQUESTS"}`.
    RocketmqThrottled,
}

impl ThrottlePreset {
    /// The name as written in YAML.
    pub fn name(&self) -> &'static str {
        match self {
            ThrottlePreset::AwsThrottling => "aws_throttling",
            ThrottlePreset::RocketmqThrottled => "rocketmq_throttled",
        }
    }
}

/// Which requests share a script's step counter.
///
/// ```
/// use retrylab::scenario::ScriptScope;
/// assert_eq!(ScriptScope::default(), ScriptScope::Endpoint);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScriptScope {
    /// One counter for the whole route.
    #[default]
    Endpoint,
    /// One counter per connection.
    Connection,
    /// One counter per client instance.
    Client,
    /// One counter per idempotency key.
    Key,
}

impl ScriptScope {
    /// Whether this is `endpoint` (the default).
    pub fn is_endpoint(&self) -> bool {
        *self == ScriptScope::Endpoint
    }
}

/// A route: requests matching `match` get `script`.
///
/// ```
/// use retrylab::scenario::{MatchSpec, RouteSpec, StepSpec};
///
/// let r = RouteSpec::new(MatchSpec::method_path("POST", "/orders"), [StepSpec::status(201)]);
/// assert_eq!(r.r#match.path.as_deref(), Some("/orders"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RouteSpec {
    /// Which requests take this route.
    pub r#match: MatchSpec,
    /// The route's steps (at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Vec<StepSpec>>,
    /// Steps chosen by the virtual instant a request arrives instead (at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<TimelineStep>>,
    /// Which requests share the route's step counter (default `endpoint`).
    #[serde(default, skip_serializing_if = "ScriptScope::is_endpoint")]
    pub scope: ScriptScope,
}

impl RouteSpec {
    /// A route with a script.
    pub fn new(r#match: MatchSpec, steps: impl IntoIterator<Item = StepSpec>) -> Self {
        RouteSpec {
            r#match,
            script: Some(steps.into_iter().collect()),
            ..RouteSpec::default()
        }
    }
}

/// What a route matches; every given part must match.
///
/// ```
/// use retrylab::scenario::MatchSpec;
/// assert_eq!(MatchSpec::method_path("GET", "/").method.as_deref(), Some("GET"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MatchSpec {
    /// Request method, such as `POST`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Request path, such as `/orders`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Headers the request must carry with these values (at most 64, of 64 KiB in all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<HeadersSpec>,
}

impl MatchSpec {
    /// Matches a method and a path.
    pub fn method_path(method: impl Into<String>, path: impl Into<String>) -> Self {
        MatchSpec {
            method: Some(method.into()),
            path: Some(path.into()),
            headers: None,
        }
    }
}
