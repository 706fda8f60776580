//! Reading a report for a pinned-verdict test (`tests/clients.rs`, `tests/reqwest.rs`,
//! `tests/aws.rs`, `tests/real_clients.rs`): which checks ran, which failed as `must_fail`
//! expects, their messages, and the instants of the attempts.
//!
//! These helpers panic on what a test must not meet (a scenario that does not load, a check
//! that did not run, an attempt without an end): a panic is the test's failure, with the
//! report's summary where there is one.

use retrylab::trace::CallResult;
use retrylab::{Judgement, Report, Scenario};

/// `file` of `scenarios/clients/`, loaded.
pub fn client_scenario(file: &str) -> Scenario {
    let path = format!("{}/../scenarios/clients/{file}", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// `file` of `scenarios/real/` (the black-box clients on the real backend), loaded.
pub fn real_scenario(file: &str) -> Scenario {
    let path = format!("{}/../scenarios/real/{file}", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The checks that failed as the scenario's `must_fail` expects (they count as passed).
pub fn caught(report: &Report) -> Vec<&str> {
    report
        .verdicts()
        .iter()
        .filter(|v| v.passed() && v.message.starts_with("failed as must_fail expects"))
        .map(|v| v.check.as_str())
        .collect()
}

/// Every verdict, by check name: the checks a scenario ran.
pub fn checks(report: &Report) -> Vec<&str> {
    report.verdicts().iter().map(|v| v.check.as_str()).collect()
}

/// The message of `check`'s verdict.
pub fn message<'a>(report: &'a Report, check: &str) -> &'a str {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .map(|v| v.message.as_str())
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

/// When each attempt of the run started (ms), in order.
pub fn starts(report: &Report) -> Vec<u64> {
    report.trace().attempts.iter().map(|a| a.start_ms).collect()
}

/// The gap before each retry (ms): start of an attempt minus the end of the one before it,
/// within each call.
pub fn gaps(report: &Report) -> Vec<u64> {
    let attempts = &report.trace().attempts;
    attempts
        .windows(2)
        .filter(|w| w[0].call_id == w[1].call_id)
        .map(|w| w[1].start_ms - w[0].end_ms.expect("the attempt ended"))
        .collect()
}

/// The gaps of each call of a run (ms), call by call.
pub fn gaps_per_call(report: &Report) -> Vec<Vec<u64>> {
    let attempts = &report.trace().attempts;
    report
        .trace()
        .calls
        .iter()
        .map(|call| {
            let of_call: Vec<_> = attempts
                .iter()
                .filter(|a| a.call_id == call.call_id)
                .collect();
            of_call
                .windows(2)
                .map(|w| w[1].start_ms - w[0].end_ms.expect("the attempt ended"))
                .collect()
        })
        .collect()
}

/// The first call's outcome and end.
pub fn call0(report: &Report) -> (&CallResult, Option<u64>) {
    let call = &report.trace().calls[0];
    (&call.result, call.end_ms)
}

/// A call's failure, as the trace writes it (the client's error, `Debug`-formatted).
pub fn failure(text: &str) -> CallResult {
    CallResult::Failure(text.to_owned())
}

/// `file` of `scenarios/clients/` with `calls` calls that each meet the script from its
/// start, expecting `jitter: present` only.
pub fn jitter_scenario(file: &str, calls: u32) -> Scenario {
    let scenario = client_scenario(file);
    let mut scenario = crate::repeat::from_the_start(scenario, calls);
    scenario.expect = retrylab::prelude::expect().jitter_present();
    scenario.must_fail.clear();
    scenario
}

/// The `jitter` verdict: its judgement and message.
pub fn jitter(report: &Report) -> (Judgement, &str) {
    let v = report
        .verdicts()
        .iter()
        .find(|v| v.check == "jitter")
        .unwrap_or_else(|| panic!("no jitter verdict:\n{}", report.summary()));
    (v.judgement, v.message.as_str())
}
