//! The `retrylab` binary (feature `cli`).
#![cfg(feature = "cli")]

use std::process::Command;

/// `retrylab check` prints a scenario's contradictions as located warnings, and they fail
/// nothing.
#[test]
fn check_prints_warnings_and_passes() {
    let dir = std::env::temp_dir().join(format!("retrylab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("too-many.yaml");
    std::fs::write(
        &file,
        "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nclient: { exponential: { max_attempts: 3 } }\n\
         expect: { attempts: 4 }\n",
    )
    .expect("the scenario file");
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("retrylab runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let shown = file.display().to_string();
    assert_eq!(
        stdout,
        format!(
            "ok    {shown}\nwarning: {shown}:6:21 expect.attempts: every call must make at \
             least 4 attempts, but the built-in client (`exponential`) makes at most 3 per \
             call\n1 files, 0 with errors\n"
        )
    );
}

/// A temporary folder with `files`, removed when dropped.
struct Folder(std::path::PathBuf);

impl Folder {
    fn with(name: &str, files: &[(&str, &str)]) -> Folder {
        let dir = std::env::temp_dir().join(format!("retrylab-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        for (file, text) in files {
            std::fs::write(dir.join(file), text).expect("a scenario file");
        }
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_json(folder: &Folder) -> (std::process::Output, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", "--format", "json"])
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let json = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (output, json)
}

const PASSING: &str = "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                       operation: { endpoint: api }\nexpect: { attempts: 1 }\n";
const FAILING: &str = "version: 1\nname: fails\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                       operation: { endpoint: api, calls: 2 }\n\
                       client: { fixed: { delay: 1s, max_attempts: 2 } }\n\
                       expect: { outcome: success }\n";
const CUSTOM: &str = "version: 1\nname: custom\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                      operation: { endpoint: api }\nclient: { custom: mine }\n";

/// A skipped scenario said `"passed": true`, and verdicts were only text.
#[test]
fn json_tells_skipped_from_passed_and_structures_verdicts() {
    let folder = Folder::with(
        "json",
        &[
            ("a-ok.yaml", PASSING),
            ("b-fails.yaml", FAILING),
            ("c-custom.yaml", CUSTOM),
        ],
    );
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(1));
    let runs = json["runs"].as_array().expect("runs");
    let statuses: Vec<(&str, bool)> = runs
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [("passed", true), ("failed", false), ("skipped", false)]
    );
    assert_eq!(json["totals"]["skipped"], 1);
    let outcome = runs[1]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "outcome")
        .expect("the outcome verdict");
    assert_eq!(outcome["judgement"], "failed");
    let findings = outcome["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[1]["call"], 1);
    assert_eq!(findings[1]["client"], 0);
}

/// Nothing ran, so nothing was verified: that is not a success.
#[test]
fn a_run_where_everything_was_skipped_fails() {
    let folder = Folder::with("skipped", &[("custom.yaml", CUSTOM)]);
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json["runs"][0]["status"], "skipped");
    assert!(String::from_utf8_lossy(&output.stderr).contains("no scenario ran"));
}

#[test]
fn passing_runs_exit_zero() {
    let folder = Folder::with("passing", &[("ok.yaml", PASSING), ("custom.yaml", CUSTOM)]);
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(0), "{json}");
}
