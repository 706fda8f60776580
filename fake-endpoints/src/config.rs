//! The runtime configuration of an endpoint (the harness converts scenario YAML into these).

use std::fmt::Debug;
use std::time::Duration;

use http::HeaderName;

use crate::kinds::broker::Broker;
use crate::kinds::dedupe::Dedupe;
use crate::kinds::rate_limiter::RateLimit;
use crate::script::connect::ConnectStep;
use crate::script::route::Route;
use crate::script::step::Step;

/// When the server closes a kept-alive connection. The default never closes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeepAlive {
    /// Close a connection that has been idle (no request in flight) this long.
    pub idle_timeout: Option<Duration>,
    /// The n-th response on a connection carries `connection: close` and the connection closes
    /// (on HTTP/2, the n-th stream is the last: a GOAWAY follows it and the connection closes
    /// once its streams are done).
    pub max_requests: Option<u32>,
}

impl KeepAlive {
    /// Never close.
    pub fn never_close() -> Self {
        Self::default()
    }

    /// Close connections idle for `timeout`.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// Close each connection after its `n`-th response.
    pub fn max_requests(mut self, n: u32) -> Self {
        self.max_requests = Some(n);
        self
    }
}

/// Which HTTP versions an endpoint speaks (a scenario's `protocol:`). The default is HTTP/1.1.
///
/// `Http2` is HTTP/2 over plain TCP with prior knowledge (h2c, RFC 9113 section 3.3): the
/// client starts with the connection preface, `PRI * HTTP/2.0`, and no upgrade is offered.
/// `Auto` answers both, telling them apart by the first bytes of each connection: the
/// preface is HTTP/2, anything else HTTP/1.1.
///
/// ```
/// use retrylab_endpoints::{EndpointConfig, Protocol};
///
/// let api = EndpointConfig::http("api").protocol(Protocol::Http2);
/// assert_eq!(api.protocol, Protocol::Http2);
/// assert_eq!(EndpointConfig::http("old").protocol, Protocol::Http1);
/// assert_eq!(Protocol::Auto.name(), "auto");
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// HTTP/1.1 only.
    #[default]
    Http1,
    /// HTTP/2 only, with prior knowledge (h2c).
    Http2,
    /// HTTP/1.1 or HTTP/2, told apart by the connection preface.
    Auto,
}

impl Protocol {
    /// The name as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http1",
            Protocol::Http2 => "http2",
            Protocol::Auto => "auto",
        }
    }

    /// Whether this is `http1` (the default).
    pub fn is_http1(&self) -> bool {
        *self == Protocol::Http1
    }
}

/// Everything an endpoint does: routes and their scripts, connect schedule, keep-alive, dedupe.
///
/// ```
/// use retrylab_endpoints::{ms, ConnectStep, Dedupe, EndpointConfig, KeepAlive, Route, Scope, Step};
///
/// let api = EndpointConfig::http("api")
///     .dedupe(Dedupe::header("Idempotency-Key"))
///     .script([
///         Step::status(429).retry_after(2),
///         Step::status(503).times(2),
///         Step::status(200).latency(ms(1500)).body(r#"{"id":"o-1"}"#),
///     ])
///     .connect([ConnectStep::refuse().times(2), ConnectStep::accept()])
///     .keep_alive(KeepAlive::default().max_requests(100));
///
/// let routed = EndpointConfig::http("orders")
///     .route(Route::post("/orders").script([Step::status(201)]).scope(Scope::Key))
///     .key_header("Idempotency-Key");
/// # let _ = (api, routed);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointConfig {
    /// The endpoint's name in the scenario.
    pub name: String,
    /// The HTTP versions it speaks.
    pub protocol: Protocol,
    /// Routes, tried in order; the first match answers.
    pub routes: Vec<Route>,
    /// The connect schedule (empty = accept everything).
    pub connect: Vec<ConnectStep>,
    /// When kept-alive connections close.
    pub keep_alive: KeepAlive,
    /// Idempotency-key deduplication, if any.
    pub dedupe: Option<Dedupe>,
    /// The header whose value is the idempotency key (for `Scope::Key` counters and effect
    /// records); defaults to the dedupe header.
    pub key_header: Option<HeaderName>,
    /// A token bucket in front of the routes, if any.
    pub rate_limit: Option<RateLimit>,
    /// Makes the endpoint a message broker (see [`Broker`]): only sends reach its routes,
    /// and the sends its steps commit are stored messages.
    pub broker: Option<Broker>,
    /// Whether every response carries a `Date` header, written from the endpoint's clock as
    /// the head is handed to the connection (default `false`: the simulated network's
    /// snapshots predate it, and a client there has no clock of its own to compare it with).
    pub date_header: bool,
    /// HTTP/2 only: the `SETTINGS_MAX_CONCURRENT_STREAMS` its server advertises (`None`: h2's
    /// default, no limit). A stream past it is refused with `REFUSED_STREAM` by h2 itself,
    /// unread and unrecorded, as a client that opened it before the SETTINGS arrived finds.
    pub max_concurrent_streams: Option<u32>,
}

impl EndpointConfig {
    /// An HTTP endpoint named `name` with no routes (every request gets 404 until one is added).
    pub fn http(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            protocol: Protocol::Http1,
            routes: Vec::new(),
            connect: Vec::new(),
            keep_alive: KeepAlive::default(),
            dedupe: None,
            key_header: None,
            rate_limit: None,
            broker: None,
            date_header: false,
            max_concurrent_streams: None,
        }
    }

    /// A bare script: appends one catch-all route with an endpoint-scoped counter.
    pub fn script(self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.route(Route::any().script(steps))
    }

    /// A bare timeline: appends one catch-all route whose steps are chosen by the instant a
    /// request arrives (see [`Timeline`](crate::Timeline)).
    ///
    /// ```
    /// use retrylab_endpoints::{secs, EndpointConfig, Step, Window};
    ///
    /// let config = EndpointConfig::http("api").timeline([Window::new(secs(0)..secs(30), Step::status(503))]);
    /// assert_eq!(config.routes[0].timeline[0].until, secs(30));
    /// ```
    pub fn timeline(self, windows: impl IntoIterator<Item = crate::Window>) -> Self {
        self.route(Route::any().timeline(windows))
    }

    /// Append a route.
    pub fn route(mut self, route: Route) -> Self {
        self.routes.push(route);
        self
    }

    /// Append routes.
    pub fn routes(mut self, routes: impl IntoIterator<Item = Route>) -> Self {
        self.routes.extend(routes);
        self
    }

    /// The connect schedule.
    pub fn connect(mut self, steps: impl IntoIterator<Item = ConnectStep>) -> Self {
        self.connect = steps.into_iter().collect();
        self
    }

    /// The HTTP versions the endpoint speaks (default [`Protocol::Http1`]).
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Whether every response carries a `Date` header from the endpoint's clock: the real
    /// backend sends one, so that a client can read an HTTP-date `Retry-After` against the
    /// server's own notion of now.
    pub fn date_header(mut self, on: bool) -> Self {
        self.date_header = on;
        self
    }

    /// HTTP/2 only: the server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    pub fn max_concurrent_streams(mut self, max: u32) -> Self {
        self.max_concurrent_streams = Some(max);
        self
    }

    /// Keep-alive behaviour.
    pub fn keep_alive(mut self, keep_alive: KeepAlive) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// Deduplicate requests by idempotency key.
    pub fn dedupe(mut self, dedupe: Dedupe) -> Self {
        self.dedupe = Some(dedupe);
        self
    }

    /// Puts a token bucket in front of the routes: a request that finds it empty is answered
    /// by the bucket and reaches no route (see [`RateLimit`]).
    ///
    /// ```
    /// use retrylab_endpoints::{EndpointConfig, RateLimit, Step};
    ///
    /// let api = EndpointConfig::http("api")
    ///     .rate_limit(RateLimit::per_second(10).burst(20))
    ///     .script([Step::status(200)]);
    /// assert_eq!(api.rate_limit.map(|r| r.millitokens_per_second), Some(10_000));
    /// ```
    pub fn rate_limit(mut self, rate_limit: RateLimit) -> Self {
        self.rate_limit = Some(rate_limit);
        self
    }

    /// Makes the endpoint a message broker: a request must be a send, `POST
    /// /topics/{topic}/messages` to one of its topics, to reach the routes, and each send a
    /// step commits is stored with an id (see [`Broker`] for the rules).
    ///
    /// ```
    /// use retrylab_endpoints::{Broker, EndpointConfig, Step};
    ///
    /// let broker = EndpointConfig::http("broker").broker(Broker::new()).script([Step::status(200)]);
    /// assert!(broker.broker.is_some());
    /// ```
    pub fn broker(mut self, broker: Broker) -> Self {
        self.broker = Some(broker);
        self
    }

    /// The idempotency key header (for `Scope::Key` and effect records).
    ///
    /// # Panics
    /// If `header` is not a valid header name.
    pub fn key_header<N>(mut self, header: N) -> Self
    where
        N: TryInto<HeaderName>,
        N::Error: Debug,
    {
        match header.try_into() {
            Ok(name) => self.key_header = Some(name),
            Err(e) => panic!("invalid key header name: {e:?}"),
        }
        self
    }

    /// The key header in force: the explicit one, else the dedupe header.
    pub fn effective_key_header(&self) -> Option<&HeaderName> {
        self.key_header
            .as_ref()
            .or(self.dedupe.as_ref().map(|d| &d.header))
    }
}
