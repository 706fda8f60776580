//! Snapshots land in the crate whose test runs, wherever that crate is: a user's crate outside
//! this workspace gets them in its own `tests/snapshots`, never inside retrylab's source.
//!
//! retrylab reads `CARGO_MANIFEST_DIR` when the test runs (cargo sets it to the crate under
//! test), so a copy of this test binary started with the variable pointing at another folder
//! runs as that folder's crate would. That is what a crate in a workspace of its own does,
//! without building retrylab a second time for it.

use std::path::{Path, PathBuf};
use std::process::Command;

use retrylab::Scenario;

const YAML: &str = r#"
version: 1
name: external user
endpoints:
  api:
    script: [ { status: 503 }, { status: 200 } ]
network: { latency: 5ms }
operation: { endpoint: api, path: /ping }
client: { fixed: { delay: 1s, max_attempts: 2 } }
expect: { outcome: success, attempts: 2, gaps: [ { within: [1s, 1s] } ] }
snapshot: true
"#;

/// Set in the copy of this binary that plays the user's crate.
const CHILD: &str = "RETRYLAB_TEST_AS_EXTERNAL_CRATE";

/// The user's crate: runs the scenario and asserts its snapshot. Only meaningful in the
/// copy started by the tests below, with `CARGO_MANIFEST_DIR` pointing at the user's crate.
#[test]
fn as_the_users_crate() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let scenario = Scenario::from_yaml_str(YAML, "external/ping.yaml").expect("valid scenario");
    scenario.run_builtin().assert();
}

/// Runs [`as_the_users_crate`] with `crate_dir` as the crate under test.
fn run_as(crate_dir: &Path, update: &str) -> std::process::Output {
    Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "as_the_users_crate", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("CARGO_MANIFEST_DIR", crate_dir)
        .env("INSTA_UPDATE", update)
        .env_remove("RETRYLAB_SEED")
        .output()
        .expect("the test binary runs")
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("external")
}

#[test]
fn a_users_crate_compares_with_its_own_snapshot() {
    let output = run_as(&fixture(), "no");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_users_new_snapshot_is_written_in_its_crate() {
    let dir = std::env::temp_dir().join(format!("retrylab-external-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary crate folder");
    let output = run_as(&dir, "always");
    let written = dir.join("tests/snapshots/external__ping.snap");
    let text = std::fs::read_to_string(&written);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = text.unwrap_or_else(|e| panic!("no snapshot at {}: {e}", written.display()));
    let kept = std::fs::read_to_string(fixture().join("tests/snapshots/external__ping.snap"))
        .expect("the fixture's snapshot");
    // The same trace as the one kept for the fixture crate (the headers insta writes may
    // differ in their source line).
    let body = |s: &str| s.split("---\n").last().unwrap_or_default().to_owned();
    assert_eq!(body(&text), body(&kept));
}
