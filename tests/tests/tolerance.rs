//! `tolerance`: every timing bound of every check is widened by it, in the direction that
//! forgives measurement jitter, and says so; without it a simulated run is judged to the
//! millisecond. Each check is run on the sim backend with a client whose timing is known
//! exactly, against a bound it misses by exactly the tolerance (passes) and by one
//! millisecond more (fails), and without a tolerance against a bound it misses by 1 ms.

use retrylab::prelude::*;
use retrylab::scenario::{BackendKind, Millis};

/// A scenario of `script` (steps of endpoint `api`), the reference client `client` and the
/// checks `expect`, with `tolerance: <tolerance>` when there is one.
fn scenario(script: &str, client: &str, expect: &str, tolerance: Option<&str>) -> Scenario {
    let mut yaml = format!(
        "version: 1\n\
         name: tolerance\n\
         endpoints: {{ api: {{ script: [ {script} ] }} }}\n\
         operation: {{ endpoint: api, path: /items }}\n\
         client: {client}\n\
         expect: {expect}\n"
    );
    if let Some(t) = tolerance {
        yaml.push_str(&format!("tolerance: {t}\n"));
    }
    Scenario::from_yaml_str(&yaml, "tolerance.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The judgement and message of `check` on a run of the scenario.
fn judged(scenario: &Scenario, check: &str) -> (Judgement, String) {
    let report = scenario.run_builtin();
    let v = report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()));
    (v.judgement, v.message.clone())
}

/// Two 503s, then a 200: three attempts, each gap exactly 1s, the call 2s long.
const TWO_503S: &str = "{ status: 503, times: 2 }, { status: 200 }";
const EVERY_SECOND: &str = "{ fixed: { delay: 1s, max_attempts: 3 } }";

/// Runs `expect` (with `{}` standing for a bound) on [`TWO_503S`] and [`EVERY_SECOND`]:
/// `passes` and `fails` under a 50ms tolerance, `exact_fails` without one. Returns the
/// failing messages, with and without the tolerance.
fn widened(check: &str, expect: &str, passes: &str, fails: &str, exact_fails: &str) -> [String; 2] {
    let with = |bound: &str, tolerance| {
        let s = scenario(
            TWO_503S,
            EVERY_SECOND,
            &expect.replace("{}", bound),
            tolerance,
        );
        judged(&s, check)
    };
    let (judgement, message) = with(passes, Some("50ms"));
    assert_eq!(judgement, Judgement::Passed, "{check} {passes}: {message}");
    let (judgement, tolerant) = with(fails, Some("50ms"));
    assert_eq!(judgement, Judgement::Failed, "{check} {fails}: {tolerant}");
    let (judgement, exact) = with(exact_fails, None);
    assert_eq!(
        judgement,
        Judgement::Failed,
        "{check} {exact_fails}: {exact}"
    );
    [tolerant, exact]
}

#[test]
fn gaps_each_lower_bound_is_lowered() {
    let [tolerant, exact] = widened(
        "gaps_each",
        "{ gaps_each: { at_least: {} } }",
        "1050ms",
        "1051ms",
        "1001ms",
    );
    assert_eq!(
        tolerant,
        "call 0: attempt 2 started 1.000s after attempt 1 ended, expected >= 1.051s (less the \
         50ms tolerance); call 0: attempt 3 started 1.000s after attempt 2 ended, expected >= \
         1.051s (less the 50ms tolerance)"
    );
    assert_eq!(
        exact,
        "call 0: attempt 2 started 1.000s after attempt 1 ended, expected >= 1.001s; call 0: \
         attempt 3 started 1.000s after attempt 2 ended, expected >= 1.001s"
    );
    let passing = scenario(
        TWO_503S,
        EVERY_SECOND,
        "{ gaps_each: { at_least: 1050ms } }",
        Some("50ms"),
    );
    assert_eq!(
        judged(&passing, "gaps_each").1,
        "every gap was >= 1.050s (gaps: 2, less the 50ms tolerance)"
    );
}

#[test]
fn gaps_each_upper_bound_is_raised() {
    widened(
        "gaps_each",
        "{ gaps_each: { at_most: {} } }",
        "950ms",
        "949ms",
        "999ms",
    );
}

#[test]
fn gaps_each_range_is_widened_on_both_sides() {
    let [tolerant, _] = widened(
        "gaps_each",
        "{ gaps_each: { within: {} } }",
        "[1050ms, 2s]",
        "[1051ms, 2s]",
        "[1001ms, 2s]",
    );
    assert!(
        tolerant.ends_with("expected within [1.051s, 2.000s] (give or take the 50ms tolerance)"),
        "{tolerant}"
    );
    widened(
        "gaps_each",
        "{ gaps_each: { within: {} } }",
        "[0s, 950ms]",
        "[0s, 949ms]",
        "[0s, 999ms]",
    );
}

#[test]
fn gaps_are_widened() {
    widened(
        "gaps",
        "{ gaps: {} }",
        "[ { at_least: 1050ms }, { at_most: 950ms } ]",
        "[ { at_least: 1050ms }, { at_most: 949ms } ]",
        "[ { at_least: 1000ms }, { at_most: 999ms } ]",
    );
}

#[test]
fn total_time_is_widened() {
    let [tolerant, exact] = widened(
        "total_time",
        "{ total_time: { at_most: {} } }",
        "1950ms",
        "1949ms",
        "1999ms",
    );
    assert_eq!(
        tolerant,
        "call 0 took 2.000s, expected <= 1.949s (plus the 50ms tolerance)"
    );
    assert_eq!(exact, "call 0 took 2.000s, expected <= 1.999s");
    widened(
        "total_time",
        "{ total_time: { at_least: {} } }",
        "2050ms",
        "2051ms",
        "2001ms",
    );
}

#[test]
fn conforms_to_is_widened() {
    let [tolerant, exact] = widened(
        "conforms_to",
        "{ conforms_to: { fixed: { delay: {} } } }",
        "1050ms",
        "1051ms",
        "1001ms",
    );
    assert!(
        tolerant.starts_with(
            "call 0: attempt 2 started 1.000s after the end of attempt 1, a 503 (needed \
             exactly 1.051s, give or take the 50ms tolerance)"
        ),
        "{tolerant}"
    );
    assert!(
        exact.starts_with(
            "call 0: attempt 2 started 1.000s after the end of attempt 1, a 503 (needed \
             exactly 1.001s)"
        ),
        "{exact}"
    );
    let passing = scenario(
        TWO_503S,
        EVERY_SECOND,
        "{ conforms_to: { fixed: { delay: 950ms } } }",
        Some("50ms"),
    );
    assert_eq!(
        judged(&passing, "conforms_to"),
        (
            Judgement::Passed,
            "3 attempts conform to fixed (give or take the 50ms tolerance)".to_owned()
        )
    );
}

/// A 503 asking for 2 seconds, then a 200, and a client that ignores the header and waits
/// `delay` after the head.
fn retry_after(delay: &str, honour: &str, tolerance: Option<&str>) -> (Judgement, String) {
    let s = scenario(
        "{ status: 503, retry_after: 2 }, { status: 200 }",
        &format!("{{ fixed: {{ delay: {delay}, retry_after: ignore, max_attempts: 2 }} }}"),
        &format!("{{ retry_after: {{ honour: {honour} }} }}"),
        tolerance,
    );
    judged(&s, "retry_after")
}

#[test]
fn a_retry_may_come_up_to_the_tolerance_early() {
    assert_eq!(
        retry_after("1950ms", "max", Some("50ms")),
        (
            Judgement::Passed,
            "all 1 Retry-After values were honoured (less the 50ms tolerance)".to_owned()
        )
    );
    assert_eq!(
        retry_after("1950ms", "max", Some("49ms")),
        (
            Judgement::Failed,
            "call 0: attempt 2 started 1.950s after the head of a 503 with Retry-After: 2 \
             (needed >= 2.000s, less the 49ms tolerance)"
                .to_owned()
        )
    );
    assert_eq!(
        retry_after("1999ms", "max", None),
        (
            Judgement::Failed,
            "call 0: attempt 2 started 1.999s after the head of a 503 with Retry-After: 2 \
             (needed >= 2.000s)"
                .to_owned()
        )
    );
    assert_eq!(retry_after("2s", "max", None).0, Judgement::Passed);
}

#[test]
fn an_exact_retry_may_come_up_to_the_tolerance_early_or_late() {
    for delay in ["1950ms", "2050ms"] {
        let (judgement, message) = retry_after(delay, "exact", Some("50ms"));
        assert_eq!(judgement, Judgement::Passed, "{delay}: {message}");
    }
    for delay in ["1949ms", "2051ms"] {
        let (judgement, message) = retry_after(delay, "exact", Some("50ms"));
        assert_eq!(judgement, Judgement::Failed, "{delay}: {message}");
        assert!(
            message.ends_with("(needed exactly 2.000s, give or take the 50ms tolerance)"),
            "{message}"
        );
    }
    for delay in ["1999ms", "2001ms"] {
        assert_eq!(
            retry_after(delay, "exact", None).0,
            Judgement::Failed,
            "{delay}"
        );
    }
}

/// 503s forever, three attempts a second apart: the last starts 2s after the call.
fn deadline(limit: &str, tolerance: Option<&str>) -> (Judgement, String) {
    let s = scenario(
        "{ status: 503 }",
        EVERY_SECOND,
        &format!("{{ no_attempt_after: {limit} }}"),
        tolerance,
    );
    judged(&s, "no_attempt_after")
}

#[test]
fn no_attempt_after_is_raised() {
    assert_eq!(
        deadline("1950ms", Some("50ms")),
        (
            Judgement::Passed,
            "every attempt of every call started within 1.950s (plus the 50ms tolerance) of its \
             call's start (3 attempts; the latest, call 0's attempt 3, at 2.000s)"
                .to_owned()
        )
    );
    assert_eq!(
        deadline("1949ms", Some("50ms")),
        (
            Judgement::Failed,
            "call 0: attempt 3 started 2.000s after the call started, later than 1.949s (plus \
             the 50ms tolerance)"
                .to_owned()
        )
    );
    assert_eq!(deadline("1999ms", None).0, Judgement::Failed);
    assert_eq!(deadline("2s", None).0, Judgement::Passed);
}

/// 503s forever, three attempts a second apart: requests arrive at 0s, 1s and 2s.
fn max_rate(window: &str, tolerance: Option<&str>) -> (Judgement, String) {
    let s = scenario(
        "{ status: 503 }",
        EVERY_SECOND,
        &format!("{{ max_rate: {{ window: {window}, at_most: 1 }} }}"),
        tolerance,
    );
    judged(&s, "max_rate")
}

#[test]
fn max_rate_window_is_narrowed() {
    // 1050ms less 50ms: [t, t + 1s) holds one request of each.
    assert_eq!(
        max_rate("1050ms", Some("50ms")),
        (
            Judgement::Passed,
            "no endpoint received more than 1 requests in 1.000s (the 1.050s window less the \
             50ms tolerance)"
                .to_owned()
        )
    );
    assert_eq!(
        max_rate("1051ms", Some("50ms")),
        (
            Judgement::Failed,
            "`api` received 2 requests from 0.000s to 1.000s, within 1.001s (the 1.051s window \
             less the 50ms tolerance; at most 1 allowed)"
                .to_owned()
        )
    );
    assert_eq!(max_rate("1001ms", None).0, Judgement::Failed);
    assert_eq!(max_rate("1s", None).0, Judgement::Passed);
    // A window no wider than the tolerance keeps a millisecond.
    assert_eq!(
        max_rate("30ms", Some("50ms")).1,
        "no endpoint received more than 1 requests in 0.001s (the 0.030s window less the 50ms \
         tolerance, 1ms at least)"
    );
}

#[test]
fn jitter_is_not_judged_under_a_tolerance() {
    let jittered = "{ exponential: { initial: 100ms, jitter: full, max_attempts: 4 } }";
    let s = |tolerance| {
        let mut yaml = format!(
            "version: 1\nname: jitter\nendpoints: {{ api: {{ script: [ {{ status: 503 }} ] }} }}\n\
             operation: {{ endpoint: api, calls: 6 }}\nclient: {jittered}\n\
             expect: {{ jitter: present }}\n"
        );
        if let Some(t) = tolerance {
            yaml.push_str(&format!("tolerance: {t}\n"));
        }
        Scenario::from_yaml_str(&yaml, "jitter.yaml").unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(judged(&s(None), "jitter").0, Judgement::Passed);
    assert_eq!(
        judged(&s(Some("1ms")), "jitter"),
        (
            Judgement::NotJudged,
            "the run is judged with a 1ms tolerance: its instants are not exact, so delays that \
             differ may differ by measurement noise alone and no two timelines are surely the \
             same; judge jitter on a run without one (`backend: sim`, no `tolerance`)"
                .to_owned()
        )
    );
}

#[test]
fn counts_are_not_widened() {
    let s = scenario(
        TWO_503S,
        EVERY_SECOND,
        "{ attempts: 2, total_attempts: 2 }",
        Some("1m"),
    );
    assert_eq!(judged(&s, "attempts").0, Judgement::Failed);
    assert_eq!(judged(&s, "total_attempts").0, Judgement::Failed);
}

#[test]
fn the_tolerance_defaults_by_backend_and_is_bounded() {
    let plain = scenario(TWO_503S, EVERY_SECOND, "{ attempts: 3 }", None);
    assert_eq!(plain.tolerance_ms(), 0);
    let mut real = plain.clone();
    real.backend = BackendKind::Real;
    assert_eq!(real.tolerance_ms(), 50);
    assert_eq!(Scenario::REAL_TOLERANCE, Millis::from_ms(50));
    let set = scenario(TWO_503S, EVERY_SECOND, "{ attempts: 3 }", Some("1m"));
    assert_eq!(set.tolerance_ms(), 60_000);
    assert!(set.unsupported().is_empty());

    let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                tolerance: 61s\n";
    let errors = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
    assert_eq!(
        errors.to_string(),
        "x.yaml:5:12 tolerance: `tolerance: 61s`, over the limit of the format, expected at \
         most 1m"
    );
}
