//! The failure a search found: the smallest failing case and what failed in it.

use std::path::{Path, PathBuf};

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
    /// Writes the regression file to `dir` and says so: "regression written to <path>", or
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

    /// The regression file's name: the base scenario's name as lowercase words joined by
    /// `-`, then the search seed.
    pub fn file_name(&self) -> String {
        super::regression::file_name(&self.scenario.name, self.search_seed)
    }

    /// The regression file: the smallest case as a complete v1 scenario with
    /// `status: known_failure`, headed by comments giving the search, its seed and the
    /// failed verdicts. The same search seed gives the same text, byte for byte.
    /// [`Failure::write_regression`] heads it with the editor's schema line too, relative to
    /// where it writes.
    pub fn regression(&self) -> String {
        super::regression::text(self, None)
    }

    /// Writes [`Failure::regression`] to `dir` (created if missing) under
    /// [`Failure::file_name`], headed by the editor's schema line when `dir` or a folder above
    /// it holds `scenarios/schema.json`, and returns its path.
    ///
    /// Refuses (`InvalidInput`) when [only invariants written in Rust
    /// failed](Failure::only_closures_failed): marked `known_failure`, such a file would say
    /// "now passes: remove the marker" while the defect is still there.
    pub fn write_regression(&self, dir: &Path) -> std::io::Result<PathBuf> {
        if self.only_closures_failed() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "only invariants written in Rust failed ({}), which a scenario file cannot \
                     check: it would pass as if the defect were fixed",
                    self.failed_checks().join(", ")
                ),
            ));
        }
        std::fs::create_dir_all(dir)?;
        let path = dir.join(self.file_name());
        let schema = super::regression::schema_from(dir);
        std::fs::write(&path, super::regression::text(self, schema.as_deref()))?;
        Ok(path)
    }
}
