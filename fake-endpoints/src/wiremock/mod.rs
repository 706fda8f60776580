//! retrylab scripts on a wiremock [`MockServer`](::wiremock::MockServer) (feature `wiremock`).
//!
//! A test that already mocks its HTTP dependencies with wiremock can answer a route with a
//! retrylab script instead of a fixed response: build a [`ScriptResponder`] from an
//! [`EndpointConfig`], mount it with `Mock::given(..).respond_with(responder.clone())`, and
//! each request the mock matches gets the script's next step: its status, headers, body and
//! `Retry-After`, after its latency. Steps with `times`, the last step repeating, several
//! routes with their scopes, and idempotency-key deduplication behave as on retrylab's own
//! endpoints, because the responder runs the same endpoint code; what the endpoint saw and did
//! lands in a [`Ledger`] (`responder.ledger()`).
//!
//! ```
//! use std::time::Duration;
//!
//! use bytes::Bytes;
//! use http_body_util::{BodyExt, Empty};
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use retrylab_endpoints::wiremock::ScriptResponder;
//! use retrylab_endpoints::{EndpointConfig, ResponseOutcome, Step};
//! use wiremock::matchers::method;
//! use wiremock::{Mock, MockServer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = MockServer::start().await;
//! let responder = ScriptResponder::new(EndpointConfig::http("api").script([
//!     Step::status(503).retry_after(1),
//!     Step::status(200).body(r#"{"id":"o-1"}"#),
//! ]))?;
//! // Clones share the script and the ledger: keep one to read the ledger afterwards.
//! Mock::given(method("GET")).respond_with(responder.clone()).mount(&server).await;
//!
//! // A client that retries a 503 once the delay its `Retry-After` asks for has passed.
//! let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
//! let uri: http::Uri = format!("{}/orders/o-1", server.uri()).parse()?;
//! let mut statuses = Vec::new();
//! for _attempt in 0..3 {
//!     let response = client.get(uri.clone()).await?;
//!     let status = response.status().as_u16();
//!     let retry_after = response
//!         .headers()
//!         .get("retry-after")
//!         .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
//!     response.into_body().collect().await?;
//!     statuses.push(status);
//!     match (status, retry_after) {
//!         (503, Some(seconds)) => tokio::time::sleep(Duration::from_secs(seconds)).await,
//!         _ => break,
//!     }
//! }
//! assert_eq!(statuses, [503, 200]);
//!
//! // Every step has run (a commit behind a latency included) once the responder is idle.
//! responder.idle().await;
//! let ledger = responder.ledger().snapshot();
//! assert_eq!(ledger.requests.len(), 2);
//! assert_eq!(ledger.requests[1].path(), "/orders/o-1");
//! // Real milliseconds since the responder was built: the client waited out the second.
//! assert!(ledger.requests[1].at_ms - ledger.requests[0].at_ms >= 1000);
//! assert_eq!(ledger.responses[1].outcome, ResponseOutcome::Sent { status: http::StatusCode::OK });
//! assert_eq!(ledger.effects.len(), 1); // the 2xx committed
//! # Ok(())
//! # }
//! ```
//!
//! This module shares its name with the wiremock crate: next to `use retrylab_endpoints::*;`
//! the name `wiremock` is ambiguous, so write the crate as `::wiremock` there, or import
//! retrylab's items by name as above.
//!
//! # Time
//!
//! wiremock serves on a runtime of its own, in real time, so the ledger's milliseconds are
//! real ones, counted from when the responder was built, and a latency is a real wait
//! (wiremock's `ResponseTemplate::set_delay`). An HTTP-date `Retry-After` is the responder's
//! wall clock when the latency ends, plus the step's offset; [`ScriptResponder::new`] sets that
//! wall clock to the real one, so that a client comparing the date with its own clock waits
//! the offset; [`ScriptResponder::with_clock`] takes another (a fixed epoch gives dates that do
//! not depend on the day the test runs).
//!
//! # What the ledger holds
//!
//! Requests (method, target, headers, body, arrival, the route and step that answered, what
//! dedupe did), responses and effects, as on retrylab's endpoints. wiremock tells a responder
//! nothing about connections, so connection ids and sequence numbers are 0, byte ranges are
//! empty, `end_ms` is `None`, and there are no connect or close records. A response record is
//! written when the step's latency ends, as `Sent`: wiremock does not say whether the client
//! was still there to read it, so a request the client gave up on is never `Abandoned`.
//!
//! Commits run detached from the connection, as retrylab's steps do: a `before_response`
//! commit behind a latency lands in the ledger when the latency ends even if the client has
//! given up by then (a duplicate on timeout). The task that runs it lives on wiremock's
//! runtime, so a commit still pending when the `MockServer` shuts down is lost.
//!
//! # What wiremock cannot do
//!
//! wiremock answers every request it matches with a whole response, on connections it
//! manages itself. [`ScriptResponder::new`] refuses, with an [`Unsupported`] error naming the
//! step, a configuration that asks for anything else:
//!
//! - `fail: close`, `fail: reset` and `fail: hang`: closing, resetting, or holding a
//!   connection open without answering;
//! - `fail: { close | reset: { after_bytes } }`: a response cut mid-way;
//! - `trickle`: a body spread over time;
//! - either of these in a timeline's window or in a branch of a random step;
//! - `scope: connection`: a step counter per connection (wiremock does not say which connection
//!   a request came on);
//! - `keep_alive`: closing connections after an idle time or a number of requests;
//! - a connect schedule that refuses or black-holes connections.
//!
//! retrylab's real backend (`backend: real`, docs/architecture.md#turmoil-and-real-planned)
//! serves the same endpoints on real sockets at 127.0.0.1, with all of these but the connect
//! schedule; refused and black-holed connects need retrylab's simulated network
//! (`backend: sim`, the default).
//!
//! Beside the script, wiremock's server adds a `date` header with the real date (retrylab's
//! endpoints send none), and its own matchers choose which requests reach the responder:
//! a request that no mock matches gets wiremock's 404 and never reaches the ledger.

use std::error::Error;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::wiremock::{Request, ResponseTemplate};
use bytes::Bytes;
use http::{StatusCode, Uri};

use crate::clock::{DEFAULT_EPOCH_UNIX_MS, VirtualClock};
use crate::config::{EndpointConfig, KeepAlive};
use crate::endpoint::Endpoint;
use crate::endpoint::admission::Arrival;
use crate::http::response::SentResponse;
use crate::ledger::Ledger;
use crate::script::connect::ConnectAction;
use crate::script::route::{Matcher, Scope};
use crate::script::step::{Fail, Step};

/// Where each refusal sends the user: the backend that can serve what wiremock cannot.
const REAL_BACKEND: &str = "serve this endpoint with retrylab's real backend (`backend: real`)";

/// What [`Respond::respond`](::wiremock::Respond::respond) answers when it is called outside a
/// tokio runtime, where a step's task cannot run (wiremock's `MockServer` always provides one).
const NO_RUNTIME: &str = "retrylab's ScriptResponder answers only inside a tokio runtime \
    (wiremock's MockServer provides one); nothing was recorded";

/// A [`wiremock::Respond`] that walks a retrylab script: each request
/// gets the next step's status, headers, body and `Retry-After`, delayed by the step's
/// latency, and is recorded in the responder's [`Ledger`].
///
/// Cheap to clone; clones share the script's counters and the ledger, so a clone can be
/// mounted on several mocks (they then consume one script, as one endpoint would) while
/// another reads the ledger. See the [module documentation](self) for a whole test.
#[derive(Clone, Debug)]
pub struct ScriptResponder {
    endpoint: Endpoint,
}

impl ScriptResponder {
    /// A responder running `config`, timing its records from now in real time, with the real
    /// wall clock for HTTP-dates.
    ///
    /// # Errors
    /// [`Unsupported`] when the configuration asks for something wiremock cannot do (a
    /// connection failure, a cut response, a per-connection counter, keep-alive, a connect
    /// schedule that does not accept); the error names the first such item.
    ///
    /// ```
    /// use retrylab_endpoints::wiremock::ScriptResponder;
    /// use retrylab_endpoints::{ms, EndpointConfig, Fail, Step};
    ///
    /// let responder = ScriptResponder::new(EndpointConfig::http("api").script([
    ///     Step::status(503).times(2),
    ///     Step::status(200).latency(ms(250)).body("ok"),
    /// ]));
    /// assert!(responder.is_ok());
    ///
    /// let error = ScriptResponder::new(
    ///     EndpointConfig::http("api").script([Step::status(503), Step::fail(Fail::Reset)]),
    /// )
    /// .unwrap_err();
    /// assert_eq!(error.path(), "endpoints.api.script[1].fail");
    /// assert!(error.to_string().contains("`backend: real`"));
    /// ```
    pub fn new(config: EndpointConfig) -> Result<Self, Unsupported> {
        // wiremock serves real clients in real time, and a client compares an HTTP-date with
        // its own wall clock: dates from the virtual 2026 epoch would be wrong by however long
        // ago that was. Read once, here; every later reading is the clock's.
        let wall_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|since| u64::try_from(since.as_millis()).ok())
            .unwrap_or(DEFAULT_EPOCH_UNIX_MS);
        Self::with_clock(config, VirtualClock::new().with_epoch_unix_ms(wall_ms))
    }

    /// A responder running `config` on `clock`: records in milliseconds since `clock.start`,
    /// HTTP-dates from its wall clock (`clock.epoch_unix_ms` at `clock.start`). The clock
    /// is read on wiremock's runtime, where tokio's clock is the real one.
    ///
    /// # Errors
    /// As [`ScriptResponder::new`].
    ///
    /// ```
    /// use retrylab_endpoints::wiremock::ScriptResponder;
    /// use retrylab_endpoints::{secs, EndpointConfig, RetryAfter, Step, VirtualClock};
    ///
    /// // Dates count from 2026-01-01T00:00:00Z, whatever the day the test runs.
    /// let responder = ScriptResponder::with_clock(
    ///     EndpointConfig::http("api").script([Step::status(503).retry_after(RetryAfter::http_date(secs(30)))]),
    ///     VirtualClock::new(),
    /// )?;
    /// assert_eq!(responder.clock().epoch_unix_ms, 1_767_225_600_000);
    /// # Ok::<(), retrylab_endpoints::wiremock::Unsupported>(())
    /// ```
    pub fn with_clock(config: EndpointConfig, clock: VirtualClock) -> Result<Self, Unsupported> {
        check(&config)?;
        Ok(Self {
            endpoint: Endpoint::new(config, clock),
        })
    }

    /// The responder's ledger (a shared handle): what it received, answered and committed.
    /// Read it after [`ScriptResponder::idle`] to see every commit.
    ///
    /// ```
    /// use retrylab_endpoints::wiremock::ScriptResponder;
    /// use retrylab_endpoints::{EndpointConfig, Step};
    ///
    /// let responder = ScriptResponder::new(EndpointConfig::http("api").script([Step::status(200)]))?;
    /// let ledger = responder.ledger();
    /// assert_eq!(ledger.requests_received(), 0);
    /// # Ok::<(), retrylab_endpoints::wiremock::Unsupported>(())
    /// ```
    pub fn ledger(&self) -> Ledger {
        self.endpoint.ledger()
    }

    /// The clock the records and HTTP-dates are read from.
    pub fn clock(&self) -> VirtualClock {
        self.endpoint.clock()
    }

    /// Resolves once no request is being processed: every step has run its latency, its
    /// commit and its response record. A step behind a latency the client gave up on still
    /// runs; wait for it here before judging the effects.
    ///
    /// ```
    /// use retrylab_endpoints::wiremock::ScriptResponder;
    /// use retrylab_endpoints::{EndpointConfig, Step};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), retrylab_endpoints::wiremock::Unsupported> {
    /// let responder = ScriptResponder::new(EndpointConfig::http("api").script([Step::status(200)]))?;
    /// responder.idle().await; // nothing received, so nothing to wait for
    /// assert_eq!(responder.ledger().effect_count(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn idle(&self) {
        self.endpoint.idle().await;
    }
}

impl ::wiremock::Respond for ScriptResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        // A step's latency, commit and response record run as a task of their own.
        if tokio::runtime::Handle::try_current().is_err() {
            return ResponseTemplate::new(StatusCode::INTERNAL_SERVER_ERROR)
                .set_body_string(NO_RUNTIME);
        }
        match self
            .endpoint
            .admit_at_once(arrival(&self.endpoint, request))
        {
            Some((response, delay)) => template(&response, delay),
            // Only a gate refuses a request, and this endpoint has none.
            None => ResponseTemplate::new(StatusCode::INTERNAL_SERVER_ERROR),
        }
    }
}

/// The request as the endpoint's ledger keeps it. wiremock rebuilt the target into an
/// absolute URL; the ledger keeps the origin form a client sends (`/path?query`), as retrylab's
/// endpoints record it.
fn arrival(endpoint: &Endpoint, request: &Request) -> Arrival {
    let mut target = String::from(request.url.path());
    if let Some(query) = request.url.query() {
        target.push('?');
        target.push_str(query);
    }
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.method = request.method.clone();
    // A URL's path and query are already percent-encoded, so they always make a target.
    parts.uri = Uri::try_from(target).unwrap_or_else(|_| Uri::from_static("/"));
    parts.headers = request.headers.clone();
    Arrival {
        // wiremock does not say which connection a request came on.
        conn_id: 0,
        seq: 0,
        stream_id: None,
        inbound: 0..0,
        head: endpoint.inner.ledger.keep_head(parts),
        body: Bytes::from(request.body.clone()),
    }
}

/// wiremock's template for a response the endpoint decided on, sent after `delay`.
fn template(response: &SentResponse, delay: Duration) -> ResponseTemplate {
    // The conversions are identities (a status code, header pairs and bytes already
    // validated), so wiremock's `expect`s never fire.
    let template = ResponseTemplate::new(response.status)
        .append_headers(response.headers.iter().cloned())
        .set_body_bytes(response.body.to_vec());
    if delay.is_zero() {
        template
    } else {
        template.set_delay(delay)
    }
}

/// A part of an [`EndpointConfig`] that a wiremock responder cannot serve.
///
/// Its [`Display`](fmt::Display) is one sentence: where (`endpoints.api.script[1].fail`, as a
/// scenario file would spell the path), what the item does, and which retrylab backend
/// serves it.
///
/// ```
/// use retrylab_endpoints::wiremock::ScriptResponder;
/// use retrylab_endpoints::{EndpointConfig, Fail, Route, Step};
///
/// let config = EndpointConfig::http("api")
///     .route(Route::get("/health").script([Step::status(200)]))
///     .route(Route::post("/orders").script([Step::status(200).body("{}").fail_with(Fail::close_after(40))]));
/// let error = ScriptResponder::new(config).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "endpoints.api.routes[1].script[0].fail: `fail: { close: { after_bytes: 40 } }` cuts the \
///      response after 40 bytes, which a wiremock responder cannot do (it sends whole responses); \
///      serve this endpoint with retrylab's real backend (`backend: real`)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    path: String,
    message: String,
}

impl Unsupported {
    /// Where the item is, as a scenario would spell its path: `endpoints.api.script[1].fail`,
    /// `endpoints.api.routes[0].scope`, `endpoints.api.connect[0]`, `endpoints.api.keep_alive`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What the item does and which backend serves it, without the path.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl Error for Unsupported {}

/// The first item of `config` a wiremock responder cannot serve, in the order a scenario
/// lists them (routes and their steps, then connect, then keep-alive).
fn check(config: &EndpointConfig) -> Result<(), Unsupported> {
    let endpoint = format!("endpoints.{}", config.name);
    // A bare `script:` is one catch-all route: name its steps as the scenario does.
    let bare = matches!(config.routes.as_slice(), [route] if route.matcher == Matcher::default());
    for (index, route) in config.routes.iter().enumerate() {
        let route_path = if bare {
            endpoint.clone()
        } else {
            format!("{endpoint}.routes[{index}]")
        };
        let script = route
            .script
            .iter()
            .enumerate()
            .map(|(i, step)| ("script", i, step));
        let timeline = route.timeline.iter().enumerate();
        let steps = script.chain(timeline.map(|(i, window)| ("timeline", i, &window.step)));
        for (key, step_index, step) in steps {
            if let Some((path, fail)) = failure(step, format!("{route_path}.{key}[{step_index}]")) {
                return Err(Unsupported {
                    path: format!("{path}.fail"),
                    message: format!("{}; {REAL_BACKEND}", fail_message(fail)),
                });
            }
            if !step.trickle.is_zero() {
                return Err(Unsupported {
                    path: format!("{route_path}.script[{step_index}].trickle"),
                    message: format!(
                        "`trickle` spreads the body over time, which a wiremock responder \
                         cannot do (it sends whole responses); {REAL_BACKEND}"
                    ),
                });
            }
        }
        if route.scope == Scope::Connection {
            return Err(Unsupported {
                path: format!("{route_path}.scope"),
                message: format!(
                    "`scope: connection` keeps a step counter per connection, and wiremock does \
                     not tell a responder which connection a request came on; {REAL_BACKEND}"
                ),
            });
        }
    }
    for (index, connect) in config.connect.iter().enumerate() {
        let action = match connect.action {
            ConnectAction::Accept => continue,
            ConnectAction::Refuse => "refuse",
            ConnectAction::Blackhole => "blackhole",
        };
        return Err(Unsupported {
            path: format!("{endpoint}.connect[{index}]"),
            message: format!(
                "`action: {action}` cannot be made on wiremock's server, which accepts every \
                 connection; refused and black-holed connects need retrylab's simulated network \
                 (`backend: sim`, the default), since its real backend cannot make them either"
            ),
        });
    }
    if config.keep_alive != KeepAlive::default() {
        return Err(Unsupported {
            path: format!("{endpoint}.keep_alive"),
            message: format!(
                "`keep_alive` closes connections after an idle time or a number of requests, \
                 and wiremock's server decides alone when its connections close; {REAL_BACKEND}"
            ),
        });
    }
    Ok(())
}

/// The first failure `step` at `path` may make, with its path: its own, or one of its
/// branches' when it is random.
fn failure(step: &Step, path: String) -> Option<(String, Fail)> {
    if let Some(chance) = &step.chance {
        return failure(&chance.then, format!("{path}.then"))
            .or_else(|| failure(&chance.otherwise, format!("{path}.else")));
    }
    step.fail.map(|fail| (path, fail))
}

/// What a failing step asks for, in the scenario's words, and why wiremock cannot do it.
fn fail_message(fail: Fail) -> String {
    match fail {
        Fail::Close => "`fail: close` closes the connection without a response, which a wiremock \
                        responder cannot do (it answers every request)"
            .to_owned(),
        Fail::Reset => "`fail: reset` resets the connection, which a wiremock responder cannot do \
                        (it answers every request)"
            .to_owned(),
        Fail::Hang => "`fail: hang` holds the connection open without ever answering, which a \
                       wiremock responder cannot do (it answers every request)"
            .to_owned(),
        Fail::CloseAfter { bytes } | Fail::ResetAfter { bytes } => {
            let how = if fail.is_reset() { "reset" } else { "close" };
            format!(
                "`fail: {{ {how}: {{ after_bytes: {bytes} }} }}` cuts the response after {bytes} \
                 bytes, which a wiremock responder cannot do (it sends whole responses)"
            )
        }
        Fail::RstStream { .. } | Fail::GoAway { .. } => {
            "an HTTP/2 stream reset or GOAWAY, which a wiremock responder cannot do (it speaks \
             HTTP/1.1 and answers every request)"
                .to_owned()
        }
    }
}

#[cfg(test)]
mod tests;
