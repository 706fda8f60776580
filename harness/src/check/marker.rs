//! `must_fail: [...]` and `status: known_failure`: scenarios that demonstrate a defect.

use crate::report::{Judgement, Report, RunEnd, Verdict};
use crate::scenario::{Scenario, ScenarioStatus};

/// Rewrites the verdicts of a marked scenario:
/// - `must_fail: [checks]` passes only when exactly these checks fail and all others pass
///   (except in a file with `search:`, whose search it is for);
/// - `status: known_failure` passes while a check fails on a run that completed, and fails
///   with "now passes: remove the marker" once none does. A run that only went unjudged, or
///   was cut short, shows nothing of the known failure: its verdicts stay as they are.
pub(super) fn apply(scenario: &Scenario, report: &mut Report) {
    // A search file's `must_fail` names invariants its search must find failing; a plain run
    // of the file, unvaried, is judged by its own `expect:` alone.
    if !scenario.must_fail.is_empty() && scenario.search.is_none() {
        let expected: Vec<&str> = scenario.must_fail.iter().map(String::as_str).collect();
        // What each listed check that did not fail came to: passed, not judged, or absent.
        let mut missing: Vec<String> = Vec::new();
        for check in &expected {
            let verdict = report.verdicts.iter().find(|v| v.check == *check);
            match verdict.map(|v| v.judgement) {
                Some(Judgement::Failed) => {}
                Some(Judgement::Passed) => missing.push(format!("{check} passed")),
                Some(Judgement::NotJudged) => missing.push(format!("{check} was not judged")),
                None => missing.push(format!("{check} gave no verdict")),
            }
        }
        let mut verdicts = Vec::with_capacity(report.verdicts.len() + 1);
        for verdict in report.verdicts.drain(..) {
            // Only a real failure catches the defect: a check that was not judged caught
            // nothing.
            if expected.contains(&verdict.check.as_str()) && verdict.judgement == Judgement::Failed
            {
                // The defect was caught: that is this scenario's success.
                verdicts.push(Verdict::pass(
                    verdict.check,
                    format!("failed as must_fail expects: {}", verdict.message),
                ));
            } else {
                verdicts.push(verdict);
            }
        }
        if !missing.is_empty() {
            verdicts.push(Verdict::fail(
                "must_fail",
                format!(
                    "must_fail lists {} but {}: the defect this scenario demonstrates was not \
                     caught",
                    expected.join(", "),
                    missing.join(", ")
                ),
            ));
        }
        report.verdicts = verdicts;
    }
    if scenario.status == Some(ScenarioStatus::KnownFailure) {
        if report.passed() {
            report.verdicts.push(Verdict::fail(
                "known_failure",
                "now passes: remove the marker `status: known_failure`",
            ));
        } else {
            let failed: Vec<String> = report
                .verdicts
                .iter()
                .filter(|v| v.judgement == Judgement::Failed)
                .map(|v| v.check.clone())
                .collect();
            if report.end == RunEnd::Completed && !failed.is_empty() {
                report.verdicts = vec![Verdict::pass(
                    "known_failure",
                    format!("fails as known ({})", failed.join(", ")),
                )];
            } else {
                let unjudged: Vec<String> = report.failures().map(|v| v.check.clone()).collect();
                report.verdicts.push(Verdict::not_judged(
                    "known_failure",
                    format!(
                        "no check failed on a completed run ({} did not pass{}), so nothing \
                         shows the known failure is still there",
                        unjudged.join(", "),
                        if report.end == RunEnd::Completed {
                            ""
                        } else {
                            "; the run was cut short"
                        }
                    ),
                ));
            }
        }
    }
}
