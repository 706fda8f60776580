//! backon (`ExponentialBuilder` + `Retryable`) around a call on `env.http_client()`, run
//! against library scenarios. backon sleeps with its tokio sleeper (feature `tokio-sleep`),
//! which runs on the simulation's paused virtual clock: the gaps are exact.
//!
//! The verdicts are checked with `report.passed()`, not `report.assert()`: the library files
//! set `snapshot: true`, and their snapshots hold the built-in client's trace.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use http_body_util::BodyExt;
use retrylab::{Env, Report, Scenario};

fn library(file: &str) -> Scenario {
    let path = format!("{}/../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn verdict<'a>(report: &'a Report, check: &str) -> &'a retrylab::Verdict {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

/// Why one attempt failed (the fields show in the call's outcome, through `Debug`).
#[derive(Debug)]
#[allow(dead_code)]
enum CallError {
    /// A status worth retrying, with its Retry-After in seconds if it had one.
    Retryable {
        status: u16,
        retry_after: Option<u64>,
    },
    /// A status not worth retrying.
    Fatal(u16),
    /// No response, or a body that broke.
    Transport(String),
}

impl CallError {
    fn is_retryable(&self) -> bool {
        !matches!(self, CallError::Fatal(_))
    }
}

/// One attempt: the scenario's request on the harness client, body read to the end.
async fn attempt(env: &Env) -> Result<u16, CallError> {
    let response = env
        .http_client()
        .request(env.operation().request())
        .await
        .map_err(|e| CallError::Transport(e.to_string()))?;
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
        .map_err(|e| CallError::Transport(e.to_string()))?;
    match status {
        200..=299 => Ok(status),
        429 | 500..=599 => Err(CallError::Retryable {
            status,
            retry_after,
        }),
        _ => Err(CallError::Fatal(status)),
    }
}

/// backon's exponential schedule without jitter: `initial`, x2, ..., capped at `max`, for
/// `retries` retries.
///
/// backon multiplies its delay by an `f32` factor (`Duration::mul_f32`), so 100ms x 2 is
/// 200.000003ms, which tokio's millisecond timer rounds up to 201ms: the retry is a
/// millisecond late, and exact gaps catch it (`backon_f32_factor_is_a_millisecond_late`).
/// A delay that reaches `max` is set to `max` exactly.
fn exponential(initial: Duration, max: Duration, retries: usize) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(initial)
        .with_factor(2.0)
        .with_max_delay(max)
        .with_max_times(retries)
}

/// Raises backon's delay to the Retry-After, when there is one.
fn honour_retry_after(error: &CallError, delay: Option<Duration>) -> Option<Duration> {
    match error {
        CallError::Retryable {
            retry_after: Some(seconds),
            ..
        } => delay.map(|d| d.max(Duration::from_secs(*seconds))),
        _ => delay,
    }
}

fn failed(report: &Report) -> Vec<&str> {
    report.failures().map(|v| v.check.as_str()).collect()
}

#[test]
fn backon_with_adjust_meets_the_design_example() {
    // http/429-retry-after.yaml: a 429 with Retry-After 2, two 503s, a slow 200, expecting
    // the full-jitter envelope of an exponential policy from 100ms. backon from 50ms, with
    // `adjust` for Retry-After, sleeps max(50ms, 2s) = 2s, then 101ms and 201ms (50ms x 2
    // and x 4 in f32, rounded up by the timer): inside [0, 200ms] and [0, 400ms].
    let report = library("http/429-retry-after.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(50),
                Duration::from_secs(20),
                3,
            ))
            .when(CallError::is_retryable)
            .adjust(honour_retry_after)
            .await
    });
    assert!(report.passed(), "{}", report.summary());
    let starts: Vec<u64> = report.trace().attempts.iter().map(|a| a.start_ms).collect();
    // Heads at 4ms, then 2ms per attempt on the pooled connection.
    assert_eq!(starts, [0, 2004, 2107, 2310], "{}", report.summary());
    assert_eq!(report.trace().calls[0].end_ms, Some(2310 + 1502));
}

#[test]
fn backon_gives_up_after_max_times() {
    // Two retries (three attempts) against five 503s: 100ms, then 200ms (capped exactly by
    // max_delay), and the call fails at 308ms. The file's stop_reason check reads the
    // built-in client's recorded decisions, which a custom client does not make, so it is
    // the one verdict that fails here.
    let report = library("http/5xx-burst-exceeds-max-attempts.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(100),
                Duration::from_millis(200),
                2,
            ))
            .when(CallError::is_retryable)
            .await
    });
    assert_eq!(failed(&report), ["stop_reason"], "{}", report.summary());
    assert!(
        verdict(&report, "stop_reason")
            .message
            .contains("has no recorded decision")
    );
    assert_eq!(report.trace().calls[0].end_ms, Some(308));
}

#[test]
fn backon_alone_ignores_retry_after_and_is_caught() {
    // backon knows nothing of Retry-After: after a 429 with Retry-After 3 it comes back after
    // 100ms and 200ms. http/retry-after-ignored.yaml expects exactly that defect
    // (must_fail: [retry_after]), so the run passes because retry_after fails.
    let report = library("http/retry-after-ignored.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(100),
                Duration::from_millis(200),
                3,
            ))
            .when(CallError::is_retryable)
            .await
    });
    assert!(report.passed(), "{}", report.summary());
    let caught = verdict(&report, "retry_after");
    assert!(
        caught.message.starts_with("failed as must_fail expects")
            && caught.message.contains("(needed >= 3.000s)"),
        "{}",
        caught.message
    );
}

#[test]
fn backon_with_adjust_honours_retry_after() {
    // `adjust` raises backon's delay to the Retry-After: the same file now fails, because
    // the defect it demonstrates is gone (must_fail: the check passed) and the gaps are 3s.
    let report = library("http/retry-after-ignored.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(100),
                Duration::from_millis(200),
                3,
            ))
            .when(CallError::is_retryable)
            .adjust(honour_retry_after)
            .await
    });
    assert_eq!(
        failed(&report),
        ["gaps", "must_fail"],
        "{}",
        report.summary()
    );
    assert!(verdict(&report, "retry_after").passed());
    // Both retries waited the full 3s from the 429's head.
    let trace = report.trace();
    assert_eq!(trace.attempts[1].start_ms, 3004, "{}", trace.timeline());
    assert_eq!(trace.attempts[2].start_ms, 6006, "{}", trace.timeline());
}

#[test]
fn backon_f32_factor_is_a_millisecond_late() {
    // http/5xx-burst-then-success.yaml expects 100ms, 200ms, 400ms to the millisecond.
    // backon's second and third delays are 200.000003ms and 400.000006ms, which the timer
    // rounds up: the gaps, conforms_to (no jitter: exact delays) and the total time each
    // report the late millisecond; the outcome and attempt count hold.
    let report = library("http/5xx-burst-then-success.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(100),
                Duration::from_secs(20),
                3,
            ))
            .when(CallError::is_retryable)
            .await
    });
    assert_eq!(
        failed(&report),
        ["gaps", "conforms_to", "total_time"],
        "{}",
        report.summary()
    );
    assert!(
        verdict(&report, "gaps")
            .message
            .contains("attempt 3 started 0.201s after attempt 2 ended")
    );
    assert!(verdict(&report, "total_time").message.contains("0.712s"));
    assert!(verdict(&report, "outcome").passed() && verdict(&report, "attempts").passed());
    // Capping at the exact 400ms removes the drift of the last delay only.
    let capped = library("http/5xx-burst-then-success.yaml").run(|env| async move {
        (|| attempt(&env))
            .retry(exponential(
                Duration::from_millis(100),
                Duration::from_millis(400),
                3,
            ))
            .when(CallError::is_retryable)
            .await
    });
    assert!(verdict(&capped, "total_time").message.contains("0.711s"));
}
