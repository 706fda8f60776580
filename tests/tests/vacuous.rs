//! Expectations no run can fail are warned of, and a run that judged nothing says so.

use retrylab::scenario::Scenario;

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "vacuous.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(yaml: &str) -> Vec<String> {
    scenario(yaml)
        .warnings()
        .iter()
        .map(ToString::to_string)
        .collect()
}

const BASE: &str = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
                    operation: { endpoint: api }\nclient: { fixed: { delay: 1ms, max_attempts: 2 } }\n";

/// `tolerance: 1m` swallows `gaps_each: { at_least: 30s }`: the 1 ms gap passes it. The
/// warning says so; the run indeed passes.
#[test]
fn a_tolerance_that_swallows_a_lower_bound_is_warned_of() {
    let yaml = format!("{BASE}tolerance: 1m\nexpect: {{ gaps_each: {{ at_least: 30s }} }}\n");
    let found = warnings(&yaml);
    assert_eq!(
        found,
        [
            "vacuous.yaml:7:22 expect.gaps_each: with `tolerance: 1m`, a duration of 0 meets the \
          lower bound 30s: the check cannot fail, expected a tolerance below the bound (it is \
          slack for measurement, not the rule)"
        ]
    );
    assert!(scenario(&yaml).run_builtin().passed());
    // Below the bound, the check can fail, and there is no warning.
    let fair = format!("{BASE}tolerance: 10ms\nexpect: {{ gaps_each: {{ at_least: 30s }} }}\n");
    assert!(warnings(&fair).is_empty());
    assert!(!scenario(&fair).run_builtin().passed());
}

#[test]
fn empty_expectations_are_warned_of() {
    let empty = warnings(&format!("{BASE}expect: {{}}\n"));
    assert_eq!(empty.len(), 1);
    assert!(
        empty[0].contains("`expect` holds no check, so every run passes it"),
        "{empty:?}"
    );
    let gaps = warnings(&format!("{BASE}expect: {{ attempts: 2, gaps: [] }}\n"));
    assert_eq!(gaps.len(), 1);
    assert!(
        gaps[0].contains("an empty `gaps` list judges no gap"),
        "{gaps:?}"
    );
}

/// A file with no `expect` over failing calls passes, and its report says that nothing was
/// judged.
#[test]
fn a_run_with_no_check_says_nothing_was_judged() {
    let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api, calls: 3 }\n";
    let report = scenario(yaml).run_builtin();
    assert!(report.verdicts().is_empty());
    assert!(
        report
            .summary()
            .contains("note: nothing was judged (no `expect`)"),
        "{}",
        report.summary()
    );
}

/// `must_fail` over a check that was not judged says so, never that it passed.
#[test]
fn must_fail_names_a_check_that_was_not_judged() {
    let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                operation: { endpoint: api }\nexpect: { retry_after: { honour: max } }\n\
                must_fail: [retry_after]\n";
    let report = scenario(yaml).run_builtin();
    let marker = report
        .verdicts()
        .iter()
        .find(|v| v.check == "must_fail")
        .unwrap_or_else(|| panic!("{}", report.summary()));
    assert!(
        marker.message.contains("retry_after was not judged"),
        "{}",
        marker.message
    );
}
