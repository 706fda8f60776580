//! One attempt of the scenario's operation, classified the way retry crates want it: the
//! building block to put a retry crate around (`(|| attempt(&env)).retry(...)`).

use http::HeaderMap;
use http_body_util::BodyExt;

use super::Env;

/// Why one attempt did not succeed. Its `Debug` text is what the trace shows as a failed
/// call's result, so a call that gave up on a 503 reads
/// `Err(Retryable { status: 503, retry_after: None })`.
///
/// ```
/// use retrylab::AttemptError;
///
/// let busy = AttemptError::Retryable { status: 503, retry_after: Some(2) };
/// assert!(busy.is_retryable());
/// assert_eq!(busy.retry_after(), Some(2));
/// assert!(!AttemptError::Fatal(404).is_retryable());
/// assert!(AttemptError::Transport("request").is_retryable());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptError {
    /// A 429 or a 5xx, with its `Retry-After` when that was delay-seconds.
    Retryable {
        /// The status.
        status: u16,
        /// `Retry-After`, in seconds.
        retry_after: Option<u64>,
    },
    /// Any other status that is not a 2xx: sending the request again cannot help.
    Fatal(u16),
    /// No response (`"request"`: refused, reset, closed, ...) or a body that broke
    /// (`"body"`).
    Transport(&'static str),
}

impl AttemptError {
    /// Whether a retry may help: a 429, a 5xx or a transport error.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, AttemptError::Fatal(_))
    }

    /// The `Retry-After` the answer carried, in seconds (delay-seconds only; an HTTP-date
    /// or anything else is `None`).
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AttemptError::Retryable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// What a response with this status and these headers means to a retry loop: the
    /// status of a 2xx, else why not. [`attempt`] classifies with it; use it for a
    /// response you got another way (from a `tower::Service`, say).
    ///
    /// ```
    /// use http::HeaderMap;
    /// use retrylab::AttemptError;
    ///
    /// let mut headers = HeaderMap::new();
    /// assert_eq!(AttemptError::classify(201, &headers), Ok(201));
    /// assert_eq!(AttemptError::classify(404, &headers), Err(AttemptError::Fatal(404)));
    /// headers.insert(http::header::RETRY_AFTER, "2".parse().unwrap());
    /// assert_eq!(
    ///     AttemptError::classify(429, &headers),
    ///     Err(AttemptError::Retryable { status: 429, retry_after: Some(2) })
    /// );
    /// ```
    pub fn classify(status: u16, headers: &HeaderMap) -> Result<u16, AttemptError> {
        match status {
            200..=299 => Ok(status),
            429 | 500..=599 => Err(AttemptError::Retryable {
                status,
                retry_after: headers
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse().ok()),
            }),
            _ => Err(AttemptError::Fatal(status)),
        }
    }
}

impl std::fmt::Display for AttemptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttemptError::Retryable {
                status,
                retry_after: Some(seconds),
            } => write!(f, "{status}, Retry-After {seconds}s"),
            AttemptError::Retryable { status, .. } | AttemptError::Fatal(status) => {
                write!(f, "{status}")
            }
            AttemptError::Transport(what) => write!(f, "transport error ({what})"),
        }
    }
}

impl std::error::Error for AttemptError {}

/// One attempt: the scenario's request for this call ([`Env::operation`]) on
/// [`Env::http_client`], its body read to the end (the attempt ends there), the answer
/// classified with [`AttemptError::classify`]: a 2xx is `Ok(status)`; a 429, a 5xx or a
/// transport error is retryable; any other status is fatal.
///
/// It makes exactly one attempt and never sleeps: put the retry loop, or a retry crate,
/// around it.
///
/// ```
/// use std::time::Duration;
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("two 503s, then 200")
///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
///     .operation(get("api", "/"))
///     .expect(expect().outcome(Success).attempts(3))
///     .build()
///     .unwrap();
///
/// let report = scenario.run(|env: Env| async move {
///     loop {
///         match attempt(&env).await {
///             Err(error) if error.is_retryable() => {
///                 tokio::time::sleep(Duration::from_millis(100)).await; // virtual time
///             }
///             result => return result,
///         }
///     }
/// });
///
/// report.assert();
/// ```
pub async fn attempt(env: &Env) -> Result<u16, AttemptError> {
    attempt_with(env, env.operation().request()).await
}

/// [`attempt`] with a request of the caller's own instead of the scenario's: for a client
/// that changes what it sends from one attempt to the next (a new body, another header).
/// Build it from [`Operation::request`](crate::Operation::request) to keep the call's tags and
/// idempotency key.
///
/// ```
/// use http_body_util::Full;
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("the body a client sends is its own")
///     .endpoint("api", endpoint().script([status(201)]))
///     .operation(post("api", "/orders").body("{}"))
///     .expect(expect().outcome(Success).attempts(1))
///     .build()
///     .unwrap();
///
/// let report = scenario.run(|env: Env| async move {
///     let mut request = env.operation().request();
///     *request.body_mut() = Full::new(bytes::Bytes::from_static(b"{\"sku\":\"B2\"}"));
///     attempt_with(&env, request).await
/// });
/// report.assert();
/// ```
pub async fn attempt_with(
    env: &Env,
    request: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> Result<u16, AttemptError> {
    let response = env
        .http_client()
        .request(request)
        .await
        .map_err(|_| AttemptError::Transport("request"))?;
    let (parts, body) = response.into_parts();
    body.collect()
        .await
        .map_err(|_| AttemptError::Transport("body"))?;
    AttemptError::classify(parts.status.as_u16(), &parts.headers)
}
