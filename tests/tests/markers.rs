//! `must_fail: [...]` and `status: known_failure`, the two markers of a scenario that
//! demonstrates a defect (docs/scenario-format.md): what makes such a scenario pass, and what makes
//! it fail.

use retrylab::{Report, Scenario};

/// Throttled twice with `Retry-After: 3`, then a 200, latency 1ms. The client waits 100ms,
/// then 200ms, and treats Retry-After as `retry_after` says (`honour`: it waits 3s instead);
/// `expect` (lines under `expect:`) and `markers` (top-level lines) are added as written.
fn throttled(retry_after: &str, expect: &str, markers: &str) -> Scenario {
    let yaml = format!(
        r#"
version: 1
name: throttled
endpoints:
  api:
    script:
      - {{ status: 429, retry_after: 3, times: 2 }}
      - {{ status: 200 }}
network: {{ latency: 1ms }}
operation: {{ endpoint: api, path: /quota }}
client:
  exponential: {{ initial: 100ms, jitter: none, max_attempts: 4, retry_after: {retry_after} }}
expect:
  outcome: success
{expect}
{markers}
"#
    );
    Scenario::from_yaml_str(&yaml, "markers.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The checks that failed, by name.
fn failed(report: &Report) -> Vec<&str> {
    report.failures().map(|v| v.check.as_str()).collect()
}

fn verdict<'a>(report: &'a Report, check: &str) -> &'a retrylab::Verdict {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

#[test]
fn must_fail_passes_when_exactly_its_check_fails() {
    let report = throttled(
        "ignore",
        "  attempts: 3\n  retry_after: { honour: max }",
        "must_fail: [retry_after]",
    )
    .run_builtin();
    assert!(report.passed(), "{}", report.summary());
    // The caught defect is this scenario's success, and the verdict still says what it was.
    let caught = verdict(&report, "retry_after");
    assert!(caught.passed());
    assert!(
        caught.message.starts_with("failed as must_fail expects: ")
            && caught
                .message
                .contains("attempt 2 started 0.100s after the head of a 429"),
        "{}",
        caught.message
    );
    assert!(verdict(&report, "attempts").passed());
}

#[test]
fn must_fail_fails_when_its_check_passes() {
    // The same file with a client that honours Retry-After: nothing is caught.
    let report = throttled(
        "honour",
        "  attempts: 3\n  retry_after: { honour: max }",
        "must_fail: [retry_after]",
    )
    .run_builtin();
    assert!(!report.passed(), "{}", report.summary());
    assert_eq!(failed(&report), ["must_fail"], "{}", report.summary());
    let message = &verdict(&report, "must_fail").message;
    assert!(
        message.contains("must_fail lists retry_after but retry_after passed")
            && message.contains("was not caught"),
        "{message}"
    );
    assert!(verdict(&report, "retry_after").passed());
}

#[test]
fn must_fail_fails_when_another_check_fails_too() {
    // The defect is caught, but `attempts: 5` is wrong as well (the client made 3).
    let report = throttled(
        "ignore",
        "  attempts: 5\n  retry_after: { honour: max }",
        "must_fail: [retry_after]",
    )
    .run_builtin();
    assert!(!report.passed(), "{}", report.summary());
    assert_eq!(failed(&report), ["attempts"], "{}", report.summary());
    assert!(verdict(&report, "retry_after").passed());
}

#[test]
fn must_fail_with_two_checks_needs_both_to_fail() {
    // retry_after fails, gaps (at least 3s each) fails as well: both are listed, so it passes.
    let both = throttled(
        "ignore",
        "  retry_after: { honour: max }\n  gaps_each: { at_least: 3s }",
        "must_fail: [retry_after, gaps_each]",
    )
    .run_builtin();
    assert!(both.passed(), "{}", both.summary());
    // Listing a check that passes (attempts: 3 holds) fails the marker.
    let one_holds = throttled(
        "ignore",
        "  retry_after: { honour: max }\n  attempts: 3",
        "must_fail: [retry_after, attempts]",
    )
    .run_builtin();
    assert_eq!(failed(&one_holds), ["must_fail"], "{}", one_holds.summary());
    assert!(
        verdict(&one_holds, "must_fail")
            .message
            .contains("but attempts passed"),
        "{}",
        one_holds.summary()
    );
}

#[test]
fn must_fail_applies_to_a_custom_client_too() {
    // A closure that retries at once, twice, ignoring Retry-After: caught the same way.
    let scenario = throttled(
        "honour",
        "  attempts: 3\n  retry_after: { honour: max }",
        "must_fail: [retry_after]",
    );
    let report = scenario.run(|env| async move {
        let client = env.http_client();
        let mut status = 0;
        for _ in 0..3 {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            status = response.status().as_u16();
            drop(response);
            if status == 200 {
                break;
            }
        }
        Ok::<_, String>(status)
    });
    assert!(report.passed(), "{}", report.summary());
    assert!(
        verdict(&report, "retry_after")
            .message
            .contains("attempt 2 started 0.000s after the head")
    );
}

#[test]
fn known_failure_passes_while_it_fails() {
    // The client ignores Retry-After, so `retry_after` fails: a known bug.
    let report = throttled(
        "ignore",
        "  attempts: 3\n  retry_after: { honour: max }",
        "status: known_failure",
    )
    .run_builtin();
    assert!(report.passed(), "{}", report.summary());
    // The verdicts collapse to one that names what still fails.
    assert_eq!(report.verdicts().len(), 1, "{}", report.summary());
    let known = verdict(&report, "known_failure");
    assert!(known.passed());
    assert_eq!(known.message, "fails as known (retry_after)");
}

#[test]
fn known_failure_reports_when_it_now_passes() {
    // The bug is fixed (the client honours Retry-After): the marker must go.
    let report = throttled(
        "honour",
        "  attempts: 3\n  retry_after: { honour: max }",
        "status: known_failure",
    )
    .run_builtin();
    assert!(!report.passed(), "{}", report.summary());
    assert_eq!(failed(&report), ["known_failure"], "{}", report.summary());
    assert!(
        verdict(&report, "known_failure")
            .message
            .contains("now passes: remove the marker"),
        "{}",
        report.summary()
    );
    // The checks themselves are still reported, all passing.
    assert!(verdict(&report, "retry_after").passed());
    assert!(verdict(&report, "attempts").passed());
}

#[test]
fn the_two_markers_do_not_combine() {
    // A known failure is expected to fail until fixed; a must_fail scenario always fails its
    // named checks: one file cannot be both, and the error says where.
    let yaml = r#"
version: 1
name: both
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
expect: { attempts: 2 }
must_fail: [attempts]
status: known_failure
"#;
    let error = Scenario::from_yaml_str(yaml, "both.yaml")
        .expect_err("both markers")
        .to_string();
    assert!(
        error.contains("both.yaml:")
            && error.contains("`must_fail` cannot be combined with `status: known_failure`"),
        "{error}"
    );
}

#[test]
fn the_library_marks_its_defect_scenarios() {
    // Every library file that carries a marker passes with the built-in client: the markers
    // are what makes them pass.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/");
    for (file, marker) in [
        ("http/retry-after-ignored.yaml", "must_fail"),
        ("idempotency/duplicate-on-timeout-caught.yaml", "must_fail"),
    ] {
        let scenario =
            Scenario::load(format!("{root}{file}")).unwrap_or_else(|e| panic!("{file}: {e}"));
        match marker {
            "must_fail" => assert!(!scenario.must_fail.is_empty(), "{file}"),
            _ => assert!(scenario.status.is_some(), "{file}"),
        }
        let report = scenario.run_builtin();
        assert!(report.passed(), "{file}\n{}", report.summary());
    }
}
