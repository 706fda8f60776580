//! [tower](https://docs.rs/tower/0.5.3)'s `retry::Retry` middleware around a
//! `tower::Service` that sends one request on `env.http_client()`.
//!
//! tower leaves every decision to a [`Policy`]: whether to retry this result, and a future
//! that delays the retry. Two policies here, as a tower user writes them:
//! [`BackoffPolicy`] sleeps `tower::retry::backoff::ExponentialBackoff` (its sleeps are
//! tokio's), [`BudgetPolicy`] spends a shared `tower::retry::budget::TpsBudget` (which reads
//! `tokio::time::Instant`). Both follow the virtual clock.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ::tower::retry::backoff::{Backoff, ExponentialBackoff, ExponentialBackoffMaker, MakeBackoff};
use ::tower::retry::budget::{Budget, TpsBudget};
use ::tower::retry::{Policy, Retry};
use ::tower::timeout::Timeout;
use ::tower::util::rng::Rng;
use ::tower::{Service, ServiceExt};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use retrylab::env::AttemptBody;
use retrylab::{AttemptError, Env};

/// The request type of these services.
pub type Req = Request<Full<Bytes>>;

/// One attempt as a `tower::Service`: the request on `env.http_client()`, the body read to
/// the end. Any status is a response; only a transport error is an `Err`.
pub fn harness_service(
    env: &Env,
) -> impl Service<
    Req,
    Response = Response<Bytes>,
    Error = AttemptError,
    Future = impl Future<Output = Result<Response<Bytes>, AttemptError>> + use<>,
> + Clone
+ use<> {
    let client = env.http_client();
    ::tower::service_fn(move |request: Req| {
        let sent = client.request(request);
        async move {
            let response = sent.await.map_err(|_| AttemptError::Transport("request"))?;
            let (parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|_| AttemptError::Transport("body"))?
                .to_bytes();
            Ok(Response::from_parts(parts, body))
        }
    })
}

/// A copy of `request` for the next attempt (what `Policy::clone_request` returns).
fn clone_request(request: &Req) -> Req {
    let mut copy = Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// The call's outcome from a result: a 2xx status, or why not (retrylab's
/// [`AttemptError::classify`], as for every client of this module).
fn outcome_of(result: &Result<Response<Bytes>, AttemptError>) -> Result<u16, AttemptError> {
    match result {
        Ok(response) => AttemptError::classify(response.status().as_u16(), response.headers()),
        Err(error) => Err(error.clone()),
    }
}

/// Whether the result is worth another attempt: 429, 5xx, transport errors.
fn retryable(result: &Result<Response<Bytes>, AttemptError>) -> bool {
    outcome_of(result).is_err_and(|error| error.is_retryable())
}

/// The call's outcome from the last result.
fn outcome(result: Result<Response<Bytes>, AttemptError>) -> Result<u16, AttemptError> {
    outcome_of(&result)
}

/// `SplitMix64`, seeded from the scenario: tower's `Rng` for the backoff's jitter (its default,
/// `HasherRng`, is seeded from `RandomState` and differs in every run).
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(seed)
    }
}

impl Rng for SeededRng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Retries 429, 5xx and transport errors up to `retries_left` times, each after the next
/// sleep of tower's `ExponentialBackoff`.
#[derive(Debug, Clone)]
pub struct BackoffPolicy {
    backoff: ExponentialBackoff<SeededRng>,
    retries_left: u32,
}

impl Policy<Req, Response<Bytes>, AttemptError> for BackoffPolicy {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _request: &mut Req,
        result: &mut Result<Response<Bytes>, AttemptError>,
    ) -> Option<Self::Future> {
        if !retryable(result) || self.retries_left == 0 {
            return None;
        }
        self.retries_left -= 1;
        Some(self.backoff.next_backoff())
    }

    fn clone_request(&mut self, request: &Req) -> Option<Req> {
        Some(clone_request(request))
    }
}

/// `ExponentialBackoffMaker::new(250ms, 4s, 0.5, rng)`: 250ms doubling up to 4s, plus a
/// jitter of up to half the delay, 5 retries. The backoff is made in each call, so its rng
/// is seeded per call (`env.call_seed`): every call draws jitter of its own.
pub async fn retry_backoff(env: Env) -> Result<u16, AttemptError> {
    let rng = SeededRng::new(env.call_seed("tower/jitter"));
    let mut maker =
        ExponentialBackoffMaker::new(Duration::from_millis(250), Duration::from_secs(4), 0.5, rng)
            .expect("a valid backoff");
    let policy = BackoffPolicy {
        backoff: maker.make_backoff(),
        retries_left: 5,
    };
    let result = Retry::new(policy, harness_service(&env))
        .oneshot(env.operation().request())
        .await;
    outcome(result)
}

/// The pause before a retry the budget allows.
pub const BUDGET_RETRY_DELAY: Duration = Duration::from_millis(100);

/// Retries 429, 5xx and transport errors while the shared budget allows it, each after
/// [`BUDGET_RETRY_DELAY`]; deposits into the budget on every 2xx (tower's documented use of
/// a `Budget`).
#[derive(Debug, Clone)]
pub struct BudgetPolicy {
    budget: Arc<TpsBudget>,
}

impl Policy<Req, Response<Bytes>, AttemptError> for BudgetPolicy {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _request: &mut Req,
        result: &mut Result<Response<Bytes>, AttemptError>,
    ) -> Option<Self::Future> {
        match result {
            Ok(response) if response.status().is_success() => {
                self.budget.deposit();
                None
            }
            _ if retryable(result) && self.budget.withdraw() => {
                Some(tokio::time::sleep(BUDGET_RETRY_DELAY))
            }
            _ => None,
        }
    }

    fn clone_request(&mut self, request: &Req) -> Option<Req> {
        Some(clone_request(request))
    }
}

thread_local! {
    /// The budget shared by the calls of one client instance, by client index. A budget
    /// spans calls, and a registered client is one function for every run; each run has a
    /// thread of its own (docs/architecture.md#the-run-thread-and-its-guards), and each
    /// client's first call makes a fresh budget, so the clients of a fleet keep theirs apart
    /// as separate processes would.
    static BUDGETS: RefCell<BTreeMap<u32, Arc<TpsBudget>>> = const { RefCell::new(BTreeMap::new()) };
}

/// The budget of this client instance: `TpsBudget::new(1s, 0, 0.25)`: deposits count for
/// 1s, no minimum rate, one retry per 4 deposits. Made inside the run, so its clock is
/// virtual.
fn budget(env: &Env) -> Arc<TpsBudget> {
    BUDGETS.with(|cell| {
        let mut budgets = cell.borrow_mut();
        let fresh = || Arc::new(TpsBudget::new(Duration::from_secs(1), 0, 0.25));
        let budget = budgets.entry(env.client_index()).or_insert_with(fresh);
        if env.call_index() == 0 {
            *budget = fresh();
        }
        Arc::clone(budget)
    })
}

/// tower's `Retry` with [`BudgetPolicy`] on the client instance's budget.
pub async fn retry_budget(env: Env) -> Result<u16, AttemptError> {
    let policy = BudgetPolicy {
        budget: budget(&env),
    };
    let result = Retry::new(policy, harness_service(&env))
        .oneshot(env.operation().request())
        .await;
    outcome(result)
}

/// How long [`timeout_head`]'s `Timeout` waits for a service's answer.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(1);

/// The pause before each of [`timeout_head`]'s retries.
pub const HEAD_RETRY_DELAY: Duration = Duration::from_millis(100);

/// A head-only answer: the response as hyper hands it over, its body still to read.
type HeadResult = Result<Response<AttemptBody>, ::tower::BoxError>;

/// Retries a timeout, a transport error, a 429 or a 5xx up to `retries_left` times, each
/// after [`HEAD_RETRY_DELAY`].
#[derive(Debug, Clone)]
pub struct HeadPolicy {
    retries_left: u32,
}

impl Policy<Req, Response<AttemptBody>, ::tower::BoxError> for HeadPolicy {
    type Future = tokio::time::Sleep;

    fn retry(&mut self, _request: &mut Req, result: &mut HeadResult) -> Option<Self::Future> {
        let retryable = match result {
            Ok(response) => {
                let status = response.status();
                status.is_server_error() || status == http::StatusCode::TOO_MANY_REQUESTS
            }
            Err(_) => true,
        };
        if !retryable || self.retries_left == 0 {
            return None;
        }
        self.retries_left -= 1;
        Some(tokio::time::sleep(HEAD_RETRY_DELAY))
    }

    fn clone_request(&mut self, request: &Req) -> Option<Req> {
        Some(clone_request(request))
    }
}

/// `Retry` (2 retries, [`HEAD_RETRY_DELAY`] apart) around `Timeout` ([`HEAD_TIMEOUT`])
/// around a service answering at the response head; the body is read after `Retry` has
/// answered. A head that comes in time is never timed again: a body that takes a minute
/// takes the call a minute.
pub async fn timeout_head(env: Env) -> Result<u16, AttemptError> {
    let client = env.http_client();
    let head_service = ::tower::service_fn(move |request: Req| client.request(request));
    let service = Retry::new(
        HeadPolicy { retries_left: 2 },
        Timeout::new(head_service, HEAD_TIMEOUT),
    );
    let response = service
        .oneshot(env.operation().request())
        .await
        .map_err(|_| AttemptError::Transport("request"))?;
    let (parts, body) = response.into_parts();
    body.collect()
        .await
        .map_err(|_| AttemptError::Transport("body"))?;
    AttemptError::classify(parts.status.as_u16(), &parts.headers)
}
