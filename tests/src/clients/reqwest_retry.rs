//! [reqwest-retry](https://docs.rs/reqwest-retry/0.9.1) 0.9.1 on reqwest 0.13 and
//! reqwest-middleware 0.5 (feature `reqwest`): `RetryTransientMiddleware` before the
//! harness's transport, in the stack `env.reqwest_client(..)` builds
//! (`retrylab::adapters::reqwest`).
//!
//! Its sleeps are `tokio::time::sleep`, on the virtual clock. Three things are not:
//!
//! - **Jitter.** retry-policies 0.5 (re-exported as `reqwest_retry::policies`) draws jitter
//!   from `rand::rng()`, rand's thread generator, seeded from the operating system: no seed
//!   reaches it, so a jittered run differs every time and cannot be snapshotted. The
//!   builder's default is `Jitter::Full`; the snapshot scenarios set `Jitter::None`, and
//!   `doc_example` (jittered) checks bounds with `snapshot: false`.
//! - **The total-duration budget.** `build_with_total_retry_duration*` stops retrying once
//!   `SystemTime::now()` is that long after the call's first attempt: the real clock,
//!   which barely moves while a run covers seconds or days of virtual time, so the budget
//!   never expires in a scenario (`scenarios/clients/reqwest-retry-total-duration.yaml`).
//!   Bound such a call with `tokio::time::timeout` instead, or rely on a retry count.
//! - **The delay itself** makes a round trip through the real clock: the policy returns
//!   `execute_after = SystemTime::now() + delay`, and the middleware sleeps
//!   `execute_after.duration_since(SystemTime::now())`, the delay less the real time between
//!   the two readings (microseconds). tokio's millisecond timer rounds that back up to the
//!   delay on a whole millisecond; a thread descheduled for over a millisecond between the
//!   two readings would sleep a millisecond short, and a delay under the real time between
//!   them comes out as zero.
//!
//! It keeps a failed response, unread, through its sleep and drops it when it retries: a
//! response with a body ends its attempt when the next one starts, so gaps measured from the
//! end of an attempt come out as 0 (`tests/tests/reqwest.rs`). The scenario files answer
//! with empty bodies, which end their attempts with the head.
//!
//! Retry-After is never read: `RetryPolicy::should_retry(start_time, n_past_retries)` sees no
//! response (`scenarios/clients/reqwest-retry-retry-after.yaml`).

use ::reqwest_middleware as middleware_crate;
use ::reqwest_retry as retry_crate;
use retrylab::Env;

/// `env.reqwest_client` with `middleware` before the harness's transport.
fn client(
    env: &Env,
    middleware: impl middleware_crate::Middleware,
) -> Result<middleware_crate::ClientWithMiddleware, String> {
    env.reqwest_client(|builder| builder.with(middleware))
        .map_err(|error| error.to_string())
}

// Loaded once per reqwest-retry version on purpose: one source, compiled against each
// version's crates (see the file's header).
#[allow(clippy::duplicate_mod)]
#[path = "reqwest_retry/configurations.rs"]
mod configurations;

pub use configurations::*;
