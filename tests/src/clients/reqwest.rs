//! A plain [`reqwest::Client`](https://docs.rs/reqwest/0.13.5) (reqwest 0.13, no
//! middleware, feature `reqwest`) on the real backend, with the retry loop a user writes
//! around it: retry when the error's cause is a connection reset or an unexpected end of
//! stream, and record each one.
//!
//! reqwest reports transport faults as a `reqwest::Error` whose `source()` chain leads,
//! through hyper-util's and hyper's errors, to the `std::io::Error` the socket gave; the
//! loop walks that chain ([`Cause::of`]). What it finds is what
//! `scenarios/real/reqwest-reset-mid-body.yaml` pins (`tests/tests/reqwest.rs` asserts it):
//!
//! - `fail: reset` (an RST after the request arrived) fails `send()` with
//!   `ConnectionReset`;
//! - `{ close: { after_bytes: n } }` inside the body (a FIN after the head and part of the
//!   `content-length` body) fails reading the body (`bytes()`) with `UnexpectedEof`:
//!   hyper's decoder ends an incomplete body with an `io::Error` of that kind;
//! - `{ reset: { after_bytes: n } }` inside the body fails reading it with
//!   `ConnectionReset`.
//!
//! reqwest 0.13 has a retry layer of its own (`reqwest::retry`), on by default, but its
//! default classifier retries only HTTP/2 and HTTP/3 protocol refusals (a `GOAWAY` with
//! `NO_ERROR`, a `REFUSED_STREAM`); over HTTP/1.1 every error reaches the caller.
//! hyper-util's pool resends only a request that was never written (a pooled connection
//! closed first), so none of these faults is retried below the loop.

use std::io;
use std::time::Duration;

use retrylab::Env;

/// The most attempts a call makes.
pub const MAX_ATTEMPTS: u32 = 5;

/// The wait before each retry.
pub const DELAY: Duration = Duration::from_millis(100);

/// What ended an attempt before its body was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// `send()` failed: no response head.
    Send(Cause),
    /// The head arrived, reading the body failed.
    Body(Cause),
}

/// The cause at the end of a reqwest error's `source()` chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The first `std::io::Error` of the chain, by kind.
    Io(io::ErrorKind),
    /// No `std::io::Error` in the chain: the innermost error's text.
    Other(String),
}

impl Cause {
    /// Walks `error`'s `source()` chain to its first `std::io::Error`.
    ///
    /// ```
    /// use std::io;
    /// use retrylab_tests::clients::reqwest::Cause;
    ///
    /// #[derive(Debug)]
    /// struct Wrapper(io::Error);
    /// impl std::fmt::Display for Wrapper {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         f.write_str("request failed")
    ///     }
    /// }
    /// impl std::error::Error for Wrapper {
    ///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
    ///         Some(&self.0)
    ///     }
    /// }
    ///
    /// let error = Wrapper(io::Error::from(io::ErrorKind::ConnectionReset));
    /// assert_eq!(Cause::of(&error), Cause::Io(io::ErrorKind::ConnectionReset));
    /// ```
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Cause {
        let mut innermost = error;
        let mut next = Some(error);
        while let Some(current) = next {
            if let Some(io) = current.downcast_ref::<io::Error>() {
                return Cause::Io(io.kind());
            }
            innermost = current;
            next = current.source();
        }
        Cause::Other(innermost.to_string())
    }

    /// Whether the loop retries after it: a reset, or an end of stream before the
    /// response was whole.
    pub fn is_retried(&self) -> bool {
        matches!(
            self,
            Cause::Io(io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof)
        )
    }
}

impl Failure {
    fn cause(&self) -> &Cause {
        match self {
            Failure::Send(cause) | Failure::Body(cause) => cause,
        }
    }
}

/// A call that got a whole response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Its status.
    pub status: u16,
    /// The failure of each attempt before it, in order.
    pub retried_on: Vec<Failure>,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReqwestError {
    /// An attempt failed in a way the loop does not retry, or the last attempt failed.
    GaveUp {
        /// The last attempt's failure.
        on: Failure,
        /// The failures retried before it.
        retried_on: Vec<Failure>,
    },
    /// The run is on the sim network, which no real socket reaches.
    NotRealBackend(String),
    /// The client could not be built.
    Build(String),
}

/// One call: the operation sent with a plain `reqwest::Client` (no proxy read from the
/// environment), its body read whole; a reset or an unexpected end of stream is retried
/// after [`DELAY`], [`MAX_ATTEMPTS`] attempts at most. Any status is an answer.
///
/// ```
/// use retrylab::Scenario;
/// use retrylab_tests::clients::reqwest::retry_loop;
///
/// let yaml = "version: 1\nname: reset\nbackend: real\n\
///             endpoints: { api: { script: [ { fail: reset }, { status: 200 } ] } }\n\
///             operation: { endpoint: api }\nexpect: { attempts: 2, outcome: success }\n";
/// let scenario = Scenario::from_yaml_str(yaml, "reset.yaml").unwrap();
///
/// let report = scenario.run(retry_loop);
///
/// assert!(report.passed(), "{}", report.summary());
/// ```
pub async fn retry_loop(env: Env) -> Result<Fetched, ReqwestError> {
    // Its own network stack reaches the endpoints only on real sockets: on the sim network
    // the operation's URL (`http://api/...`) names no socket.
    let operation = env.operation();
    if env.backend() != retrylab::scenario::BackendKind::Real {
        return Err(ReqwestError::NotRealBackend(format!(
            "a client with its own network stack needs `backend: real`: on the sim network \
             `{}` is no socket it can reach",
            operation.url
        )));
    }
    let client = ::reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|error| ReqwestError::Build(error.to_string()))?;
    let mut retried_on = Vec::new();
    // Bounded: each turn that does not return adds a failure, and MAX_ATTEMPTS returns.
    loop {
        let request = client
            .request(operation.method.clone(), &operation.url)
            .headers(operation.headers.clone())
            .body(operation.body.clone());
        let failure = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                match response.bytes().await {
                    Ok(_) => return Ok(Fetched { status, retried_on }),
                    Err(error) => Failure::Body(Cause::of(&error)),
                }
            }
            Err(error) => Failure::Send(Cause::of(&error)),
        };
        let attempts = retried_on.len() as u32 + 1;
        if !failure.cause().is_retried() || attempts >= MAX_ATTEMPTS {
            return Err(ReqwestError::GaveUp {
                on: failure,
                retried_on,
            });
        }
        retried_on.push(failure);
        // Real time: the real backend's runtime is not paused.
        tokio::time::sleep(DELAY).await;
    }
}
