//! What the black-box clients ([`curl`](super::curl), [`urllib3`](super::urllib3)) share: a
//! program with its own network stack, run as a subprocess for each call, which reaches the
//! endpoints only on the real backend (`backend: real`), and must never hang a test.
//!
//! Such a program is probed once per process ([`probe`]): a machine without it registers
//! its clients as unavailable, with the probe's answer as the reason, so their scenarios are
//! listed as ignored rather than failed.

use std::fmt;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use retrylab::scenario::BackendKind;
use retrylab::{Env, Operation};

/// How often a running program is asked whether it has exited: often enough that a call
/// ends within a few milliseconds of its program, rarely enough to cost nothing.
const POLL: Duration = Duration::from_millis(5);

/// How long a probe (`curl --version`) may take before the program counts as unusable.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// Why a call of a black-box client produced no answer of its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The run is on the sim network, whose endpoints no real socket reaches.
    NotRealBackend {
        /// The URL the operation has there (`http://api/...`).
        url: String,
    },
    /// The program could not be started.
    Spawn {
        /// The program.
        program: String,
        /// Why, as the operating system said.
        error: String,
    },
    /// The program had not exited after the time limit and was killed.
    TimedOut {
        /// The program.
        program: String,
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// Waiting for the program, or reading its output, failed.
    Wait {
        /// The program.
        program: String,
        /// Why, as the operating system said.
        error: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NotRealBackend { url } => write!(
                f,
                "a black-box client needs `backend: real`: on the sim network `{url}` is no \
                 socket its program can reach"
            ),
            RunError::Spawn { program, error } => write!(f, "cannot start `{program}`: {error}"),
            RunError::TimedOut { program, limit_ms } => {
                write!(
                    f,
                    "`{program}` had not exited after {limit_ms} ms and was killed"
                )
            }
            RunError::Wait { program, error } => {
                write!(f, "waiting for `{program}` failed: {error}")
            }
        }
    }
}

impl std::error::Error for RunError {}

/// The operation of this call, when the run serves its endpoints on real sockets (its URL
/// then names the listener, `http://127.0.0.1:<port>/...`); on the sim network no real
/// socket reaches an endpoint.
pub fn real_operation(env: &Env) -> Result<Operation, RunError> {
    let operation = env.operation();
    if env.backend() == BackendKind::Real {
        Ok(operation)
    } else {
        Err(RunError::NotRealBackend { url: operation.url })
    }
}

/// What a program that exited said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exited {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Its standard output, decoded lossily.
    pub stdout: String,
    /// Its standard error, decoded lossily.
    pub stderr: String,
}

/// Runs `command` to its end with `stdin` as its input, its output captured, killing it
/// after `limit`.
///
/// It waits on the run's runtime (tokio sleeps, in real time on the real backend) instead
/// of blocking the thread, and counts its polls rather than reading a clock: the limit is a
/// safety net against a hung program, not a measurement.
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
/// use retrylab_tests::clients::black_box;
///
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let mut command = Command::new("sh");
/// command.args(["-c", "tr a-z A-Z"]);
///
/// let exited = runtime.block_on(black_box::run(command, b"quiet", Duration::from_secs(10)));
///
/// assert_eq!(exited.unwrap().stdout, "QUIET");
/// ```
pub async fn run(mut command: Command, stdin: &[u8], limit: Duration) -> Result<Exited, RunError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let spawned = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| RunError::Spawn {
            program: program.clone(),
            error: error.to_string(),
        })?;
    let mut reaped = Reaped(spawned);
    let child = &mut reaped.0;
    // Each pipe is drained on a thread of its own, so a program that writes more than a
    // pipe holds never blocks on it; the input is written the same way.
    let input = child.stdin.take().map(|mut pipe| {
        let bytes = stdin.to_vec();
        std::thread::spawn(move || {
            // A program that exits without reading its input closes the pipe: not an error.
            let _ = pipe.write_all(&bytes);
        })
    });
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let polls = limit.as_millis() / POLL.as_millis() + 1;
    let mut status = None;
    for _ in 0..polls {
        match child.try_wait() {
            Ok(Some(exited)) => {
                status = Some(exited);
                break;
            }
            Ok(None) => tokio::time::sleep(POLL).await,
            Err(error) => {
                return Err(RunError::Wait {
                    program,
                    error: error.to_string(),
                });
            }
        }
    }
    let Some(status) = status else {
        // `Reaped` kills it; its pipes then close and the threads draining them end.
        return Err(RunError::TimedOut {
            program,
            limit_ms: limit.as_millis() as u64,
        });
    };
    if let Some(input) = input {
        let _ = input.join();
    }
    Ok(Exited {
        code: status.code(),
        stdout: joined(stdout, &program)?,
        stderr: joined(stderr, &program)?,
    })
}

/// A child process that is killed and reaped when dropped, unless it exited: a call cut
/// short (the time limit, or the run stopped at `limits.wall` while the call waited) leaves
/// neither a running program nor a zombie behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
        }
        // Reaps it; returns at once for a program already reaped.
        let _ = self.0.wait();
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<std::io::Result<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).map(|_| bytes)
    })
}

fn joined(
    pipe: Option<JoinHandle<std::io::Result<Vec<u8>>>>,
    program: &str,
) -> Result<String, RunError> {
    let Some(pipe) = pipe else {
        return Ok(String::new());
    };
    let wait = |error: String| RunError::Wait {
        program: program.to_owned(),
        error,
    };
    let bytes = pipe
        .join()
        .map_err(|_| wait("the thread reading its output panicked".to_owned()))?
        .map_err(|error| wait(error.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs `program` with `args` outside any run (at registration), and gives its standard
/// output when it exits with 0, or why it cannot serve as a client: not installed, failing,
/// or not answering within 10 s.
pub fn probe(program: &str, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new(program);
    command.args(args);
    let shown = format!("`{program} {}`", args.join(" "));
    // A runtime of its own: registration happens outside any run.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|error| format!("{shown} could not be run: {error}"))?;
    let exited = runtime
        .block_on(run(command, &[], PROBE_LIMIT))
        .map_err(|error| format!("{shown} failed: {error}"))?;
    if exited.code == Some(0) {
        Ok(exited.stdout)
    } else {
        let said = exited.stderr.lines().last().unwrap_or_default().to_owned();
        Err(format!(
            "{shown} exited with {}: {said}",
            exited
                .code
                .map_or_else(|| "a signal".to_owned(), |code| format!("code {code}"))
        ))
    }
}
