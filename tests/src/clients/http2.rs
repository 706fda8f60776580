//! `http1_then_http2`: a client that speaks HTTP/1.1 in its even calls and HTTP/2 in its
//! odd ones, for `scenarios/http2/auto-answers-http1-and-http2.yaml`, where an `auto`
//! endpoint must answer both.

use std::time::Duration;

use http_body_util::BodyExt;
use retrylab::{AttemptError, Env};

/// At most this many attempts per call.
const MAX_ATTEMPTS: u32 = 3;

/// The delay before a retry, on tokio's clock (virtual in a run).
const BACKOFF: Duration = Duration::from_millis(100);

/// Sends the call's request on `env.http_client()` (even calls) or `env.http2_client()`
/// (odd calls), retrying a 5xx after [`BACKOFF`]; the call returns the last status.
pub async fn http1_then_http2(env: Env) -> Result<u16, AttemptError> {
    let client = if env.call_index() % 2 == 0 {
        env.http_client()
    } else {
        env.http2_client()
    };
    let mut status = 0;
    for attempt in 1..=MAX_ATTEMPTS {
        let response = client
            .request(env.operation().request())
            .await
            .map_err(|_| AttemptError::Transport("request"))?;
        status = response.status().as_u16();
        response
            .into_body()
            .collect()
            .await
            .map_err(|_| AttemptError::Transport("body"))?;
        if status < 500 || attempt == MAX_ATTEMPTS {
            break;
        }
        tokio::time::sleep(BACKOFF).await;
    }
    Ok(status)
}
