//! [tokio-retry2](https://docs.rs/tokio-retry2/0.6.2) around [`attempt`]:
//! `Retry::spawn(strategy, || action(&env))`.
//!
//! Its delays are `tokio::time::sleep_until`, on the virtual clock. Two parts of it are not:
//! `strategy::jitter` draws from `rand`'s thread generator (no seed can be given, so a
//! jittered run differs every time), and `MaxInterval::max_duration` / `max_interval` measure
//! with `std::time::Instant` (real time, which barely moves during a run).

use std::time::Duration;

use ::tokio_retry2::strategy::{
    ExponentialBackoff, FixedInterval, MaxInterval, jitter as jittered,
};
use ::tokio_retry2::{Retry, RetryError};
use retrylab::{AttemptError, Env, attempt};

/// One attempt, as tokio-retry2 wants it: 429, 5xx and transport errors are transient, the
/// rest permanent. With `honour_retry_after`, a `Retry-After` becomes
/// `RetryError::retry_after(error, duration)`.
async fn action(env: &Env, honour_retry_after: bool) -> Result<u16, RetryError<AttemptError>> {
    attempt(env)
        .await
        .map_err(|error| match (error.is_retryable(), error.retry_after()) {
            (false, _) => RetryError::permanent(error),
            (true, Some(seconds)) if honour_retry_after => {
                RetryError::retry_after(error, Duration::from_secs(seconds))
            }
            (true, _) => RetryError::transient(error),
        })
}

/// The example of tokio-retry2's crate documentation, without its `max_interval`:
/// `ExponentialBackoff::from_millis(10).factor(1).max_delay_millis(100).take(3)`,
/// "First retry in 10ms, second in 100ms, third in 100ms".
pub async fn exponential(env: Env) -> Result<u16, AttemptError> {
    let strategy = ExponentialBackoff::from_millis(10)
        .factor(1)
        .max_delay_millis(100)
        .take(3);
    Retry::spawn(strategy, || action(&env, false)).await
}

/// `ExponentialBackoff::from_millis(2).factor(100)` (200ms, 400ms, 800ms) `.map(jitter)`,
/// 3 retries.
pub async fn jitter(env: Env) -> Result<u16, AttemptError> {
    let strategy = ExponentialBackoff::from_millis(2)
        .factor(100)
        .map(jittered)
        .take(3);
    Retry::spawn(strategy, || action(&env, false)).await
}

/// `FixedInterval::from_millis(100).take(3)`, a 429's `Retry-After` given to tokio-retry2
/// as `RetryError::retry_after`.
pub async fn retry_after(env: Env) -> Result<u16, AttemptError> {
    let strategy = FixedInterval::from_millis(100).take(3);
    Retry::spawn(strategy, || action(&env, true)).await
}

/// `FixedInterval::from_millis(1000).max_duration(5s)`, with `.take(20)` as a backstop.
pub async fn max_duration(env: Env) -> Result<u16, AttemptError> {
    let strategy = FixedInterval::from_millis(1000)
        .max_duration(Duration::from_secs(5))
        .take(20);
    Retry::spawn(strategy, || action(&env, false)).await
}
