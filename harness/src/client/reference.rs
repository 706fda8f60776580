//! The reference client: a generic HTTP retry loop driven by a [`Policy`].
//!
//! It is what a scenario's `client:` runs, and the yardstick the policy's envelope is tested
//! against: each decision is recorded in the trace with the policy's state after it, so a
//! snapshot shows why it retried or stopped.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use http_body_util::BodyExt;

use crate::Env;
use crate::env::{HttpClient, Operation};
use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Decision, Observed, Policy, RetryAfterValue,
    StopReason, TRANSPARENT_RETRIES_PER_CALL, grpc,
};
use crate::rng::Stream;
use crate::trace::{AttemptOutcome, DecisionKind};

/// Why a call of the reference client failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    /// The policy's stop reason.
    pub reason: StopReason,
    /// What the last attempt came to (`503`, `timeout`, ...); for an answer carrying a gRPC
    /// status, that status and its message (`200 grpc UNAVAILABLE: overloaded`).
    pub last: String,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (last attempt: {})", self.reason, self.last)
    }
}

impl std::error::Error for CallError {}

/// Runs a policy over `env.http_client()` (`env.http2_client()` when the operation's endpoint
/// speaks HTTP/2 only), one attempt after another, sleeping in virtual
/// time as the policy decides.
///
/// The policy's state (a retry quota, say) lives as long as the client, so keep one
/// `ReferenceClient` per client instance across calls. Calls of one client may run at once
/// (`operation.concurrency`): each takes the policy only for a decision, never across an
/// await, so concurrent calls draw on one quota in the order their attempts end, as an SDK's
/// calls sharing one client do.
///
/// ```
/// use std::time::Duration;
/// use retrylab::client::ReferenceClient;
/// use retrylab::policy::ExponentialConfig;
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
///
/// let scenario = Scenario::builder("two 503s")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(503).times(2), StepSpec::status(200)]))
///     .operation(OperationSpec::get("api", "/"))
///     .build()
///     .unwrap();
/// let client = ReferenceClient::new(ExponentialConfig::default().into_policy())
///     .attempt_timeout(Duration::from_secs(2))
///     .shared();
/// let report = scenario.run(move |env| {
///     let client = client.clone();
///     async move { client.call(&env).await }
/// });
/// assert_eq!(report.trace().attempts.len(), 3);
/// ```
#[derive(Debug)]
pub struct ReferenceClient {
    attempt_timeout: Option<Duration>,
    /// Whether a request the server never processed is sent again outside the policy's
    /// count (`policy::transparent`); on unless turned off.
    transparent_retries: bool,
    /// Taken for one step of a call at a time (a decision, the headers of an attempt), never
    /// across an await: that is what lets the calls of one client overlap.
    state: Mutex<State>,
}

/// What the calls of one client share.
#[derive(Debug)]
struct State {
    policy: Box<dyn Policy>,
    /// Calls begun so far: the index the next call gets.
    calls: u32,
    /// Attempts ended so far, by every call of the client.
    attempts: u64,
    /// The jitter stream lives as long as the client: every call draws new numbers, in the
    /// order the client's decisions are made.
    rng: Option<Stream>,
}

/// A reference client shared by the calls of one client instance.
pub(super) type SharedClient = Arc<ReferenceClient>;

impl ReferenceClient {
    /// A client following `policy`.
    pub fn new(policy: Box<dyn Policy>) -> ReferenceClient {
        ReferenceClient {
            attempt_timeout: None,
            transparent_retries: true,
            state: Mutex::new(State {
                policy,
                calls: 0,
                attempts: 0,
                rng: None,
            }),
        }
    }

    /// Gives up on an attempt (head and body) after `timeout`.
    pub fn attempt_timeout(mut self, timeout: Duration) -> ReferenceClient {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// Whether a request the server never processed (HTTP/2's `REFUSED_STREAM`, a stream
    /// above a GOAWAY's last stream id) is retried transparently, at once and outside the
    /// policy's count, as gRPC's A6 does (on by default). Off, every attempt counts and waits
    /// the policy's backoff: the client the conformance check tells apart.
    pub fn transparent_retries(mut self, on: bool) -> ReferenceClient {
        self.transparent_retries = on;
        self
    }

    /// Wraps the client for sharing across the calls of a run's closure.
    pub fn shared(self) -> SharedClient {
        Arc::new(self)
    }

    /// Runs one call of a shared client (the same as [`call`](Self::call)).
    pub async fn call_shared(client: &SharedClient, env: &Env) -> Result<u16, CallError> {
        client.call(env).await
    }

    /// The client's state for one step. A policy that panicked while it held the lock
    /// poisoned it; that panic fails the run, and the calls still in flight only need a state
    /// to finish with, so the lock is taken as it is.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Performs the scenario's operation once, retrying as the policy decides. Returns the
    /// final status on success.
    pub async fn call(&self, env: &Env) -> Result<u16, CallError> {
        let http = env.operation_client();
        let operation = env.operation();
        let clock = *env.clock();
        let (client_history, first_start) = self.begin_call(env);
        if first_start > clock.now_ms() {
            tokio::time::sleep_until(clock.start + Duration::from_millis(first_start)).await;
        }
        let mut previous: Vec<AttemptView> = Vec::new();
        let mut transparent = 0;
        // The start of a transparent retry's attempt, which the attempt after it takes over:
        // to the policy they are one attempt.
        let mut folded_start: Option<u64> = None;
        loop {
            let n = previous.len() as u32 + 1;
            let made = self
                .attempt(env, &http, &operation, n, &client_history)
                .await;
            let Made {
                id,
                mut view,
                outcome,
                body,
                unprocessed,
            } = made;
            // The server never processed the request (REFUSED_STREAM, or a stream above a
            // GOAWAY's last stream id): sent again at once, outside the policy's count and
            // backoff, as gRPC's A6 does, once a call (`policy::transparent`).
            if unprocessed && self.transparent_retries && transparent < TRANSPARENT_RETRIES_PER_CALL
            {
                transparent += 1;
                folded_start.get_or_insert(view.start_ms);
                if let Some(id) = id {
                    let kind = DecisionKind::Retry {
                        delay_ms: 0,
                        from: Anchor::End,
                    };
                    http.record_decision(id, kind, Some("transparent retry: not counted"));
                }
                continue;
            }
            if let Some(start) = folded_start.take() {
                view.start_ms = start;
            }
            let history = CallHistory::new(&previous, &client_history);
            let (decision, shown, wait_after_stop) =
                self.decide(env, &mut view, outcome, body.as_ref(), &history);
            let kind = match &decision {
                Decision::Retry {
                    delay,
                    measured_from,
                } => DecisionKind::Retry {
                    delay_ms: delay.as_millis() as u64,
                    from: *measured_from,
                },
                Decision::Stop(reason) => DecisionKind::Stop(*reason),
            };
            if let Some(id) = id {
                http.record_decision(id, kind, shown.as_deref());
            }
            // A policy may sleep before the call fails (AWS 2.1 long polling).
            if !wait_after_stop.is_zero() {
                let at = view
                    .end_ms
                    .saturating_add(wait_after_stop.as_millis() as u64);
                tokio::time::sleep_until(clock.start + Duration::from_millis(at)).await;
            }
            match decision {
                Decision::Stop(StopReason::Success) => {
                    return match outcome {
                        Observed::Status(status) => Ok(status),
                        _ => Ok(0),
                    };
                }
                Decision::Stop(reason) => {
                    // Over HTTP/1.1 whatever the operation spoke: a dead-letter endpoint speaks
                    // `http1` or `auto`.
                    hand_off_to_dead_letters(env, &env.http_client(), &operation).await;
                    // A gRPC error is its status and message, which the HTTP 200 carrying
                    // them does not say.
                    let last = grpc::status::describe(&view).unwrap_or_else(|| outcome.noun());
                    return Err(CallError { reason, last });
                }
                Decision::Retry {
                    delay,
                    measured_from,
                } => {
                    let target = view.anchor_ms(measured_from) + delay.as_millis() as u64;
                    // Kept for the rest of the call (up to the run's whole attempt limit): not
                    // with the room pushing left (four pairs' worth for a single header).
                    view.headers.shrink_to_fit();
                    previous.push(view);
                    let next_start = target.max(clock.now_ms());
                    tokio::time::sleep_until(clock.start + Duration::from_millis(next_start)).await;
                }
            }
        }
    }

    /// Counts a call in the client's history, and reserves the start of its first attempt:
    /// a rate limit spanning the client's calls may hold it back, and a call beginning beside
    /// this one waits its turn.
    fn begin_call(&self, env: &Env) -> (ClientHistory, u64) {
        let mut state = self.state();
        let history = ClientHistory {
            client_index: env.client_index(),
            call_index: state.calls,
            attempts_before: state.attempts,
        };
        state.calls = state.calls.saturating_add(1);
        let now = env.clock().now_ms();
        let wait = state.policy.wait_before_call(now);
        let start = now.saturating_add(wait.as_millis() as u64);
        state.policy.reserve_call(start);
        (history, start)
    }

    /// Makes attempt `n`: sends the operation with the policy's headers, bounded by the
    /// shorter of the policy's and the scenario's attempt timeout, reads the answer to its
    /// end, and describes it as the policy sees it.
    async fn attempt(
        &self,
        env: &Env,
        http: &HttpClient,
        operation: &Operation,
        n: u32,
        client_history: &ClientHistory,
    ) -> Made {
        let clock = *env.clock();
        let mut request = operation.request();
        // The policy's say on the attempt, read in one step: its headers, and the bound it
        // sets on the attempt's time (gRPC's connect deadline).
        let (headers, policy_timeout) = {
            let state = self.state();
            (
                state.policy.request_headers(n),
                state.policy.attempt_timeout(client_history, n),
            )
        };
        for (name, value) in headers {
            request.headers_mut().insert(name, value);
        }
        let (id, sending) = http.send(request);
        let attempt = async {
            let response = sending.await.map_err(|e| transport_kind(&e))?;
            let status = response.status().as_u16();
            let (parts, body) = response.into_parts();
            // Reading the body ends the attempt; a body that breaks is a transport error,
            // whatever the status of the head before it. Its trailers (gRPC's status after a
            // message) come with its end.
            let collected = body.collect().await.map_err(|e| transport_kind(&e))?;
            let trailers = collected.trailers().cloned();
            let answer = Answer {
                status,
                headers: parts.headers,
                trailers,
                body: collected.to_bytes(),
            };
            Ok::<_, Option<std::io::ErrorKind>>(answer)
        };
        // The policy may bound its attempts itself (gRPC's connect deadline); the shorter of
        // that and the scenario's `attempt_timeout` applies.
        let timeout = match (self.attempt_timeout, policy_timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let result = match timeout {
            Some(timeout) => tokio::time::timeout(timeout, attempt).await.ok(),
            None => Some(attempt.await),
        };
        // No id: the request was no attempt of the run (it outlived its run).
        let recorded = id.and_then(|id| http.recorded(id));
        let (start_ms, head_ms, end_ms, traced) = match recorded {
            Some(a) => (
                a.start_ms,
                a.head_ms,
                a.end_ms.unwrap_or_else(|| clock.now_ms()),
                a.outcome,
            ),
            None => (
                clock.now_ms(),
                None,
                clock.now_ms(),
                AttemptOutcome::Unfinished,
            ),
        };
        let unprocessed = matches!(result, Some(Err(_))) && traced.is_unprocessed();
        let (outcome, fields, body) = match result {
            None => (Observed::Timeout, None, None),
            Some(Ok(answer)) => (
                Observed::Status(answer.status),
                Some((answer.headers, answer.trailers)),
                Some(answer.body),
            ),
            Some(Err(kind)) => {
                let observed = match traced.observed() {
                    // The head arrived, then the body broke.
                    Some(Observed::Status(_)) | None => {
                        Observed::Transport(kind.unwrap_or(std::io::ErrorKind::UnexpectedEof))
                    }
                    Some(observed) => observed,
                };
                (observed, None, None)
            }
        };
        let mut view = AttemptView::new(n, outcome, start_ms, head_ms, end_ms);
        let at = head_ms.unwrap_or(end_ms);
        view = view.with_system_ms(clock.epoch_unix_ms as i64 + at as i64);
        if let Some((headers, trailers)) = &fields {
            if let Some(value) = RetryAfterValue::from_headers(headers) {
                view = view.with_retry_after(value);
            }
            // The head's fields, then the trailers': response metadata in arrival order, as
            // gRPC's status and pushback travel in either (`policy::grpc::status`).
            for (name, value) in headers.iter().chain(trailers.iter().flatten()) {
                view = view.with_header(name.as_str(), &String::from_utf8_lossy(value.as_bytes()));
            }
        }
        Made {
            id,
            view,
            outcome,
            body,
            unprocessed,
        }
    }

    /// One step under the client's lock: the attempt is classified, decided and counted, and
    /// the state shown beside the decision is the state it left. Returns the decision, that
    /// state, and how long the policy waits before the call fails when it stops.
    fn decide(
        &self,
        env: &Env,
        view: &mut AttemptView,
        outcome: Observed,
        body: Option<&bytes::Bytes>,
        history: &CallHistory<'_>,
    ) -> (Decision, Option<String>, Duration) {
        let mut state = self.state();
        let state = &mut *state;
        if let (Observed::Status(status), Some(body)) = (outcome, body) {
            if let Some(code) = state.policy.error_code(status, &view.headers, body) {
                view.error_code = Some(code);
            }
        }
        state.attempts = state.attempts.saturating_add(1);
        let rng = state.rng.get_or_insert_with(|| {
            let label = format!("client/{}/jitter", env.client_index());
            Stream::new(env.seed_value(), &label)
        });
        let decision = state.policy.decide(view, history, rng);
        let shown = state.policy.describe_state();
        let wait = match decision {
            Decision::Stop(_) => state.policy.wait_after_stop(),
            Decision::Retry { .. } => Duration::ZERO,
        };
        (decision, shown, wait)
    }
}

/// A response read to its end: its status, head, trailers (when it sent any) and body.
struct Answer {
    status: u16,
    headers: http::HeaderMap,
    trailers: Option<http::HeaderMap>,
    body: bytes::Bytes,
}

/// An attempt made: its id in the trace (none for a request that outlived its run), what
/// the policy sees of it, its body, which a policy may read an error code from, and whether
/// the server never processed it (a transparent retry's cue).
struct Made {
    id: Option<u32>,
    view: AttemptView,
    outcome: Observed,
    body: Option<bytes::Bytes>,
    unprocessed: bool,
}

/// A message given up on goes to the scenario's dead-letter endpoint, when it has one (SNS's
/// redrive policy; for other policies, the local dead-letter store the application is advised
/// to keep). The hand-off's own failure does not change the call's.
async fn hand_off_to_dead_letters(env: &Env, http: &HttpClient, operation: &Operation) {
    if let Some(url) = env.dead_letter_url() {
        let mut message = operation.request();
        *message.method_mut() = http::Method::POST;
        if let Ok(uri) = url.parse() {
            *message.uri_mut() = uri;
            let _ = http.hand_off(message).await;
        }
    }
}

/// The `io::ErrorKind` somewhere in an error's chain, if any.
fn transport_kind(error: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut source = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = cause.source();
    }
    None
}
