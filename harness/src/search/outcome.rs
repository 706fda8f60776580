//! What a search came to.

use std::path::Path;

use super::failure::Failure;

/// What a search (or one shard of it) came to: how many cases it tried, the failure it
/// found, if any, and the invariants that none of its cases judged.
#[derive(Clone, Debug)]
#[must_use = "an outcome says whether the search passed"]
pub struct SearchOutcome {
    pub(crate) tried: u32,
    pub(crate) failure: Option<Failure>,
    pub(crate) never_judged: Vec<String>,
}

impl SearchOutcome {
    /// Cases tried, not counting shrinking.
    pub fn cases_tried(&self) -> u32 {
        self.tried
    }

    /// The smallest failing case, if a case failed.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// The invariants that no case judged (each case gave them nothing to judge, such as a
    /// `retry_after` where no case sent a `Retry-After`): they were never tested, and fail the
    /// search. Empty when a case failed, since the search stopped there.
    pub fn never_judged(&self) -> &[String] {
        &self.never_judged
    }

    /// Why the search failed although every case held: "`X` was never judged in N cases"
    /// for each invariant no case judged, one a line; `None` when there is none.
    pub fn never_judged_message(&self) -> Option<String> {
        if self.never_judged.is_empty() {
            return None;
        }
        let lines: Vec<String> = self
            .never_judged
            .iter()
            .map(|name| format!("`{name}` was never judged in {} cases", self.tried))
            .collect();
        Some(lines.join("\n"))
    }

    /// Whether every case held and every invariant was judged in at least one of them.
    pub fn passed(&self) -> bool {
        self.failure.is_none() && self.never_judged.is_empty()
    }

    /// Judges the outcome against a file's `must_fail` (empty: every case must hold), writing
    /// the regression file to `regressions` when a case failed unexpectedly. `Ok` with what to
    /// print when the outcome is as expected, else `Err` with why not.
    ///
    /// With `must_fail`, the smallest failing case must fail exactly those checks; it is
    /// expected, so no file is written.
    pub fn judge(&self, must_fail: &[String], regressions: &Path) -> Result<String, String> {
        let mut expected: Vec<&str> = must_fail.iter().map(String::as_str).collect();
        expected.sort_unstable();
        let Some(failure) = &self.failure else {
            if !expected.is_empty() {
                return Err(format!(
                    "must_fail lists {} but none of the {} cases of the search failed",
                    expected.join(", "),
                    self.tried
                ));
            }
            return match self.never_judged_message() {
                Some(message) => Err(message),
                None => Ok(format!("none of the {} cases failed", self.tried)),
            };
        };
        let mut failed = failure.failed_checks();
        failed.sort_unstable();
        if expected.is_empty() {
            return Err(format!(
                "the search found a failing case ({}), {}:\n{}",
                failed.join(", "),
                failure.write_and_describe(regressions),
                failure.regression()
            ));
        }
        if failed == expected {
            Ok(format!(
                "the smallest failing case fails {}, as must_fail expects:\n{}",
                failed.join(", "),
                failure.regression()
            ))
        } else {
            Err(format!(
                "must_fail lists {} but the smallest failing case failed {}:\n{}",
                expected.join(", "),
                failed.join(", "),
                failure.regression()
            ))
        }
    }
}
