//! [curl](https://curl.se/docs/manpage.html)'s own retry loop (`curl --retry N`), run as a
//! subprocess for each call against the real backend's listener.
//!
//! What its manual says, and the scenarios of `scenarios/real/curl-*.yaml` pin:
//!
//! - `--retry <num>`: a transient error is retried `num` times; "transient error means
//!   either: a timeout, an FTP 4xx response code or an HTTP 408, 429, 500, 502, 503 or 504
//!   response code".
//! - The wait: "it will first wait one second and then for all forthcoming retries it will
//!   double the waiting time until it reaches 10 minutes"; `--retry-delay` replaces that.
//! - "Since curl 7.66.0, curl will comply with the Retry-After: response header if one was
//!   present to know when to issue the next retry."
//! - `--retry-max-time <seconds>`: retries are made only while this much time has not
//!   passed since the first attempt; a `Retry-After` that would end past it stops the
//!   retries at once ("The Retry-After: time would make this command line exceed the maximum
//!   allowed time for retries").
//!
//! The command is `curl -q --no-progress-meter --noproxy '*' --fail --output /dev/null
//! --write-out '%{http_code}' --retry N ... -X <method> -H <header>... <url>`, with the
//! operation's body on standard input (`--data-binary @-`): no configuration file
//! (`-q`), no proxy from the environment, the body thrown away, `--fail` so that a last
//! answer of 400 or more is exit code 22. Without `--silent` curl prints a warning before
//! each retry ("Will retry in 1 seconds"; curl 8 says "Retrying in 1 second"), which
//! [`Transfer::announced_waits_ms`] keeps: the wait curl itself chose, beside the gap the
//! endpoints measured.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use retrylab::Env;

use super::black_box::{self, RunError};

/// The longest a call may take before curl is killed: far beyond any scenario's schedule,
/// so a hung curl fails its call instead of hanging the test.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// A configuration of curl's retry options.
///
/// ```
/// use retrylab_tests::clients::curl::Curl;
///
/// let curl = Curl::retry(3).retry_max_time(2);
/// assert_eq!(curl.retry_args(), ["--retry", "3", "--retry-max-time", "2"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Curl {
    retry: u32,
    retry_delay_s: Option<u32>,
    retry_max_time_s: Option<u32>,
}

/// What one curl command did: how it exited, the last status it got, and the waits it said
/// it would make before its retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// curl's exit code: 0, or 22 for a last answer of 400 or more (`--fail`), or curl's
    /// code for a transport error (7 could not connect, 52 empty reply, 56 receive error).
    pub exit_code: i32,
    /// `%{http_code}`: the last response's status, 0 when none arrived.
    pub http_code: u16,
    /// The wait before each retry, as curl's warnings announced it, in milliseconds.
    pub announced_waits_ms: Vec<u64>,
}

/// Why a curl call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CurlError {
    /// curl ran and exited with a code other than 0.
    Exit(Transfer),
    /// curl gave no answer: not started, killed at the time limit, or not on the real
    /// backend.
    Run(RunError),
    /// curl exited but its `--write-out` was not a status code.
    Output {
        /// curl's exit code.
        exit_code: Option<i32>,
        /// What it wrote.
        stdout: String,
        /// What it said on standard error.
        stderr: String,
    },
}

impl Curl {
    /// `curl --retry <retry>`: its default waits (1 s, doubling) or the server's
    /// `Retry-After`.
    pub fn retry(retry: u32) -> Curl {
        Curl {
            retry,
            retry_delay_s: None,
            retry_max_time_s: None,
        }
    }

    /// With `--retry-delay <seconds>`.
    pub fn retry_delay(mut self, seconds: u32) -> Curl {
        self.retry_delay_s = Some(seconds);
        self
    }

    /// With `--retry-max-time <seconds>`.
    pub fn retry_max_time(mut self, seconds: u32) -> Curl {
        self.retry_max_time_s = Some(seconds);
        self
    }

    /// The retry options this configuration gives curl.
    pub fn retry_args(&self) -> Vec<String> {
        let mut args = vec!["--retry".to_owned(), self.retry.to_string()];
        if let Some(seconds) = self.retry_delay_s {
            args.extend(["--retry-delay".to_owned(), seconds.to_string()]);
        }
        if let Some(seconds) = self.retry_max_time_s {
            args.extend(["--retry-max-time".to_owned(), seconds.to_string()]);
        }
        args
    }

    /// Runs curl once for this call: `Ok` when it exits with 0, [`CurlError::Exit`] with
    /// what it did otherwise.
    ///
    /// ```
    /// use retrylab::Scenario;
    /// use retrylab::trace::CallResult;
    /// use retrylab_tests::clients::curl::{self, Curl};
    ///
    /// # if curl::available().is_err() { return; }
    /// let scenario = Scenario::load("../scenarios/real/curl-retry-after-past-max-time.yaml").unwrap();
    ///
    /// let report = scenario.run(|env| async move { Curl::retry(3).retry_max_time(2).call(&env).await });
    ///
    /// assert!(report.passed(), "{}", report.summary());
    /// // A Retry-After past --retry-max-time: no retry, and --fail's exit code for the 503.
    /// let exit = "Exit(Transfer { exit_code: 22, http_code: 503, announced_waits_ms: [] })";
    /// assert_eq!(report.trace().calls[0].result, CallResult::Failure(exit.into()));
    /// ```
    pub async fn call(&self, env: &Env) -> Result<Transfer, CurlError> {
        let operation = black_box::real_operation(env).map_err(CurlError::Run)?;
        let mut command = Command::new("curl");
        // `-q` must come first: it stops curl reading a .curlrc.
        command.args([
            "-q",
            "--no-progress-meter",
            "--noproxy",
            "*",
            "--fail",
            "--output",
            "/dev/null",
            "--write-out",
            "%{http_code}",
        ]);
        command.args(self.retry_args());
        command.args(["-X", operation.method.as_str()]);
        for (name, value) in &operation.headers {
            if let Ok(value) = value.to_str() {
                command.args(["-H", &format!("{name}: {value}")]);
            }
        }
        if !operation.body.is_empty() {
            // From standard input: a body given on the command line that starts with `@`
            // would name a file. curl reads it whole before the first attempt, so every
            // retry sends it again.
            command.args(["--data-binary", "@-"]);
        }
        command.arg(&operation.url);
        let exited = black_box::run(command, &operation.body, CALL_LIMIT)
            .await
            .map_err(CurlError::Run)?;
        let (Some(exit_code), Ok(http_code)) = (exited.code, exited.stdout.trim().parse::<u16>())
        else {
            return Err(CurlError::Output {
                exit_code: exited.code,
                stdout: exited.stdout,
                stderr: exited.stderr,
            });
        };
        let transfer = Transfer {
            exit_code,
            http_code,
            announced_waits_ms: announced_waits_ms(&exited.stderr),
        };
        if exit_code == 0 {
            Ok(transfer)
        } else {
            Err(CurlError::Exit(transfer))
        }
    }
}

/// The waits curl announced before its retries, in milliseconds: curl 7 writes "Will retry
/// in 2 seconds", curl 8 "Retrying in 2 seconds" (or "1.500 seconds").
fn announced_waits_ms(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|line| {
            let (_, after) = line
                .split_once("Will retry in ")
                .or_else(|| line.split_once("Retrying in "))?;
            let (number, unit) = after.split_once(' ')?;
            let seconds: f64 = number.parse().ok()?;
            unit.starts_with("second")
                .then(|| (seconds * 1000.0).round() as u64)
        })
        .collect()
}

/// `curl --retry 3`: waits of 1, 2 and 4 s, or what `Retry-After` says.
pub async fn retry_3(env: Env) -> Result<Transfer, CurlError> {
    Curl::retry(3).call(&env).await
}

/// `curl --retry 3 --retry-max-time 2`: no retry whose `Retry-After` ends more than 2 s
/// after the first attempt started.
pub async fn retry_3_max_time_2(env: Env) -> Result<Transfer, CurlError> {
    Curl::retry(3).retry_max_time(2).call(&env).await
}

/// Whether curl can run here: its version line, or why not (probed once per process).
pub fn available() -> Result<&'static str, &'static str> {
    static PROBED: OnceLock<Result<String, String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            black_box::probe("curl", &["--version"])
                .map(|out| out.lines().next().unwrap_or_default().to_owned())
        })
        .as_ref()
        .map(String::as_str)
        .map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waits_are_read_from_curl_7_and_curl_8_warnings() {
        let stderr = "Warning: Problem : HTTP error. Will retry in 1 seconds. 3 retries left.\n\
                      Warning: Problem : HTTP error. Retrying in 1.500 seconds. 2 retries left.\n\
                      Warning: Problem : HTTP error. Retrying in 1 second. 1 retry left.\n\
                      curl: (22) The requested URL returned error: 503\n";
        assert_eq!(announced_waits_ms(stderr), [1000, 1500, 1000]);
    }
}
