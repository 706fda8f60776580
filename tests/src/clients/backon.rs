//! [backon](https://docs.rs/backon/1.6.0) around [`attempt`]: `(|| attempt(&env)).retry(builder)`.
//!
//! backon sleeps with its tokio sleeper (feature `tokio-sleep`), which runs on the
//! simulation's virtual clock. Its exponential factor is an `f32`: delays that are not exact
//! in binary (100ms x 2 = 200.000003ms) reach tokio's millisecond timer a millisecond late,
//! so these clients keep to whole seconds where the schedule is meant to be exact
//! (`tests/tests/backon.rs` shows the late millisecond).

use std::time::Duration;

use ::backon::{ExponentialBuilder, FibonacciBuilder, Retryable};
use retrylab::Env;

use super::{AttemptError, attempt, jitter_seed};

/// `ExponentialBuilder::default()`: no jitter, factor 2, min delay 1s, max delay 60s,
/// 3 retries (backon's documented defaults). Retries 429, 5xx and transport errors.
pub async fn exponential(env: Env) -> Result<u16, AttemptError> {
    (|| attempt(&env))
        .retry(ExponentialBuilder::default())
        .when(AttemptError::is_retryable)
        .await
}

/// `ExponentialBuilder::default().with_jitter()`, its generator seeded from the scenario
/// and the call ([`jitter_seed`]`(env, "backon/jitter")`) so the run is reproducible and
/// each call draws its own delays.
pub async fn exponential_jitter(env: Env) -> Result<u16, AttemptError> {
    let backoff = ExponentialBuilder::default()
        .with_jitter()
        .with_jitter_seed(jitter_seed(&env, "backon/jitter"));
    (|| attempt(&env))
        .retry(backoff)
        .when(AttemptError::is_retryable)
        .await
}

/// `FibonacciBuilder` from 100ms with a maximum delay of 400ms and 6 retries.
pub async fn fibonacci(env: Env) -> Result<u16, AttemptError> {
    let backoff = FibonacciBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_millis(400))
        .with_max_times(6);
    (|| attempt(&env))
        .retry(backoff)
        .when(AttemptError::is_retryable)
        .await
}

/// `ExponentialBuilder::default()` with the `.adjust` closure of backon's documentation:
/// when the error carries a `Retry-After`, sleep that long instead of what backon proposed
/// (even when backon proposed `None`, i.e. its retries are used up); otherwise keep
/// backon's delay.
pub async fn retry_after(env: Env) -> Result<u16, AttemptError> {
    (|| attempt(&env))
        .retry(ExponentialBuilder::default())
        .when(AttemptError::is_retryable)
        .adjust(|error, delay| match error.retry_after() {
            Some(seconds) => Some(Duration::from_secs(seconds)),
            None => delay,
        })
        .await
}
