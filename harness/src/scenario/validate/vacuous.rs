//! Expectations no run can fail: the warnings that stand beside the contradictions
//! (expectations no run can meet, `contradictions.rs`). A check that passes whatever the
//! client does tests nothing, and a file that reads as holding a client to a rule would hold
//! it to none.

use crate::scenario::Millis;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::values::BoundSpec;
use crate::scenario::yaml::error::ScenarioError;

impl Scenario {
    /// Warnings for the expectations of this scenario that no run can fail: an `expect:`
    /// that holds no check, an empty `gaps` list, and a lower timing bound the `tolerance`
    /// swallows (with `tolerance: 1m`, `gaps_each: { at_least: 30s }` passes a gap of 0).
    pub(crate) fn vacuous(&self) -> Vec<ScenarioError> {
        let mut found = Vec::new();
        if self.locate("expect").is_some() && self.expect.is_empty() {
            found.push(
                self.error_at("expect", "`expect` holds no check, so every run passes it")
                    .with_expected(
                        "the checks this scenario should hold (`outcome`, `attempts`, \
                         `gaps`, ...), or no `expect` at all",
                    ),
            );
        }
        if self.locate("expect.gaps").is_some() && self.expect.gaps.is_empty() {
            found.push(
                self.error_at("expect.gaps", "an empty `gaps` list judges no gap")
                    .with_expected("a bound for each gap to judge, or no `gaps`"),
            );
        }
        let tolerance = self.tolerance.unwrap_or(Millis::from_ms(0));
        if !tolerance.is_zero() {
            let mut bounds: Vec<(String, &BoundSpec)> = self
                .expect
                .gaps
                .iter()
                .enumerate()
                .map(|(i, b)| (format!("expect.gaps[{i}]"), b))
                .collect();
            bounds.extend(
                self.expect
                    .gaps_each
                    .iter()
                    .map(|b| ("expect.gaps_each".to_owned(), b)),
            );
            bounds.extend(
                self.expect
                    .total_time
                    .iter()
                    .map(|b| ("expect.total_time".to_owned(), b)),
            );
            for (path, bound) in bounds {
                let (lower, upper) = match bound {
                    BoundSpec::AtLeast(lower) => (*lower, false),
                    BoundSpec::Within(range) => (range.min, true),
                    BoundSpec::AtMost(_) => continue,
                };
                if lower.is_zero() || tolerance < lower {
                    continue;
                }
                let what = if upper {
                    "its lower bound cannot fail"
                } else {
                    "the check cannot fail"
                };
                found.push(
                    self.error_at(
                        &path,
                        format!(
                            "with `tolerance: {tolerance}`, a duration of 0 meets the lower \
                             bound {lower}: {what}"
                        ),
                    )
                    .with_expected(
                        "a tolerance below the bound (it is slack for measurement, not the rule)",
                    ),
                );
            }
        }
        found
    }
}
