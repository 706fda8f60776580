//! A `retrylab` stopped by a signal stops the command clients it started. They run in
//! process groups of their own, out of reach of the terminal's Ctrl-C and of a signal sent
//! to retrylab's group (as the pytest plugin stops `retrylab serve`): the CLI kills them
//! itself before it exits, children included.
#![cfg(feature = "cli")]

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

/// The pids the client wrote (itself and its child), once it has written them.
fn client_pids(folder: &Path, retrylab: &mut Child) -> Vec<i32> {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(folder.join("pids")) {
            let pids: Vec<i32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            assert_eq!(pids.len(), 2, "pids: {text:?}");
            return pids;
        }
        if let Some(status) = retrylab.try_wait().expect("retrylab's status") {
            panic!("retrylab ended ({status}) before its client started");
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = retrylab.kill();
            let _ = retrylab.wait();
            panic!("the client did not start within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
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

/// The client's processes, killed when dropped: a failing check leaves none behind.
struct Leftovers(Vec<i32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if alive(pid) {
                // SAFETY: `kill` only sends a signal, to a process this test's client started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Sends `signal` to retrylab, then checks that it exits with 128 + signal and that the
/// client and its child are gone soon after.
fn stop_and_check(mut retrylab: Child, folder: &Path, signal: i32) {
    let pids = client_pids(folder, &mut retrylab);
    let _leftovers = Leftovers(pids.clone());
    assert!(
        pids.iter().all(|&pid| alive(pid)),
        "the client runs: {pids:?}"
    );
    let pid = i32::try_from(retrylab.id()).expect("a pid");
    // SAFETY: `kill` only sends a signal, to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal sent");
    let status = wait_within(&mut retrylab, Duration::from_secs(20));
    let stderr = retrylab
        .stderr
        .take()
        .map(|mut e| {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
            text
        })
        .unwrap_or_default();
    assert_eq!(status.code(), Some(128 + signal), "{stderr}");
    assert!(
        stderr.contains("killed 1 command client process group(s)"),
        "{stderr}"
    );
    let start = Instant::now();
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still running 10 s after retrylab exited: {:?}",
            pids.iter().filter(|&&pid| alive(pid)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits at most `limit` for the child, killing it past that.
fn wait_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("retrylab was still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl-C on `retrylab run` (SIGINT, which the terminal sends to retrylab's group only).
#[test]
fn sigint_on_run_kills_the_running_client_and_its_child() {
    let folder = Folder::new("run");
    let file = scenario(&folder);
    let retrylab = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("run")
        .arg(&file)
        .current_dir(&folder.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retrylab runs");
    stop_and_check(retrylab, &folder.0, libc::SIGINT);
}

/// SIGTERM on `retrylab serve`, as the pytest plugin and the Node helper stop it when a
/// test's body raises.
#[test]
fn sigterm_on_serve_kills_the_client_it_spawned() {
    let folder = Folder::new("serve");
    let file = scenario(&folder);
    let retrylab = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["serve", "--until-eof", "--timeout", "60s"])
        .arg(&file)
        .current_dir(&folder.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retrylab serves");
    stop_and_check(retrylab, &folder.0, libc::SIGTERM);
}
