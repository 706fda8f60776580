//! Scenario pairs that judge one run two ways: the library shows a defect and its remedy
//! on the same trace, so the two files must describe the same run. These tests keep them so,
//! rather than leaving it to whoever edits one of them.

use std::path::Path;

use retrylab::scenario::Scenario;

/// A library scenario, by its path under `scenarios/`.
fn load(file: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// What a snapshot says about the run, without what judges it: the `scenario:` line (its
/// name) and the `verdicts:` section.
fn trace_of(snapshot: &str) -> String {
    let mut kept = String::new();
    let mut in_verdicts = false;
    for line in snapshot.lines() {
        if line.starts_with("verdicts:") {
            in_verdicts = true;
            continue;
        }
        if in_verdicts && line.starts_with("  ") {
            continue;
        }
        in_verdicts = false;
        if !line.starts_with("scenario:") {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// `a` and `b` differ only in what judges the run (`name`, `description`, `expect`,
/// `must_fail`), and their runs leave the same trace.
fn same_run_two_verdicts(a: &str, b: &str) {
    let (a, b) = (load(a), load(b));
    let mut judged_like_b = a.clone();
    judged_like_b.name.clone_from(&b.name);
    judged_like_b.description.clone_from(&b.description);
    judged_like_b.expect = b.expect.clone();
    judged_like_b.must_fail.clone_from(&b.must_fail);
    assert_eq!(
        judged_like_b, b,
        "the pair differs in more than name, description, expect and must_fail"
    );
    let (ra, rb) = (a.run_builtin(), b.run_builtin());
    let trace = trace_of(&ra.snapshot_text());
    assert!(trace.contains("attempts:\n"), "{trace}");
    assert_eq!(trace, trace_of(&rb.snapshot_text()));
}

/// The duplicate on timeout: caught by `duplicates` and `distinct_keys`, and processed
/// once by a consumer idempotent on the business key.
#[test]
fn the_duplicate_on_timeout_pair_is_one_run() {
    same_run_two_verdicts(
        "brokers/duplicate-on-timeout-caught.yaml",
        "brokers/duplicate-on-timeout-idempotent-consumer.yaml",
    );
}

/// The comparison sees a difference outside the verdicts.
#[test]
fn a_different_trace_is_told_apart() {
    let snapshot = "scenario: a\nattempts:\n  t=0.000s  #1\nverdicts:\n  ok x\nend: t=1.000s\n";
    let other = snapshot.replace("end: t=1.000s", "end: t=2.000s");
    assert_eq!(
        trace_of(snapshot),
        "attempts:\n  t=0.000s  #1\nend: t=1.000s\n"
    );
    assert_ne!(trace_of(snapshot), trace_of(&other));
    assert_eq!(
        trace_of(snapshot),
        trace_of(
            &snapshot
                .replace("ok x", "FAIL y")
                .replace("scenario: a", "scenario: b")
        )
    );
}
