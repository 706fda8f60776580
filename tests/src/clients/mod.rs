//! Real retry crates around a call on `env.http_client()`, one module per crate, each
//! configured as the `scenarios/clients/` file that names it says.
//!
//! Every client makes its attempts with [`attempt`]: the scenario's request on the harness
//! client, body read to the end, answer classified. The retry crate decides the rest: whether
//! to retry, and how long to sleep. [`registry`] registers them all for
//! `client: { custom: <name> }`.
//!
//! | name | crate | what |
//! |---|---|---|
//! | `tower_retry_backoff` | tower | `Retry` + a `Policy` sleeping `retry::backoff::ExponentialBackoff` |
//! | `tower_retry_budget` | tower | `Retry` + a `Policy` spending `retry::budget::TpsBudget` |
//! | `backon_exponential` | backon | `ExponentialBuilder::default()` |
//! | `backon_exponential_jitter` | backon | `ExponentialBuilder::default().with_jitter()`, seeded |
//! | `backon_fibonacci` | backon | `FibonacciBuilder`, 100ms, max 400ms, 6 retries |
//! | `backon_retry_after` | backon | `ExponentialBuilder::default()` + the `.adjust` of its docs |
//! | `tokio_retry2_exponential` | tokio-retry2 | the `ExponentialBackoff` example of its docs |
//! | `tokio_retry2_jitter` | tokio-retry2 | `ExponentialBackoff` `.map(jitter)` |
//! | `tokio_retry2_retry_after` | tokio-retry2 | `RetryError::retry_after` on a 429 |
//! | `tokio_retry2_max_duration` | tokio-retry2 | `FixedInterval` `.max_duration(5s)` |
//! | `backoff_virtual_clock` | backoff | `ExponentialBackoff<VirtualStdClock>`, `max_elapsed_time` 10s |
//! | `backoff_system_clock` | backoff | the same on the default `SystemClock` |

use http_body_util::BodyExt;
use retrylab::Env;
use retrylab::suite::Clients;

pub mod backoff;
pub mod backon;
pub mod tokio_retry2;
pub mod tower;

/// Why one attempt did not succeed. Its `Debug` text is the call's outcome in the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptError {
    /// A 429 or a 5xx, with its `Retry-After` in delay-seconds when it had one.
    Retryable {
        /// The status.
        status: u16,
        /// `Retry-After` in seconds.
        retry_after: Option<u64>,
    },
    /// Any other non-2xx status: not worth retrying.
    Fatal(u16),
    /// No response (`request`) or a body that broke (`body`).
    Transport(&'static str),
}

impl AttemptError {
    /// Whether a retry may help: 429, 5xx, transport errors.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, AttemptError::Fatal(_))
    }

    /// The `Retry-After` the answer carried, in seconds.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AttemptError::Retryable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// One attempt: the scenario's request on `env.http_client()`, the body read to the end
/// (the attempt ends there), a 2xx status as success.
pub async fn attempt(env: &Env) -> Result<u16, AttemptError> {
    let response = env
        .http_client()
        .request(env.operation().request())
        .await
        .map_err(|_| AttemptError::Transport("request"))?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    response
        .into_body()
        .collect()
        .await
        .map_err(|_| AttemptError::Transport("body"))?;
    match status {
        200..=299 => Ok(status),
        429 | 500..=599 => Err(AttemptError::Retryable {
            status,
            retry_after,
        }),
        _ => Err(AttemptError::Fatal(status)),
    }
}

/// The seed of a client's jitter for this call: `env.seed(label)` moved on by the call's
/// index. `env.seed(label)` is the same for every call of a run, so a jitter seeded with it
/// alone draws the same delays on every call, and its calls retry in lockstep (what
/// `expect.jitter` reports as delays that do not vary). Call 0 keeps `env.seed(label)`, so
/// single-call scenarios draw what they always drew.
pub fn jitter_seed(env: &Env, label: &str) -> u64 {
    env.seed(label).wrapping_add(u64::from(env.call_index()))
}

/// Every client of this module, by the name `scenarios/clients/` files give in
/// `client: { custom: <name> }`.
pub fn registry() -> Clients {
    Clients::new()
        .register("tower_retry_backoff", tower::retry_backoff)
        .register("tower_retry_budget", tower::retry_budget)
        .register("backon_exponential", backon::exponential)
        .register("backon_exponential_jitter", backon::exponential_jitter)
        .register("backon_fibonacci", backon::fibonacci)
        .register("backon_retry_after", backon::retry_after)
        .register("tokio_retry2_exponential", tokio_retry2::exponential)
        .register("tokio_retry2_jitter", tokio_retry2::jitter)
        .register("tokio_retry2_retry_after", tokio_retry2::retry_after)
        .register("tokio_retry2_max_duration", tokio_retry2::max_duration)
        .register("backoff_virtual_clock", backoff::virtual_clock)
        .register("backoff_system_clock", backoff::system_clock)
}
