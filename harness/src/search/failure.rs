//! The failure a search found: the smallest failing case and what failed in it.

use std::path::Path;

use crate::report::Verdict;
use crate::scenario::Scenario;

/// The smallest failing case of a search, shrunk from the first failing case.
///
/// Its scenario is the base with the varied parts as the case drew them (shrunk), the
/// invariants' expectations as `expect:`, and the run's seed as `seed:`.
/// [`Failure::regression`] is the file to commit; [`Failure::write_regression`] writes it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub(crate) scenario: Scenario,
    pub(crate) verdicts: Vec<Verdict>,
    /// The checks the smallest case judged (passed or failed): the regression file expects
    /// only these.
    pub(crate) judged: std::collections::BTreeSet<String>,
    pub(crate) case: u32,
    pub(crate) search_seed: u64,
    pub(crate) shrink_steps: u32,
    pub(crate) closures: Vec<String>,
}

impl Failure {
    /// Writes the regression file to `dir` and says so: "regression written to `<path>`", or
    /// why it could not be written.
    pub fn write_and_describe(&self, dir: &Path) -> String {
        match self.write_regression(dir) {
            Ok(path) => format!("regression written to {}", path.display()),
            Err(e) => format!("the regression was not written to {}: {e}", dir.display()),
        }
    }

    /// The smallest failing case.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Its failed verdicts.
    pub fn verdicts(&self) -> &[Verdict] {
        &self.verdicts
    }

    /// The names of its failed checks, in the report's order.
    pub fn failed_checks(&self) -> Vec<&str> {
        self.verdicts.iter().map(|v| v.check.as_str()).collect()
    }

    /// The index (from 0) of the case it was shrunk from: the first failing case of the
    /// whole search, whatever the shard.
    pub fn case(&self) -> u32 {
        self.case
    }

    /// The seed of the search that found it.
    pub fn search_seed(&self) -> u64 {
        self.search_seed
    }

    /// How many shrinking steps were tried.
    pub fn shrink_steps(&self) -> u32 {
        self.shrink_steps
    }

    /// The script of the operation's endpoint in the smallest case: the generated steps and
    /// the final one; `None` when that endpoint has no script (a `vary:` search that left it
    /// as the base had it).
    pub fn script(&self) -> Option<&[crate::scenario::StepSpec]> {
        self.scenario
            .operation_endpoint()
            .and_then(|e| e.script.as_deref())
    }

    /// Whether only invariants written in Rust failed: the file, which cannot hold them,
    /// would show nothing of the failure.
    pub fn only_closures_failed(&self) -> bool {
        self.verdicts
            .iter()
            .all(|v| self.closures.contains(&v.check))
    }
}
