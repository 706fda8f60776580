//! The scenario suite split over three machines by cargo-nextest
//! (docs/guide/ci-at-scale.md): every test the suite's own binary lists is in exactly one of
//! the partitions `cargo nextest list --partition count:k/3` gives, and no partition holds a
//! test the suite does not list.
//!
//! Where cargo-nextest is not installed the test says so, with the command that installs it,
//! and checks nothing: a split it cannot see is not a split it can vouch for.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// How many machines the recipe's workflow splits the suite over.
const SHARDS: u32 = 3;

/// nextest's name for the suite's binary: `<package>::<test target>`.
const SUITE: &str = "retrylab-tests::scenarios";

/// The workspace's root, where nextest reads .config/nextest.toml.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| panic!("the tests crate has a parent folder"))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The suite's tests in partition `k` of [`SHARDS`], as nextest chooses them, and the path of
/// the suite's binary nextest listed them from.
fn partition(k: u32) -> (Vec<String>, String) {
    // The workspace and features of .ci/run's test step: the build nextest asks cargo for is
    // then the one already made, and listing costs no compilation.
    let output = Command::new(cargo())
        .args(["nextest", "list", "--workspace"])
        .args(["--features", "retrylab/cli,retrylab/backoff"])
        .args(["-E", "binary(scenarios)", "--run-ignored", "all"])
        .args(["--partition", &format!("count:{k}/{SHARDS}")])
        .args(["--message-format", "json"])
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("cargo nextest list: {e}"));
    assert!(
        output.status.success(),
        "cargo nextest list --partition count:{k}/{SHARDS}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("cargo nextest list's JSON: {e}"));
    let suite = &list["rust-suites"][SUITE];
    let binary = suite["binary-path"]
        .as_str()
        .unwrap_or_else(|| panic!("nextest lists no binary {SUITE}"))
        .to_owned();
    let cases = suite["testcases"]
        .as_object()
        .unwrap_or_else(|| panic!("nextest lists no tests of {SUITE}"));
    let names = cases
        .iter()
        .filter(|(_, case)| case["filter-match"]["status"] == "matches")
        .map(|(name, _)| name.clone())
        .collect();
    (names, binary)
}

/// Every test of the suite's own `--list` is in exactly one nextest partition, and the
/// partitions hold nothing else: the shards together run what one machine runs.
#[test]
fn every_test_of_the_suite_is_in_exactly_one_nextest_partition() {
    let installed = Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "skipped: cargo-nextest is not installed, so its partitions cannot be checked; \
             install it with `cargo install cargo-nextest --locked` and run this test again"
        );
        return;
    }
    let mut shard_of: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut binaries = Vec::new();
    for k in 1..=SHARDS {
        let (names, binary) = partition(k);
        assert!(!names.is_empty(), "partition {k}/{SHARDS} is empty");
        for name in names {
            shard_of.entry(name).or_default().push(k);
        }
        binaries.push(binary);
    }
    binaries.dedup();
    assert_eq!(binaries.len(), 1, "one suite binary: {binaries:?}");
    // The suite's own listing, as `cargo test --test scenarios -- --list` prints it: every
    // test, ignored ones too (`[kind] name: test` lines).
    let listed = Command::new(&binaries[0])
        .arg("--list")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("{} --list: {e}", binaries[0]));
    assert!(listed.status.success(), "{} --list", binaries[0]);
    let listed: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect();
    assert!(
        listed.len() > 100,
        "the library lists {} tests",
        listed.len()
    );
    for name in &listed {
        let shards = shard_of.remove(name).unwrap_or_default();
        assert_eq!(shards.len(), 1, "`{name}` is in partitions {shards:?}");
    }
    assert!(
        shard_of.is_empty(),
        "partitions hold tests the suite does not list: {:?}",
        shard_of.keys().collect::<Vec<_>>()
    );
}
