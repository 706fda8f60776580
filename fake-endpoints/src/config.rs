//! The runtime configuration of an endpoint (the harness converts scenario YAML into these).

use std::fmt::Debug;
use std::time::Duration;

use http::{HeaderName, StatusCode};

use crate::broker::Broker;
use crate::connect::ConnectStep;
use crate::rate_limiter::RateLimit;
use crate::route::Route;
use crate::step::{Respond, Step};

/// When the server closes a kept-alive connection. The default never closes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeepAlive {
    /// Close a connection that has been idle (no request in flight) this long.
    pub idle_timeout: Option<Duration>,
    /// The n-th response on a connection carries `connection: close` and the connection closes.
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

/// Which response a deduplicated request gets once the key has committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Replay {
    /// The response of the request that committed (or, if that one sent none, the first
    /// response sent after the commit).
    #[default]
    FirstCommitted,
}

/// Idempotency-key deduplication, as payment APIs do it.
///
/// The in-flight and mismatch answers are responses, not only statuses, so an endpoint can
/// answer as a real API does: a JSON error body, a `Retry-After` on the in-flight conflict.
///
/// ```
/// use retrylab_endpoints::{secs, Dedupe, Step};
///
/// let dedupe = Dedupe::header("Idempotency-Key").in_flight_status(429).ttl(secs(86_400));
/// assert_eq!(dedupe.mismatch.status.as_u16(), 422);
/// let stripe = Dedupe::header("Idempotency-Key")
///     .in_flight(Step::status(409).retry_after(1).body(r#"{"error":{"type":"idempotency_error"}}"#).respond);
/// assert_eq!(stripe.in_flight.body, r#"{"error":{"type":"idempotency_error"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dedupe {
    /// The request header carrying the key.
    pub header: HeaderName,
    /// What a later request with a committed key gets.
    pub replay: Replay,
    /// The answer to a request whose key is still in flight (default a bare 409).
    pub in_flight: Respond,
    /// The answer to a request reusing a key with a different body (default a bare 422).
    pub mismatch: Respond,
    /// How long a committed key is remembered; `None` = forever.
    pub ttl: Option<Duration>,
}

impl Dedupe {
    /// Deduplicate on `header`, with the defaults (replay first committed, 409, 422, no ttl).
    ///
    /// # Panics
    /// If `header` is not a valid header name.
    pub fn header<N>(header: N) -> Self
    where
        N: TryInto<HeaderName>,
        N::Error: Debug,
    {
        let header = match header.try_into() {
            Ok(name) => name,
            Err(e) => panic!("invalid dedupe header name: {e:?}"),
        };
        Self {
            header,
            replay: Replay::FirstCommitted,
            in_flight: Respond::new(StatusCode::CONFLICT),
            mismatch: Respond::new(StatusCode::UNPROCESSABLE_ENTITY),
            ttl: None,
        }
    }

    /// Status for a request whose key is in flight.
    ///
    /// # Panics
    /// If `status` is outside 100..=999.
    pub fn in_flight_status(mut self, status: u16) -> Self {
        self.in_flight = Respond::new(status_code(status));
        self
    }

    /// The whole answer to a request whose key is in flight.
    pub fn in_flight(mut self, respond: Respond) -> Self {
        self.in_flight = respond;
        self
    }

    /// Status for a request reusing a key with another body.
    ///
    /// # Panics
    /// If `status` is outside 100..=999.
    pub fn mismatch_status(mut self, status: u16) -> Self {
        self.mismatch = Respond::new(status_code(status));
        self
    }

    /// The whole answer to a request reusing a key with another body.
    pub fn mismatch(mut self, respond: Respond) -> Self {
        self.mismatch = respond;
        self
    }

    /// Forget committed keys after `ttl`.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

fn status_code(status: u16) -> StatusCode {
    match StatusCode::from_u16(status) {
        Ok(status) => status,
        Err(_) => panic!("invalid HTTP status code {status}"),
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
}

impl EndpointConfig {
    /// An HTTP endpoint named `name` with no routes (every request gets 404 until one is added).
    pub fn http(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            routes: Vec::new(),
            connect: Vec::new(),
            keep_alive: KeepAlive::default(),
            dedupe: None,
            key_header: None,
            rate_limit: None,
            broker: None,
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
