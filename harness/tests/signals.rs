//! A `retrylab` stopped by a signal stops the command clients it started. They run in
//! process groups of their own, out of reach of the terminal's Ctrl-C and of a signal sent
//! to retrylab's group (as the pytest plugin stops `retrylab serve`): retrylab kills them
//! itself, children included, then dies of the signal. A signal it was started ignoring
//! (`nohup`) stays ignored.
#![cfg(feature = "cli")]

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A folder of its own for the scenario and the pid file, removed afterwards.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir =
            std::env::temp_dir().join(format!("retrylab-signals-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A scenario whose command client starts a child, writes both pids, and waits a minute:
/// still running, with a child, when retrylab is stopped.
fn scenario(folder: &Folder) -> PathBuf {
    let yaml = "version: 1\nname: long-client\n\
        endpoints: { api: { script: [ { status: 200 } ] } }\n\
        operation: { endpoint: api }\n\
        client:\n  command: [sh, -c, 'sleep 60 & echo $$ $! > pids.tmp && mv pids.tmp pids; wait']\n  \
        timeout: 120s\n\
        expect: { attempts: 1, outcome: success }\n";
    let path = folder.0.join("long-client.yaml");
    std::fs::write(&path, yaml).expect("the scenario");
    path
}

/// Whether `pid` is a live process (a zombie, ended but not yet reaped, is not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `pid (comm) S ...`.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Sends `signal` to `pid`.
fn send(pid: u32, signal: i32) {
    let pid = i32::try_from(pid).expect("a pid");
    // SAFETY: `kill` only sends a signal, to a process this test started and has not reaped.
    assert_eq!(
        unsafe { libc::kill(pid, signal) },
        0,
        "signal {signal} sent"
    );
}

/// The processes a test started, retrylab and its client's, killed (and retrylab reaped)
/// when dropped: a failing check leaves nothing behind.
struct Started {
    retrylab: Child,
    client: Vec<i32>,
}

impl Drop for Started {
    fn drop(&mut self) {
        for &pid in &self.client {
            if alive(pid) {
                // SAFETY: `kill` only sends a signal, to a process this test's client started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = self.retrylab.kill();
        let _ = self.retrylab.wait();
    }
}

impl Started {
    /// Starts `command` (retrylab, with its standard error piped) and waits for its client
    /// to write the pids of itself and its child.
    fn with_client(mut command: Command, folder: &Path) -> Started {
        let retrylab = command.spawn().expect("retrylab runs");
        let mut started = Started {
            retrylab,
            client: Vec::new(),
        };
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(folder.join("pids")) {
                started.client = text
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect();
                assert_eq!(started.client.len(), 2, "pids: {text:?}");
                assert!(
                    started.client.iter().all(|&pid| alive(pid)),
                    "the client runs: {:?}",
                    started.client
                );
                return started;
            }
            if let Some(status) = started.retrylab.try_wait().expect("retrylab's status") {
                panic!("retrylab ended ({status}) before its client started");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the client did not start within 60 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits at most `limit` for retrylab to end; `None` while it runs.
    fn wait_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.retrylab.try_wait().expect("retrylab's status") {
                return Some(status);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What retrylab wrote to its standard error, once it has ended.
    fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut stderr) = self.retrylab.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        }
        text
    }

    /// Sends `signal` to retrylab, then checks that it died of that signal, saying it killed
    /// one client group, and that the client and its child are gone soon after.
    fn stop_and_check(mut self, signal: i32) {
        send(self.retrylab.id(), signal);
        let status = self
            .wait_within(Duration::from_secs(20))
            .unwrap_or_else(|| panic!("retrylab still ran 20 s after signal {signal}"));
        let stderr = self.stderr();
        assert_eq!(status.signal(), Some(signal), "{status}: {stderr}");
        assert!(
            stderr.contains("killed 1 command client process group(s)"),
            "{stderr}"
        );
        let start = Instant::now();
        while self.client.iter().any(|&pid| alive(pid)) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "still running 10 s after retrylab exited: {:?}",
                self.client
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `retrylab <args> <scenario>` in the scenario's folder, standard error piped.
fn retrylab(args: &[&str], file: &Path, folder: &Folder) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retrylab"));
    command
        .args(args)
        .arg(file)
        .current_dir(&folder.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Ctrl-C on `retrylab run` (SIGINT, which the terminal sends to retrylab's group only).
#[test]
fn sigint_on_run_kills_the_running_client_and_its_child() {
    let folder = Folder::new("run");
    let file = scenario(&folder);
    Started::with_client(retrylab(&["run"], &file, &folder), &folder.0)
        .stop_and_check(libc::SIGINT);
}

/// SIGTERM on `retrylab serve`, as the pytest plugin and the Node helper stop it when a
/// test's body raises.
#[test]
fn sigterm_on_serve_kills_the_client_it_spawned() {
    let folder = Folder::new("serve");
    let file = scenario(&folder);
    let serve = retrylab(
        &["serve", "--until-eof", "--timeout", "60s"],
        &file,
        &folder,
    );
    Started::with_client(serve, &folder.0).stop_and_check(libc::SIGTERM);
}

/// Started under `nohup` (SIGHUP ignored), retrylab lives through a SIGHUP, client and all.
#[test]
fn a_sighup_retrylab_was_started_ignoring_stays_ignored() {
    let folder = Folder::new("nohup");
    let file = scenario(&folder);
    // `trap '' HUP` is what nohup does: the ignored action survives the exec.
    let mut command = Command::new("sh");
    command
        .args(["-c", "trap '' HUP; exec \"$0\" run \"$1\""])
        .arg(env!("CARGO_BIN_EXE_retrylab"))
        .arg(&file)
        .current_dir(&folder.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut started = Started::with_client(command, &folder.0);
    send(started.retrylab.id(), libc::SIGHUP);
    assert!(
        started.wait_within(Duration::from_millis(500)).is_none(),
        "retrylab ended on an ignored SIGHUP: {}",
        started.stderr()
    );
    assert!(
        started.client.iter().all(|&pid| alive(pid)),
        "the client was killed"
    );
    started.stop_and_check(libc::SIGTERM);
}
