//! Running a command client's program (`client: { command: [...] }`): found before it
//! starts, started in a clean environment as the leader of a process group of its own, its
//! outputs read and bounded, waited for up to its timeout, and stopped with every process it
//! started. Real processes on real time: this runs on the real backend only, never on the
//! simulated path.

mod capture;
mod group;
mod program;
mod signals;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::sync::oneshot;

use self::group::Group;
pub(crate) use self::program::{Unusable, resolve};
pub use self::signals::kill_commands_on_signal;
use crate::report::{ProcessExit, ProcessOutput};

/// The variables a command's process inherits from retrylab's environment; everything else
/// it gets is set by the run (`RETRYLAB_*`) or the file (`env:`). Proxies are left out on
/// purpose: `HTTP_PROXY` would send a client's requests for 127.0.0.1 elsewhere.
pub const INHERITED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
];

/// How long the outputs may stay open after the process group is gone: only a process that
/// left the group (`setsid`) can still hold them, and the run does not wait for it.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// One process to run.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// The program and its arguments, expanded.
    pub(crate) argv: Vec<String>,
    /// The whole environment of the process.
    pub(crate) env: Vec<(String, String)>,
    /// Where it runs (`None`: where retrylab runs).
    pub(crate) cwd: Option<PathBuf>,
    /// What it reads on its standard input.
    pub(crate) stdin: Vec<u8>,
    /// How long it may run.
    pub(crate) timeout: Duration,
}

/// How a process ended and what it printed.
#[derive(Debug, Clone)]
pub(crate) struct Ran {
    pub(crate) exit: ProcessExit,
    pub(crate) left_children: bool,
    pub(crate) stdout: ProcessOutput,
    pub(crate) stderr: ProcessOutput,
}

impl Ran {
    fn not_started(why: String) -> Ran {
        Ran {
            exit: ProcessExit::NotStarted(why),
            left_children: false,
            stdout: ProcessOutput::default(),
            stderr: ProcessOutput::default(),
        }
    }
}

/// The environment of `launch`'s process with `PATH` as retrylab's own: the variables of
/// [`INHERITED_ENV`] that are set here.
pub(crate) fn inherited() -> Vec<(String, String)> {
    INHERITED_ENV
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
        .collect()
}

/// Runs `launch` to its end, or to its timeout. Dropping the future (the run stopped at
/// `limits.wall`) kills the process group.
pub(crate) async fn run(launch: Launch) -> Ran {
    let cwd = match &launch.cwd {
        Some(dir) => dir.clone(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => return Ran::not_started(format!("the working directory: {e}")),
        },
    };
    let path = launch
        .env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_str());
    let program = launch.argv.first().map_or("", String::as_str);
    let file = match resolve(program, &cwd, path) {
        Ok(file) => file,
        Err(unusable) => return Ran::not_started(unusable.why().to_owned()),
    };
    if !cwd.is_dir() {
        return Ran::not_started(format!(
            "its working directory {} is not a directory",
            cwd.display()
        ));
    }
    let mut command = Command::new(&file);
    command
        .args(launch.argv.iter().skip(1))
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let (mut child, group) = match Group::spawn(&mut command) {
        Ok(started) => started,
        Err(e) => return Ran::not_started(format!("`{program}` could not start: {e}")),
    };
    let stdout = child.stdout.take().map(capture::capture);
    let stderr = child.stderr.take().map(capture::capture);
    if let Some(mut input) = child.stdin.take() {
        let body = launch.stdin;
        // A program that never reads its input must not block the run: written on a
        // thread, and a program that exits without reading closes the pipe (not an error).
        let _ = std::thread::Builder::new()
            .name("retrylab-input".to_owned())
            .spawn(move || {
                let _ = input.write_all(&body);
            });
    }
    // The leader is waited for on a thread: a blocking wait, ended by its exit or its kill.
    let (exited, waited) = oneshot::channel();
    let waiter = std::thread::Builder::new()
        .name("retrylab-wait".to_owned())
        .spawn(move || {
            let _ = exited.send(child.wait());
        });
    if let Err(e) = waiter {
        // `group` kills the process as it drops.
        return Ran::not_started(format!("`{program}` could not be waited for: {e}"));
    }
    let exit = match tokio::time::timeout(launch.timeout, waited).await {
        Ok(Ok(Ok(status))) => exit_of(status),
        Ok(Ok(Err(e))) => ProcessExit::NotStarted(format!("waiting for `{program}`: {e}")),
        Ok(Err(_)) => ProcessExit::NotStarted(format!("the wait for `{program}` ended")),
        Err(_) => {
            group.kill();
            ProcessExit::TimedOut {
                after_ms: u64::try_from(launch.timeout.as_millis()).unwrap_or(u64::MAX),
            }
        }
    };
    let left_children = !matches!(exit, ProcessExit::TimedOut { .. }) && group.alive();
    group.finish();
    Ran {
        exit,
        left_children,
        stdout: finished(stdout).await,
        stderr: finished(stderr).await,
    }
}

/// The output a capture kept, once its pipe closed, or a note that it did not close in time.
async fn finished(capture: Option<oneshot::Receiver<ProcessOutput>>) -> ProcessOutput {
    let Some(capture) = capture else {
        return ProcessOutput::default();
    };
    match tokio::time::timeout(OUTPUT_GRACE, capture).await {
        Ok(Ok(output)) => output,
        Ok(Err(_)) => ProcessOutput {
            unfinished: Some("the output could not be read".to_owned()),
            ..ProcessOutput::default()
        },
        Err(_) => ProcessOutput {
            unfinished: Some(
                "the output was still open after the process group ended: a process that \
                 left the group holds it"
                    .to_owned(),
            ),
            ..ProcessOutput::default()
        },
    }
}

fn exit_of(status: std::process::ExitStatus) -> ProcessExit {
    if let Some(code) = status.code() {
        return ProcessExit::Code(code);
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return ProcessExit::Signal(signal);
    }
    // A status with neither a code nor a signal exists only where a process can end
    // otherwise (not on Unix); it is reported as the failure it is, never as success.
    ProcessExit::Code(-1)
}
