//! Running one case in a child process: this test binary again, with an address-space cap
//! and a timeout, so a case that panics, aborts, hangs or allocates without bound is
//! reported by name and the test goes on.
//!
//! The child's peak memory is its `VmHWM` (the high-water mark of its resident set, from
//! `/proc/<pid>/status`): the child prints its own as it exits, and the parent reads it while
//! the child runs, for a child that never gets to print. `ru_maxrss` from `wait4` would not
//! do: Linux carries it across `execve`, so every child would start at the parent's size.

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first argument that makes this binary the child of one case:
/// `adversarial __adversarial-child <path> <display name>`.
pub(crate) const CHILD_FLAG: &str = "__adversarial-child";

/// What the child prints before its outcome line, so nothing else it might print is taken
/// for it.
pub(crate) const OUTCOME_MARK: &str = "adversarial-outcome: ";

/// What the child prints before its peak memory in KiB, as it exits.
pub(crate) const PEAK_MARK: &str = "adversarial-peak-kib: ";

/// The bounds of one child.
#[derive(Clone, Copy)]
pub(crate) struct Bounds {
    /// Address space, in bytes (`RLIMIT_AS`): an allocation past it fails, and Rust aborts.
    /// It is above the 1 GiB the corpus must stay under, since threads and allocator arenas
    /// reserve address space they never touch.
    pub(crate) address_space: u64,
    /// Real time before the child is killed and reported as hung.
    pub(crate) timeout: Duration,
    /// The `limits.wall` the child gives a case that sets none; `None` keeps the default.
    pub(crate) wall: Option<Duration>,
}

/// How a case ended in its child.
pub(crate) struct Measured {
    /// The outcome line, or what went wrong: `panicked: ...`, `aborted: ...`, `hung: ...`.
    pub(crate) result: Result<String, String>,
    /// The child's peak resident set size, in KiB.
    pub(crate) peak_rss_kib: u64,
    /// Real time from spawn to exit.
    pub(crate) elapsed: Duration,
}

/// Stderr kept from a child: enough for a panic message, bounded for a child that prints
/// megabytes.
const MAX_STDERR_BYTES: u64 = 64 * 1024;

/// Runs the case at `path` (named `display` in its errors) in a child within `bounds`.
pub(crate) fn measure(path: &Path, display: &str, bounds: Bounds) -> Measured {
    let started = Instant::now();
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return not_started(format!("cannot find the test binary: {e}"), started),
    };
    let mut command = Command::new(exe);
    command
        .arg(CHILD_FLAG)
        .arg(path)
        .arg(display)
        .arg(
            bounds
                .wall
                .map_or_else(|| "default".to_owned(), |w| w.as_millis().to_string()),
        )
        // The case's own seed, and a panic message without a backtrace.
        .env_remove("RETRYLAB_SEED")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let limit = libc::rlimit {
        rlim_cur: bounds.address_space,
        rlim_max: bounds.address_space,
    };
    // SAFETY: between fork and exec the closure only calls `setrlimit`, which is
    // async-signal-safe, on a value prepared before the fork; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return not_started(format!("cannot start the child: {e}"), started),
    };
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let pid = child.id() as libc::pid_t;
    let (status, polled_peak, killed) = wait(pid, started, bounds.timeout);
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let elapsed = started.elapsed();
    let reported_peak = stdout
        .lines()
        .find_map(|l| l.strip_prefix(PEAK_MARK))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let peak_rss_kib = polled_peak.max(reported_peak);
    let result = match status {
        Err(e) => Err(format!("lost the child: {e}")),
        Ok(_) if killed => Err(format!(
            "hung: killed after {} s",
            bounds.timeout.as_secs_f64()
        )),
        Ok(status) => judge(status, &stdout, &stderr),
    };
    Measured {
        result,
        peak_rss_kib,
        elapsed,
    }
}

fn not_started(why: String, started: Instant) -> Measured {
    Measured {
        result: Err(why),
        peak_rss_kib: 0,
        elapsed: started.elapsed(),
    }
}

/// Reads a pipe to its end on a thread of its own (a child blocked writing to a full pipe
/// would never exit), keeping the first [`MAX_STDERR_BYTES`].
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut pipe = pipe;
        let _ = (&mut pipe).take(MAX_STDERR_BYTES).read_to_end(&mut kept);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// Waits for `pid`, killing it once `timeout` has passed since `started`: its wait status,
/// the largest peak memory read while it ran (KiB), and whether it was killed.
fn wait(
    pid: libc::pid_t,
    started: Instant,
    timeout: Duration,
) -> (std::io::Result<libc::c_int>, u64, bool) {
    let mut status: libc::c_int = 0;
    let mut killed = false;
    let mut peak = 0;
    loop {
        if !killed {
            peak = peak.max(peak_rss_kib(&format!("/proc/{pid}/status")).unwrap_or(0));
        }
        let flags = if killed { 0 } else { libc::WNOHANG };
        // SAFETY: `pid` is this process's own child, not yet reaped (std's `Child` is never
        // waited on); `status` is valid for writes.
        let reaped = unsafe { libc::waitpid(pid, &mut status, flags) };
        if reaped == pid {
            return (Ok(status), peak, killed);
        }
        if reaped < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return (Err(error), peak, killed);
        }
        if started.elapsed() >= timeout {
            // SAFETY: signals this process's own child, by the id it was spawned with.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        } else {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `VmHWM` of the process whose status file is `status`, in KiB: its peak resident set.
pub(crate) fn peak_rss_kib(status: &str) -> Option<u64> {
    let text = std::fs::read_to_string(status).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The outcome line of a child that exited on its own, or how it broke down.
fn judge(status: libc::c_int, stdout: &str, stderr: &str) -> Result<String, String> {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        let name = match signal {
            libc::SIGABRT => "aborted (SIGABRT)",
            libc::SIGSEGV => "crashed (SIGSEGV)",
            libc::SIGBUS => "crashed (SIGBUS)",
            libc::SIGKILL => "killed (SIGKILL, out of memory?)",
            _ => "killed by a signal",
        };
        return Err(format!("{name}: {}", why_aborted(stderr)));
    }
    let code = libc::WEXITSTATUS(status);
    if code == 101 {
        return Err(format!("panicked: {}", panic_message(stderr)));
    }
    if code != 0 {
        return Err(format!("exited with status {code}: {}", last_line(stderr)));
    }
    stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(OUTCOME_MARK))
        .map(str::to_owned)
        .ok_or_else(|| format!("printed no outcome: {}", last_line(stderr)))
}

/// The message of the first panic in `stderr` (the line after "panicked at").
fn panic_message(stderr: &str) -> String {
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if line.contains("panicked at") {
            let at = line
                .split("panicked at ")
                .nth(1)
                .unwrap_or("")
                .trim_end_matches(':');
            let message = lines.next().unwrap_or("");
            return super::outcome::printable(&format!("{message} (at {at})"), 300);
        }
    }
    last_line(stderr)
}

/// What a child that died of a signal said last: a failed allocation, a stack overflow or a
/// panic (an abort during a panic), else its last line that is not a note.
fn why_aborted(stderr: &str) -> String {
    if stderr.contains("panicked at") {
        return format!("panicked: {}", panic_message(stderr));
    }
    let telling = stderr
        .lines()
        .rev()
        .find(|l| l.contains("memory allocation of") || l.contains("overflowed its stack"));
    match telling {
        Some(line) => super::outcome::printable(line, 300),
        None => last_line(stderr),
    }
}

fn last_line(stderr: &str) -> String {
    let line = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with("note: "))
        .unwrap_or("(nothing on stderr)");
    super::outcome::printable(line, 300)
}
