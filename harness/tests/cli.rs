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
