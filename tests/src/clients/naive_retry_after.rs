//! Two hand-written retry loops that misread `Retry-After`, the naive clients of
//! docs/retry-behaviours.md#6-retry-after, for the `must_fail` scenarios of
//! `scenarios/faults/` that catch them.
//!
//! Both make their attempts as [`retrylab::attempt`] does (the scenario's request on
//! `env.http_client()`, body read to the end) but keep the response's raw `Retry-After`,
//! which is what they misread; they sleep on tokio's clock, which is virtual in a run.

use std::time::Duration;

use http_body_util::BodyExt as _;
use retrylab::{AttemptError, Env};

/// At most this many attempts per call: the loops below must end even against an endpoint
/// that never stops pushing back.
const MAX_ATTEMPTS: u32 = 10;

/// The delay both clients fall back to when a response carries no `Retry-After`.
const BACKOFF: Duration = Duration::from_secs(1);

/// One attempt: its classified answer and the first `Retry-After` value, as text.
async fn attempt_with_header(env: &Env) -> (Result<u16, AttemptError>, Option<String>) {
    let response = match env.http_client().request(env.operation().request()).await {
        Ok(response) => response,
        Err(_) => return (Err(AttemptError::Transport("request")), None),
    };
    let (parts, body) = response.into_parts();
    if body.collect().await.is_err() {
        return (Err(AttemptError::Transport("body")), None);
    }
    let retry_after = parts
        .headers
        .get(http::header::RETRY_AFTER)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    (
        AttemptError::classify(parts.status.as_u16(), &parts.headers),
        retry_after,
    )
}

/// The first run of ASCII digits in `raw`, as seconds: `"2"` is 2, but the IMF-fixdate
/// `"Sun, 01 Mar 2026 12:00:31 GMT"` is 1 (its day of the month), the mistake of a client
/// that only ever expected delay-seconds.
fn leading_number(raw: &str) -> Option<u64> {
    let digits: String = raw
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A loop that reads every `Retry-After` as seconds, taking the first number in it: an
/// HTTP-date becomes its day of the month, so it comes back long before the date.
pub async fn date_as_seconds(env: Env) -> Result<u16, AttemptError> {
    naive_loop(&env, |raw| {
        raw.and_then(leading_number)
            .map_or(BACKOFF, Duration::from_secs)
    })
    .await
}

/// A loop that reads a `Retry-After` it cannot parse as "retry now": garbage sends it
/// straight back, with no delay at all, until its attempts run out.
pub async fn garbage_immediately(env: Env) -> Result<u16, AttemptError> {
    naive_loop(&env, |raw| match raw {
        Some(raw) => Duration::from_secs(raw.trim().parse().unwrap_or(0)),
        None => BACKOFF,
    })
    .await
}

/// Retries a retryable answer up to [`MAX_ATTEMPTS`] attempts, waiting what `delay` makes of
/// its raw `Retry-After` (the naive part of each client).
async fn naive_loop(
    env: &Env,
    delay: impl Fn(Option<&str>) -> Duration,
) -> Result<u16, AttemptError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let (result, retry_after) = attempt_with_header(env).await;
        match result {
            Err(error) if error.is_retryable() && tries < MAX_ATTEMPTS => {
                tokio::time::sleep(delay(retry_after.as_deref())).await;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::leading_number;

    #[test]
    fn reads_the_first_number() {
        assert_eq!(leading_number("2"), Some(2));
        assert_eq!(leading_number("Sun, 01 Mar 2026 12:00:31 GMT"), Some(1));
        assert_eq!(leading_number("Sunday, 01-Mar-26 12:00:31 GMT"), Some(1));
        assert_eq!(leading_number("Sun Mar  1 12:00:31 2026"), Some(1));
        assert_eq!(leading_number("soon"), None);
    }
}
