//! The scenario suite split over three machines by cargo-nextest
//! (docs/guide/ci-at-scale.md, its workflow docs/guide/ci-at-scale.yml):
//!
//! - every test the suite's own binary lists is in exactly one of the partitions
//!   `cargo nextest list --partition count:k/3` gives, and no partition holds a test the suite
//!   does not list;
//! - the workflow's own shard command, run for each of the three shards over part of the
//!   library, and its own report step, merging the shards' `JUnit`, come to what one unsplit run
//!   writes: the same tests, each with the same outcome, and the same totals.
//!
//! Where cargo-nextest is not installed the tests say so, with the command that installs it,
//! and check nothing: a split they cannot see is not a split they can vouch for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// The features of .ci/run's test step: there the build nextest asks cargo for is the one
/// that step made (and still fresh in the every-feature step after it), so listing and
/// running compile nothing. Run alone, a first listing builds it.
const FEATURES: [&str; 2] = ["--features", "retrylab/cli,retrylab/backoff"];

/// Everything `pipe` gives, read to its end on a thread of its own.
fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// How long one nested cargo command may take, a build of the suite included.
const CARGO_LIMIT: Duration = Duration::from_secs(15 * 60);

/// Runs `command` to its end, as `Command::output` does, but for at most [`CARGO_LIMIT`]:
/// past that its process group (cargo, nextest and the tests they started) is killed and
/// the test fails, rather than hang.
fn output_within(mut command: Command) -> Output {
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown}: {e}"));
    // Read on threads: a full pipe would otherwise stop the child before it could end.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("{shown}: {e}")) {
            break status;
        }
        if start.elapsed() > CARGO_LIMIT {
            let group = i32::try_from(child.id()).unwrap_or(0);
            if group > 1 {
                // SAFETY: `killpg` only sends a signal, to the group this function created.
                unsafe { libc::killpg(group, libc::SIGKILL) };
            }
            let _ = child.wait();
            panic!("{shown} still ran after {CARGO_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Whether `cargo nextest` runs here; where it does not, says so and how to install it.
fn nextest_installed() -> bool {
    let installed = Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "skipped: cargo-nextest is not installed, so its partitions cannot be checked; \
             install it with `cargo install cargo-nextest --locked` and run this test again"
        );
    }
    installed
}

/// The suite's tests in partition `k` of [`SHARDS`], as nextest chooses them, and the path of
/// the suite's binary nextest listed them from.
fn partition(k: u32) -> (Vec<String>, String) {
    // The suite's package and binary only, as the workflow's shards name them: listing the
    // whole workspace would also link the `retrylab` binary of these features over the one
    // a later step of .ci/run runs.
    let mut list = Command::new(cargo());
    list.args([
        "nextest",
        "list",
        "-p",
        "retrylab-tests",
        "--test",
        "scenarios",
    ])
    .args(FEATURES)
    .args(["--run-ignored", "all"])
    .args(["--partition", &format!("count:{k}/{SHARDS}")])
    .args(["--message-format", "json"])
    .current_dir(root());
    let output = output_within(list);
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
    if !nextest_installed() {
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

/// The part of the library the shards run: three folders of simulated files (27 tests, a few
/// seconds), three of them `-caught` files whose clients must fail. The whole library would
/// run four more times here (three shards and one unsplit run); which test lands in which
/// shard is checked over the whole library above.
const PART: &str = r"binary(scenarios) & test(/^\[[a-z_]+\] (http|sns|rocketmq)\//)";

/// The workflow, parsed as GitHub reads it.
fn workflow() -> serde_json::Value {
    let path = root().join("docs/guide/ci-at-scale.yml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `run:` of the first step in job `job` whose `run:` contains `needle`.
fn step_run<'w>(workflow: &'w serde_json::Value, job: &str, needle: &str) -> &'w str {
    workflow["jobs"][job]["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|step| step["run"].as_str())
        .find(|run| run.contains(needle))
        .unwrap_or_else(|| panic!("job `{job}` of the workflow has no step running `{needle}`"))
}

/// Where cargo puts its builds, and nextest its reports (`<target>/nextest/<profile>/`).
fn target_directory() -> PathBuf {
    let output = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("cargo metadata's JSON: {e}"));
    let target = metadata["target_directory"]
        .as_str()
        .unwrap_or_else(|| panic!("cargo metadata names no target directory"));
    PathBuf::from(target)
}

/// Runs the workflow's shard command, for shard `k` (or unsplit for `None`), over [`PART`],
/// and moves the `JUnit` it writes to `to`.
fn run_shard(command: &str, k: Option<u32>, to: &Path) {
    // The matrix value first: `${{ matrix.shard }}` holds spaces.
    let shard = k.map_or_else(|| "1".to_owned(), |k| k.to_string());
    let mut words: Vec<String> = command
        .replace("${{ matrix.shard }}", &shard)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let at = words
        .iter()
        .position(|w| w == "--partition")
        .unwrap_or_else(|| panic!("the shard command has no `--partition`: {command}"));
    if k.is_none() {
        words.drain(at..=at + 1);
    }
    assert_eq!(words[..3], ["cargo", "nextest", "run"], "{command}");
    let profile = words
        .iter()
        .position(|w| w == "--profile")
        .map(|at| words[at + 1].clone())
        .unwrap_or_else(|| panic!("the shard command names no nextest profile: {command}"));
    let report = target_directory()
        .join("nextest")
        .join(profile)
        .join("junit.xml");
    // A report left by an earlier run must not stand in for this one's.
    let _ = std::fs::remove_file(&report);
    let mut run = Command::new(cargo());
    run.args(&words[1..])
        .args(FEATURES)
        .args(["-E", PART])
        .current_dir(root());
    let output = output_within(run);
    let shown = format!("{command} (shard {k:?})");
    assert!(
        output.status.success(),
        "{shown} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    if let Some(folder) = to.parent() {
        std::fs::create_dir_all(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    }
    std::fs::rename(&report, to)
        .unwrap_or_else(|e| panic!("{shown} wrote no {}: {e}", report.display()));
}

/// A `JUnit` report's test cases, by name, with their outcomes, and its totals
/// (tests, failures, errors, skipped).
fn read_junit(path: &Path) -> (BTreeMap<String, &'static str>, [u64; 4]) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let suites = junit_parser::from_reader(std::io::BufReader::new(file))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cases = BTreeMap::new();
    for case in suites.suites.iter().flat_map(|suite| &suite.cases) {
        let outcome = match &case.status {
            junit_parser::TestStatus::Success => "passed",
            junit_parser::TestStatus::Failure(_) => "failed",
            junit_parser::TestStatus::Error(_) => "error",
            junit_parser::TestStatus::Skipped(_) => "skipped",
        };
        let again = cases.insert(case.original_name.clone(), outcome);
        assert!(
            again.is_none(),
            "{}: `{}` twice",
            path.display(),
            case.original_name
        );
    }
    let totals = [suites.tests, suites.failures, suites.errors, suites.skipped];
    (cases, totals)
}

/// A report beside the shards' that holds what the library's part never gives (every one of
/// its tests passes): a failure and a skip, so that the merge is seen to count them.
const PLANTED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="3" failures="1" errors="0" skipped="1">
    <testsuite name="planted" tests="3" failures="1" errors="0" skipped="1">
        <testcase name="planted failure" classname="planted"><failure message="planted">planted</failure></testcase>
        <testcase name="planted skip" classname="planted"><skipped/></testcase>
        <testcase name="planted pass" classname="planted"/>
    </testsuite>
</testsuites>
"#;

/// A scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The recipe end to end over part of the library: the workflow's shard command for shards
/// 1, 2 and 3, then its report step's Python merging their `JUnit` as the artifacts download,
/// against the same command run once unsplit. The shards hold each test once, with the
/// outcome the unsplit run gives it, and the merged report's tests and totals are the
/// unsplit run's plus those of a planted report with a failure and a skip.
#[test]
fn the_shards_merged_junit_is_one_unsplit_run() {
    if !nextest_installed() {
        return;
    }
    let workflow = workflow();
    let command = step_run(&workflow, "scenarios", "cargo nextest run");
    let merge = step_run(&workflow, "report", "junit.xml");
    let scratch = Scratch(target_directory().join(format!("sharding-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);

    let unsplit = scratch.0.join("unsplit.xml");
    run_shard(command, None, &unsplit);
    let (whole, whole_totals) = read_junit(&unsplit);
    assert!(
        whole.len() >= 20,
        "the part of the library ran {} tests",
        whole.len()
    );
    for folder in ["http/", "sns/", "rocketmq/"] {
        assert!(
            whole
                .keys()
                .any(|name| name.contains(&format!("] {folder}"))),
            "no test of {folder} ran: {:?}",
            whole.keys()
        );
    }
    assert!(
        whole.keys().any(|name| name.ends_with("-caught")),
        "no -caught file ran"
    );

    let mut union = BTreeMap::new();
    for k in 1..=SHARDS {
        // Where `actions/download-artifact` with a `pattern` puts each shard's report.
        let report = scratch
            .0
            .join(format!("junit/junit-scenarios-{k}/junit.xml"));
        run_shard(command, Some(k), &report);
        let (cases, _) = read_junit(&report);
        assert!(!cases.is_empty(), "shard {k}/{SHARDS} ran nothing");
        for (name, outcome) in cases {
            let again = union.insert(name.clone(), outcome);
            assert!(again.is_none(), "`{name}` ran in two shards");
        }
    }
    assert_eq!(union, whole, "the shards together against one unsplit run");

    let planted = scratch.0.join("junit/junit-planted/junit.xml");
    std::fs::create_dir_all(scratch.0.join("junit/junit-planted")).expect("a scratch folder");
    std::fs::write(&planted, PLANTED).expect("the planted report");
    let (planted_cases, planted_totals) = read_junit(&planted);
    assert_eq!(
        planted_totals,
        [3, 1, 0, 1],
        "the planted report's own totals"
    );
    let mut expected = whole.clone();
    expected.extend(planted_cases);
    let expected_totals: Vec<u64> = whole_totals
        .iter()
        .zip(planted_totals)
        .map(|(a, b)| a + b)
        .collect();

    let python = Command::new("python3")
        .args(["-c", merge])
        .current_dir(&scratch.0)
        .output();
    match python {
        Err(e) => eprintln!(
            "the report step's merge was not run: python3 cannot be started here ({e}); \
             install Python 3 and run this test again"
        ),
        Ok(output) => {
            assert!(
                output.status.success(),
                "the report step's merge:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let (merged, merged_totals) = read_junit(&scratch.0.join("junit.xml"));
            assert_eq!(
                merged, expected,
                "the merged report against one unsplit run"
            );
            assert_eq!(
                merged_totals.to_vec(),
                expected_totals,
                "tests, failures, errors, skipped of the merged report and of one unsplit \
                 run with the planted report"
            );
        }
    }
}
