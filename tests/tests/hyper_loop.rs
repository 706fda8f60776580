//! A user's hand-written retry loop over hyper, run against library scenarios.
//!
//! These tests check the verdicts with `report.passed()` rather than `report.assert()`: the
//! library files set `snapshot: true`, and their snapshots record the built-in client's
//! trace (tests/tests/scenarios.rs), which another client does not reproduce byte for byte.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use retrylab::{Env, Scenario};

/// A library scenario, by its path under `scenarios/`.
fn library(file: &str) -> Scenario {
    let path = format!("{}/../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// What the loop retries.
fn retryable(status: u16) -> bool {
    status == 429 || status == 409 || status >= 500
}

/// The user's client: fixed pause, an optional per-attempt timeout covering head and body,
/// Retry-After honoured in both forms (delay-seconds from the head, HTTP-date against the
/// virtual wall clock `env.now_system()`), every body read to the end. Returns the status
/// and body of the first answer it does not retry.
async fn retry_loop(
    env: Env,
    max_attempts: u32,
    pause: Duration,
    timeout: Option<Duration>,
) -> Result<(u16, String), String> {
    let client = env.http_client();
    let mut last = String::new();
    for attempt in 1..=max_attempts {
        let sent = async {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| format!("request: {e}"))?;
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // Measured from the head, as RFC 9110 says for delay-seconds.
            let head_at = tokio::time::Instant::now();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e}"))?
                .to_bytes();
            Ok::<_, String>((status, retry_after, head_at, body))
        };
        let outcome = match timeout {
            Some(t) => tokio::time::timeout(t, sent)
                .await
                .unwrap_or_else(|_| Err("timeout".into())),
            None => sent.await,
        };
        let mut wake = tokio::time::Instant::now() + pause;
        match outcome {
            Ok((status, retry_after, head_at, body)) => {
                let body = String::from_utf8_lossy(&body).into_owned();
                if !retryable(status) {
                    return Ok((status, body));
                }
                if let Some(value) = retry_after {
                    if let Ok(seconds) = value.trim().parse::<u64>() {
                        wake = wake.max(head_at + Duration::from_secs(seconds));
                    } else if let Ok(date) = httpdate::parse_http_date(&value) {
                        let wait = date
                            .duration_since(env.now_system())
                            .unwrap_or(Duration::ZERO);
                        wake = wake.max(tokio::time::Instant::now() + wait);
                    }
                }
                last = format!("{status}");
            }
            Err(error) => last = error,
        }
        if attempt < max_attempts {
            tokio::time::sleep_until(wake).await;
        }
    }
    Err(format!("gave up after {max_attempts} attempts: {last}"))
}

#[test]
fn honours_retry_after_http_dates_to_the_millisecond() {
    // Exact gaps (30.996s, 20.998s, 10.998s) and `retry_after: { honour: exact }`: the loop
    // sleeps until the date, compared with the virtual wall clock.
    let report = library("http/retry-after-http-date.yaml")
        .run(|env| retry_loop(env, 4, Duration::from_secs(1), None));
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.trace().attempts.len(), 4);
    assert_eq!(report.trace().calls[0].end_ms, Some(63_002));
}

#[test]
fn deduplicated_retry_gets_the_replayed_response() {
    // Attempt 1 commits and times out; attempt 2 meets the key in flight (409) and is
    // retried; attempt 3 gets the first request's 201, replayed: its body is o-9, not the
    // o-10 a second execution would have answered.
    let report = library("idempotency/duplicate-on-timeout-deduplicated.yaml")
        .run(|env| retry_loop(env, 5, Duration::from_secs(1), Some(Duration::from_secs(1))));
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        report.trace().calls[0].result,
        retrylab::trace::CallResult::Success(r#"(201, "{\"id\":\"o-9\"}")"#.into()),
        "{}",
        report.summary()
    );
    assert_eq!(report.trace().effects.len(), 1);
}

#[test]
fn a_reset_mid_body_is_retried_by_a_loop_that_reads_the_body() {
    // The 200 head arrives, then an RST cuts its body: a loop that reads the body sees the
    // reset and retries, meeting every expectation of the file.
    let report = library("transport/reset-mid-body.yaml")
        .run(|env| retry_loop(env, 3, Duration::from_millis(100), None));
    assert!(report.passed(), "{}", report.summary());
    let first = &report.trace().attempts[0];
    assert_eq!(
        first.body_error,
        Some(retrylab::trace::AttemptOutcome::Reset),
        "{}",
        report.summary()
    );
}

/// A user's own hyper-util client on `env.connector()`, which the harness sees only through
/// the network and the endpoints: up to `attempts` requests, pausing `pause(n)` after the
/// `n`-th (from 0) 5xx, returning the first status below 500.
async fn connector_loop(
    env: Env,
    attempts: u32,
    pause: impl Fn(u32) -> Duration,
) -> Result<u16, String> {
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .build(env.connector());
    for n in 0..attempts {
        let response = client
            .request(env.operation().request())
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let _ = response.into_body().collect().await;
        if status < 500 {
            return Ok(status);
        }
        tokio::time::sleep(pause(n)).await;
    }
    Err("gave up".to_owned())
}

#[test]
fn a_hyper_client_of_its_own_over_env_connector() {
    // The user builds their own hyper-util client on `env.connector()`; the harness then
    // reconstructs the attempts from what the network and the endpoint saw. The schedule is
    // the one of http/5xx-burst-then-success.yaml: 100ms, 200ms, 400ms.
    let report = library("http/5xx-burst-then-success.yaml")
        .run(|env| connector_loop(env, 4, |n| Duration::from_millis(100 << n)));
    assert!(report.passed(), "{}", report.summary());
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 4, "{}", trace.timeline());
    assert!(trace.attempts.iter().all(|a| a.reconstructed));
}

#[test]
fn the_virtual_wall_clock_is_the_scenario_epoch() {
    // HTTP-dates only work if the loop compares them with env.now_system(), not the real
    // clock: the scenario's epoch is 2026-03-01T12:00:00Z.
    let report = library("http/retry-after-http-date.yaml").run(|env| async move {
        let now = env.now_system();
        let epoch = httpdate::parse_http_date("Sun, 01 Mar 2026 12:00:00 GMT")
            .map_err(|e| e.to_string())?;
        let result = retry_loop(env.clone(), 4, Duration::from_secs(1), None).await;
        // 63.002s later, at the end of the call.
        let elapsed = env.now_system().duration_since(epoch).ok();
        Ok::<_, String>((now == epoch, elapsed, result.is_ok()))
    });
    assert_eq!(
        report.trace().calls[0].result,
        retrylab::trace::CallResult::Success("(true, Some(63.002s), true)".into()),
        "{}",
        report.summary()
    );
}

#[test]
fn rebuilt_attempts_keep_every_retry_after_line() {
    // A client on `env.connector()` is seen only by the network and the endpoint: its
    // attempts are rebuilt from the ledger, which keeps every Retry-After line. Lines that
    // disagree (2 and 5) are recorded joined, as the harness's own client records them;
    // lines that agree (3 and 3) read as one value.
    let report = library("faults/retry-after-duplicated.yaml")
        .run(|env| connector_loop(env, 3, |_| Duration::from_secs(3)));
    let trace = report.trace();
    assert!(trace.attempts.iter().all(|a| a.reconstructed));
    let told: Vec<Option<&str>> = trace
        .attempts
        .iter()
        .map(|a| a.retry_after.map(|name| trace.name(name)))
        .collect();
    assert_eq!(
        told,
        [Some("2, 5"), Some("3"), None],
        "{}",
        trace.timeline()
    );
}
