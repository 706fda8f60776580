//! [urllib3](https://urllib3.readthedocs.io/en/stable/reference/urllib3.util.html)'s
//! `Retry`, in Python: `tests/clients/python/urllib3_call.py` makes one
//! `PoolManager(retries=Retry(...)).request(...)` per call against the real backend's
//! listener, and prints what it got.
//!
//! What urllib3 documents, and `scenarios/real/urllib3-*.yaml` pin (read in urllib3 2.7.0's
//! `util/retry.py`; 1.26 computes the same schedule):
//!
//! - **Backoff.** `get_backoff_time()` is 0 until two errors in a row, then
//!   `backoff_factor * 2 ** (consecutive_errors - 1)`, capped at `backoff_max` (120 s): the
//!   first retry is immediate, and with a factor of 0.1 the waits are "[0.0s, 0.2s, 0.4s,
//!   0.8s, ...]" ([`Retry::backoff_ms`]).
//! - **Retry-After.** With `respect_retry_after_header=True` (the default), `sleep()` sleeps
//!   a response's `Retry-After` instead of the backoff, and `is_retry()` retries a 413, 429
//!   or 503 carrying one even when its status is not in `status_forcelist`.
//! - **Methods.** `DEFAULT_ALLOWED_METHODS` is HEAD, GET, PUT, DELETE, OPTIONS and TRACE:
//!   a POST is not retried on a status of `status_forcelist` (nor on a read error), and the
//!   response is returned as it is.
//! - When the retries run out on a status, `raise_on_status=True` (the default) raises
//!   `MaxRetryError` whose reason is a `ResponseError`.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use retrylab::Env;
use serde_json::{Value, json};

use super::black_box::{self, RunError};

/// The longest a call may take before Python is killed (see [`super::curl`]).
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// urllib3's `DEFAULT_BACKOFF_MAX`, in milliseconds.
const BACKOFF_MAX_MS: u64 = 120_000;

/// The script each call runs.
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/clients/python/urllib3_call.py"
);

/// A `urllib3.util.Retry` configuration.
///
/// ```
/// use retrylab_tests::clients::urllib3::Retry;
///
/// let retry = Retry::new(3).backoff_factor_ms(200).status_forcelist([503]);
/// // No sleep before the first retry, then 0.2 x 2, 0.2 x 4 seconds.
/// assert_eq!([1, 2, 3].map(|n| retry.backoff_ms(n)), [0, 400, 800]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    total: u32,
    backoff_factor_ms: u64,
    status_forcelist: Vec<u16>,
}

/// The response urllib3 returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// The status of each response urllib3 retried before it, in order (the `history` of
    /// the `Retry` it came back with).
    pub retried: Vec<u16>,
}

/// Why a urllib3 call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Urllib3Error {
    /// urllib3 returned a response of 400 or more (one it did not retry, or the last one
    /// with `raise_on_status=False`).
    Status(Answer),
    /// urllib3 raised: `MaxRetryError` (with its reason's class, `ResponseError` when the
    /// retries ran out on a status) or another `HTTPError`.
    Raised {
        /// The exception's class.
        exception: String,
        /// Its reason's class (`MaxRetryError`), or its message.
        reason: String,
    },
    /// Python gave no answer: not started, killed at the time limit, or not on the real
    /// backend.
    Run(RunError),
    /// Python exited without the JSON line the script prints.
    Output {
        /// Python's exit code.
        exit_code: Option<i32>,
        /// The last line it wrote on standard error (a traceback's last line).
        stderr: String,
    },
}

impl Retry {
    /// `Retry(total=<total>)`, urllib3's other defaults: no backoff, no
    /// `status_forcelist`, `respect_retry_after_header=True`, the default `allowed_methods`.
    pub fn new(total: u32) -> Retry {
        Retry {
            total,
            backoff_factor_ms: 0,
            status_forcelist: Vec::new(),
        }
    }

    /// With `backoff_factor` of `ms` milliseconds (0.2 is 200).
    pub fn backoff_factor_ms(mut self, ms: u64) -> Retry {
        self.backoff_factor_ms = ms;
        self
    }

    /// With `status_forcelist`.
    pub fn status_forcelist(mut self, statuses: impl IntoIterator<Item = u16>) -> Retry {
        self.status_forcelist = statuses.into_iter().collect();
        self
    }

    /// urllib3's `get_backoff_time()` after `consecutive_errors` errors in a row, in
    /// milliseconds: the sleep before the retry that follows them when the response has no
    /// `Retry-After`.
    pub fn backoff_ms(&self, consecutive_errors: u32) -> u64 {
        if consecutive_errors <= 1 {
            return 0;
        }
        let doublings = (consecutive_errors - 1).min(63);
        self.backoff_factor_ms
            .saturating_mul(1 << doublings)
            .min(BACKOFF_MAX_MS)
    }

    /// Runs the script once for this call.
    ///
    /// ```
    /// use retrylab::Scenario;
    /// use retrylab::trace::CallResult;
    /// use retrylab_tests::clients::urllib3;
    ///
    /// # if urllib3::available().is_err() { return; }
    /// let scenario = Scenario::load("../scenarios/real/urllib3-post-not-retried.yaml").unwrap();
    ///
    /// let report = scenario.run(|env| async move { urllib3::retry_config().call(&env).await });
    ///
    /// assert!(report.passed(), "{}", report.summary());
    /// let returned = CallResult::Failure("Status(Answer { status: 503, retried: [] })".into());
    /// assert_eq!(report.trace().calls[0].result, returned);
    /// ```
    pub async fn call(&self, env: &Env) -> Result<Answer, Urllib3Error> {
        let operation = black_box::real_operation(env).map_err(Urllib3Error::Run)?;
        let headers: serde_json::Map<String, Value> = operation
            .headers
            .iter()
            .filter_map(|(name, value)| Some((name.to_string(), json!(value.to_str().ok()?))))
            .collect();
        let spec = json!({
            "method": operation.method.as_str(),
            "url": operation.url,
            "headers": headers,
            "body": String::from_utf8_lossy(&operation.body),
            "retry": {
                "total": self.total,
                "backoff_factor": self.backoff_factor_ms as f64 / 1000.0,
                "status_forcelist": self.status_forcelist,
                "respect_retry_after_header": true,
            },
        });
        let mut command = Command::new("python3");
        command.arg(SCRIPT).arg(spec.to_string());
        let exited = black_box::run(command, &[], CALL_LIMIT)
            .await
            .map_err(Urllib3Error::Run)?;
        let printed = exited
            .stdout
            .lines()
            .last()
            .and_then(|line| serde_json::from_str::<Value>(line).ok());
        let Some(printed) = printed else {
            return Err(Urllib3Error::Output {
                exit_code: exited.code,
                stderr: exited.stderr.lines().last().unwrap_or_default().to_owned(),
            });
        };
        let text = |key: &str| printed[key].as_str().unwrap_or_default().to_owned();
        match printed["status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
        {
            Some(status) => {
                let retried = printed["retried"]
                    .as_array()
                    .map(|statuses| {
                        statuses
                            .iter()
                            .filter_map(|s| s.as_u64().and_then(|s| u16::try_from(s).ok()))
                            .collect()
                    })
                    .unwrap_or_default();
                let answer = Answer { status, retried };
                if status < 400 {
                    Ok(answer)
                } else {
                    Err(Urllib3Error::Status(answer))
                }
            }
            None => Err(Urllib3Error::Raised {
                exception: text("exception"),
                reason: text("reason"),
            }),
        }
    }
}

/// The configuration of [`retry`]: `Retry(total=3, backoff_factor=0.2,
/// status_forcelist=[500, 502, 503, 504])`, as urllib3's documentation shows it, the rest
/// urllib3's defaults.
pub fn retry_config() -> Retry {
    Retry::new(3)
        .backoff_factor_ms(200)
        .status_forcelist([500, 502, 503, 504])
}

/// One call with [`retry_config`].
pub async fn retry(env: Env) -> Result<Answer, Urllib3Error> {
    retry_config().call(&env).await
}

/// Whether urllib3 can run here: its version, or why not (probed once per process). It
/// needs urllib3 1.26 or later, the first with `allowed_methods`.
pub fn available() -> Result<&'static str, &'static str> {
    static PROBED: OnceLock<Result<String, String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            black_box::probe(
                "python3",
                &[
                    "-c",
                    "import urllib3; from urllib3.util import Retry; \
                     Retry(allowed_methods=None); print(urllib3.__version__)",
                ],
            )
            .map(|out| out.trim().to_owned())
        })
        .as_ref()
        .map(String::as_str)
        .map_err(String::as_str)
}
