//! `ServiceNow`'s custom retry strategy (docs/retry-behaviours.md#5-servicenow): the user
//! writes `get_delay(attempt, response) -> delay` and `ServiceNow` retries as it says. There
//! is no built-in policy for it; [`get_delay_client`] plays it, registered as
//! `servicenow_get_delay` for `scenarios/servicenow/custom-get-delay.yaml`.
//!
//! The loop around the function does what the other two strategies do: at most
//! [`MAX_RETRIES`] retries, a 2xx ends the call, and an attempt that brought no response (a
//! reset, a refused connection) has nothing to hand the function, so it ends the call too.
//! It sleeps on tokio's clock, which is virtual in a run.

use std::time::Duration;

use http_body_util::BodyExt as _;
use retrylab::{AttemptError, Env};

/// Retries after the first attempt, `max_retries`' default in the scenario format.
pub const MAX_RETRIES: u32 = 3;

/// What `get_delay` sees of an answer: its status and headers.
#[derive(Debug)]
pub struct Response<'a> {
    /// The status.
    pub status: u16,
    /// The response headers.
    pub headers: &'a http::HeaderMap,
}

/// The user's strategy, an example of what an integration writes: a 429 waits the seconds
/// of the API's own `X-RateLimit-Reset` header, a 503 waits 500ms more on each retry
/// (500ms after attempt 1, 1s after attempt 2, ...), anything else is not retried (`None`).
///
/// ```
/// use retrylab_tests::clients::servicenow::{Response, get_delay};
/// use std::time::Duration;
///
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-ratelimit-reset", http::HeaderValue::from_static("2"));
/// let throttled = Response { status: 429, headers: &headers };
/// assert_eq!(get_delay(1, &throttled), Some(Duration::from_secs(2)));
/// let empty = http::HeaderMap::new();
/// let unavailable = Response { status: 503, headers: &empty };
/// assert_eq!(get_delay(2, &unavailable), Some(Duration::from_millis(1000)));
/// assert_eq!(get_delay(1, &Response { status: 404, headers: &empty }), None);
/// ```
pub fn get_delay(attempt: u32, response: &Response<'_>) -> Option<Duration> {
    match response.status {
        429 => {
            let reset = response.headers.get("x-ratelimit-reset")?;
            let seconds: u64 = reset.to_str().ok()?.trim().parse().ok()?;
            Some(Duration::from_secs(seconds))
        }
        503 => Some(Duration::from_millis(500 * u64::from(attempt))),
        _ => None,
    }
}

/// `get_delay` behind `ServiceNow`'s loop: the scenario's request, body read to the end,
/// then the function's delay before the next attempt.
pub async fn get_delay_client(env: Env) -> Result<u16, AttemptError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let response = env
            .http_client()
            .request(env.operation().request())
            .await
            .map_err(|_| AttemptError::Transport("request"))?;
        let (parts, body) = response.into_parts();
        body.collect()
            .await
            .map_err(|_| AttemptError::Transport("body"))?;
        let status = parts.status.as_u16();
        let answer = Response {
            status,
            headers: &parts.headers,
        };
        let delay = (attempt <= MAX_RETRIES)
            .then(|| get_delay(attempt, &answer))
            .flatten();
        match (AttemptError::classify(status, &parts.headers), delay) {
            (Ok(status), _) => return Ok(status),
            (Err(error), None) => return Err(error),
            (Err(_), Some(delay)) => tokio::time::sleep(delay).await,
        }
    }
}
