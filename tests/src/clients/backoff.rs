//! [backoff](https://docs.rs/backoff/0.4.0) around [`attempt`]:
//! `backoff::future::retry(backoff, || ...)`.
//!
//! Its sleeps are tokio's (feature `tokio`), on the virtual clock. Its `max_elapsed_time`
//! reads the backoff's `Clock`: the default `SystemClock` is real time, which barely moves
//! during a run; `retrylab::env::VirtualStdClock` (feature `backoff` of retrylab, from
//! `env.std_clock()`) is the run's clock.

use std::time::Duration;

use ::backoff::exponential::ExponentialBackoff;
use ::backoff::{Clock, SystemClock};
use retrylab::env::VirtualStdClock;
use retrylab::{AttemptError, Env, attempt};

/// Exponential from 1s, x2, no randomization (the default, 0.5, draws from `rand`'s thread
/// generator, which no seed reaches), `max_elapsed_time` 10s, on a clock `C`: backoff's
/// defaults otherwise. `retry` resets it (`start_time` = the clock's now) before the first
/// attempt.
fn exponential<C: Clock + Default>() -> ExponentialBackoff<C> {
    ExponentialBackoff {
        current_interval: Duration::from_secs(1),
        initial_interval: Duration::from_secs(1),
        randomization_factor: 0.0,
        multiplier: 2.0,
        max_elapsed_time: Some(Duration::from_secs(10)),
        ..ExponentialBackoff::default()
    }
}

/// Retries 429, 5xx and transport errors (`Error::transient`); the rest is
/// `Error::permanent`.
async fn run<C: Clock + Default>(env: Env) -> Result<u16, AttemptError> {
    ::backoff::future::retry(exponential::<C>(), || async {
        attempt(&env).await.map_err(|error| {
            if error.is_retryable() {
                ::backoff::Error::transient(error)
            } else {
                ::backoff::Error::permanent(error)
            }
        })
    })
    .await
}

/// [`ExponentialBackoff`] on the run's clock: `VirtualStdClock`, what `env.std_clock()`
/// returns.
pub async fn virtual_clock(env: Env) -> Result<u16, AttemptError> {
    run::<VirtualStdClock>(env).await
}

/// [`ExponentialBackoff`] on backoff's default clock, `SystemClock`.
pub async fn system_clock(env: Env) -> Result<u16, AttemptError> {
    run::<SystemClock>(env).await
}
