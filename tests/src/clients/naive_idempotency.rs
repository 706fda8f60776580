//! Two hand-written retry loops that misuse an idempotency key, for the `must_fail`
//! scenarios of `scenarios/idempotency/` that catch them.
//!
//! Both send the call's request (its `Idempotency-Key` included) on `env.http_client()`,
//! give an attempt [`ATTEMPT_TIMEOUT`] before abandoning it, and wait [`BACKOFF`] before a
//! retry, on tokio's clock, which is virtual in a run. Each gets one thing wrong.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use retrylab::{AttemptError, Env, attempt_with};

/// At most this many attempts per call.
const MAX_ATTEMPTS: u32 = 5;

/// How long an attempt may take, body included, before the loop abandons it.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);

/// The delay before every retry.
const BACKOFF: Duration = Duration::from_secs(1);

/// A loop that reads `409 Conflict` as "the server already has it": an in-flight rejection
/// of its own key ends the call in success, though the request in flight may still fail.
/// The call returns `Ok(409)`.
pub async fn conflict_as_success(env: Env) -> Result<u16, AttemptError> {
    retry_loop(&env, |_| None, |status| status == 409).await
}

/// A loop that builds its body afresh for every attempt, stamping the attempt's number
/// into it (as a client that serialises a timestamp or a nonce does), so a retry reuses
/// the key with another body. It gives up on any 4xx other than 429, as
/// [`AttemptError::classify`] says.
pub async fn new_body_on_retry(env: Env) -> Result<u16, AttemptError> {
    retry_loop(
        &env,
        |n| {
            let body = env.operation().body.clone();
            Some(stamped(&body, n))
        },
        |_| false,
    )
    .await
}

/// The operation's JSON object body with `"attempt": n` added as its first member (`{}`
/// becomes `{"attempt":2}`); any other body gets `#n` appended.
fn stamped(body: &Bytes, n: u32) -> Bytes {
    match body.strip_prefix(b"{") {
        Some(rest) if rest.starts_with(b"}") => Bytes::from(format!("{{\"attempt\":{n}}}")),
        Some(rest) => {
            let mut out = format!("{{\"attempt\":{n},").into_bytes();
            out.extend_from_slice(rest);
            Bytes::from(out)
        }
        None => {
            let mut out = body.to_vec();
            out.extend_from_slice(format!("#{n}").as_bytes());
            Bytes::from(out)
        }
    }
}

/// Retries retryable answers, transport errors and abandoned attempts up to
/// [`MAX_ATTEMPTS`]; `body(n)` is attempt `n`'s body (`None`: the operation's), and a status
/// for which `done` holds ends the call in success.
async fn retry_loop(
    env: &Env,
    body: impl Fn(u32) -> Option<Bytes>,
    done: impl Fn(u16) -> bool,
) -> Result<u16, AttemptError> {
    let mut n = 0;
    loop {
        n += 1;
        let mut request = env.operation().request();
        if let Some(body) = body(n) {
            *request.body_mut() = Full::new(body);
        }
        let attempt = async {
            match attempt_with(env, request).await {
                // A status the loop takes for success, whatever the classification says.
                Err(AttemptError::Fatal(status) | AttemptError::Retryable { status, .. })
                    if done(status) =>
                {
                    Ok(status)
                }
                result => result,
            }
        };
        let result = tokio::time::timeout(ATTEMPT_TIMEOUT, attempt)
            .await
            .unwrap_or(Err(AttemptError::Transport("timeout")));
        match result {
            Err(error) if error.is_retryable() && n < MAX_ATTEMPTS => {
                tokio::time::sleep(BACKOFF).await;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stamped;
    use bytes::Bytes;

    #[test]
    fn stamps_the_attempt_into_the_body() {
        let stamp = |body: &'static str, n| stamped(&Bytes::from_static(body.as_bytes()), n);
        assert_eq!(
            stamp(r#"{"amount":100}"#, 2),
            r#"{"attempt":2,"amount":100}"#
        );
        assert_eq!(stamp("{}", 1), r#"{"attempt":1}"#);
        assert_eq!(stamp("sku=C3", 3), "sku=C3#3");
    }
}
