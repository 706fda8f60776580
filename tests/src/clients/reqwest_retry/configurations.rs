//! The reqwest-retry configurations of `scenarios/clients/reqwest-retry-*.yaml`, written once
//! and compiled once per reqwest-retry version: the parent module names the version's
//! reqwest-retry `retry_crate` and gives `client`, the `Env` shorthand of
//! its reqwest version (`reqwest_retry.rs` for reqwest-retry 0.9 on reqwest 0.13,
//! `reqwest_retry_0_8.rs` for reqwest-retry 0.8 on reqwest 0.12).

use std::time::Duration;

use retrylab::Env;

use super::retry_crate as reqwest_retry;
use reqwest_retry::policies::ExponentialBackoff;
use reqwest_retry::{Jitter, RetryPolicy, RetryTransientMiddleware};

/// How a call through reqwest-retry ended when it did not end in a 2xx.
#[derive(Debug)]
pub enum Failure {
    /// The last response's status: reqwest-retry hands the last response back when it gives
    /// up, or when the status is not one it retries.
    Status(u16),
    /// The stack's error, with its causes (`: `-separated).
    Error(String),
}

/// The scenario's operation sent through `RetryTransientMiddleware::new_with_policy(policy)`
/// and the harness's transport, its final response's body read to the end.
async fn call<P>(env: Env, policy: P) -> Result<u16, Failure>
where
    P: RetryPolicy + Send + Sync + 'static,
{
    let client = super::client(&env, RetryTransientMiddleware::new_with_policy(policy))
        .map_err(Failure::Error)?;
    let operation = env.operation();
    let response = client
        .request(operation.method.clone(), operation.url.as_str())
        .headers(operation.headers.clone())
        .body(operation.body.clone())
        .send()
        .await
        .map_err(|error| Failure::Error(chain(&error)))?;
    let status = response.status().as_u16();
    response
        .bytes()
        .await
        .map_err(|error| Failure::Error(chain(&error)))?;
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(Failure::Status(status))
    }
}

/// `error` and its causes, as one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `ExponentialBackoff`, bounds [100ms, 1s], base 2, no jitter, 5 retries: 100ms, 200ms,
/// 400ms, 800ms, 1s.
pub async fn exponential(env: Env) -> Result<u16, Failure> {
    let policy = ExponentialBackoff::builder()
        .retry_bounds(Duration::from_millis(100), Duration::from_secs(1))
        .jitter(Jitter::None)
        .base(2)
        .build_with_max_retries(5);
    call(env, policy).await
}

/// The example of reqwest-retry's crate documentation:
/// `ExponentialBackoff::builder().build_with_max_retries(3)`, so the builder's defaults:
/// bounds [1s, 30m], base 2, `Jitter::Full` (drawn from rand's thread generator).
pub async fn doc_example(env: Env) -> Result<u16, Failure> {
    call(env, ExponentialBackoff::builder().build_with_max_retries(3)).await
}

/// `build_with_total_retry_duration_and_max_retries(5s, 20)`, bounds [1s, 1s], no jitter:
/// a retry a second for 5s, 20 retries as a backstop.
pub async fn total_duration(env: Env) -> Result<u16, Failure> {
    let policy = ExponentialBackoff::builder()
        .retry_bounds(Duration::from_secs(1), Duration::from_secs(1))
        .jitter(Jitter::None)
        .build_with_total_retry_duration_and_max_retries(Duration::from_secs(5), 20);
    call(env, policy).await
}

/// The policy of the example in `build_with_total_retry_duration_and_limit_retries`' docs:
/// total duration 24h, bounds [1s, 24h], base 2 (no jitter, which its count leaves out).
pub fn limit_retries_policy() -> reqwest_retry::policies::ExponentialBackoffTimed {
    ExponentialBackoff::builder()
        .retry_bounds(Duration::from_secs(1), Duration::from_secs(24 * 60 * 60))
        .jitter(Jitter::None)
        .base(2)
        .build_with_total_retry_duration_and_limit_retries(Duration::from_secs(24 * 60 * 60))
}

/// [`limit_retries_policy`] in `RetryTransientMiddleware`.
pub async fn limit_retries(env: Env) -> Result<u16, Failure> {
    call(env, limit_retries_policy()).await
}
