//! `retrylab serve --until-eof`: the caller says when its client is done by closing serve's
//! standard input, as the pytest plugin and the Node helper do. Serving is not ended by a
//! quiet client while standard input is open, and is judged at once when it closes.
#![cfg(feature = "cli")]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A scenario file in a folder of its own, removed afterwards.
struct Folder(std::path::PathBuf);

impl Folder {
    fn with(name: &str, yaml: &str) -> Folder {
        let dir =
            std::env::temp_dir().join(format!("retrylab-until-eof-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        std::fs::write(dir.join("served.yaml"), yaml).expect("the scenario");
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SCENARIO: &str = "version: 1\nname: served\n\
    endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
    operation: { endpoint: api }\nexpect: { attempts: 2, outcome: success }\n";

/// Starts `retrylab serve --until-eof --format json` on the scenario, with a short `--idle`
/// that must not end serving, and reads the URL lines up to the empty line after them.
fn start(folder: &Folder) -> (Child, BufReader<ChildStdout>, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args([
            "serve",
            "--until-eof",
            "--format",
            "json",
            "--idle",
            "100ms",
        ])
        .args(["--timeout", "30s"])
        .arg(folder.0.join("served.yaml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("retrylab runs");
    let mut stdout = BufReader::new(child.stdout.take().expect("its output"));
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).expect("a URL line");
        assert!(read > 0, "serve ended before the empty line: {lines:?}");
        if line.trim_end().is_empty() {
            break;
        }
        lines.push(line.trim_end().to_owned());
    }
    (child, stdout, lines)
}

/// Waits at most `limit` for the child, killing it past that.
fn wait_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve was still running {limit:?} after its standard input closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn serve_judges_when_standard_input_closes_and_not_before() {
    let folder = Folder::with("judged", SCENARIO);
    let (mut child, mut stdout, lines) = start(&folder);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let address = lines[0]
        .strip_prefix("api http://")
        .unwrap_or_else(|| panic!("{lines:?}"))
        .to_owned();
    for _ in 0..2 {
        let mut stream = std::net::TcpStream::connect(&address).expect("the endpoint");
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n")
            .expect("the request");
        stream.read_to_end(&mut Vec::new()).expect("the answer");
    }
    // Quiet for six times --idle: serving goes on while standard input is open.
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        child.try_wait().expect("the child's status").is_none(),
        "serve ended on a quiet client while its standard input was open"
    );
    let closed = Instant::now();
    drop(child.stdin.take());
    let status = wait_within(&mut child, Duration::from_secs(5));
    let took = closed.elapsed();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the JSON");
    assert!(status.success(), "{rest}");
    let json: serde_json::Value = serde_json::from_str(&rest).expect("one JSON document");
    assert_eq!(json["passed"], true, "{json}");
    assert!(
        took < Duration::from_secs(2),
        "serve judged {took:?} after its standard input closed"
    );
}

#[test]
fn standard_input_closed_before_any_request_fails_at_once() {
    let folder = Folder::with("silent", SCENARIO);
    let (mut child, mut stdout, _) = start(&folder);
    drop(child.stdin.take());
    let status = wait_within(&mut child, Duration::from_secs(5));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the JSON");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(
        rest.contains("the client was done (serving was told so) before any request arrived"),
        "{rest}"
    );
}
