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
    pub(crate) case: u32,
    pub(crate) search_seed: u64,
    pub(crate) shrink_steps: u32,
    pub(crate) closures: Vec<String>,
}

impl Failure {
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
    /// the final one.
    pub fn script(&self) -> &[crate::scenario::StepSpec] {
        self.scenario
            .operation_endpoint()
            .and_then(|e| e.script.as_deref())
            .unwrap_or(&[])
    }

    /// The regression file's name: the base scenario's name as lowercase words joined by
    /// `-`, then the search seed.
    pub fn file_name(&self) -> String {
        super::regression::file_name(&self.scenario.name, self.search_seed)
    }

    /// The regression file: the smallest case as a complete v1 scenario with
    /// `status: known_failure`, headed by comments giving the search, its seed and the
    /// failed verdicts. The same search seed gives the same text, byte for byte.
    pub fn regression(&self) -> String {
        super::regression::text(self)
    }

    /// Writes [`Failure::regression`] to `dir` (created if missing) under
    /// [`Failure::file_name`], and returns its path.
    pub fn write_regression(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(self.file_name());
        std::fs::write(&path, self.regression())?;
        Ok(path)
    }
}
