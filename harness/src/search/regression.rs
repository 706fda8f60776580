//! The regression file of a failure: a complete v1 scenario marked `known_failure`.

use std::path::{Path, PathBuf};

use crate::scenario::{Scenario, ScenarioStatus};

use super::failure::Failure;

impl Failure {
    /// The regression file's name: the base scenario's name as lowercase words joined by
    /// `-`, then the search seed.
    pub fn file_name(&self) -> String {
        file_name(&self.scenario.name, self.search_seed)
    }

    /// The regression file: the smallest case as a complete v1 scenario with
    /// `status: known_failure`, headed by comments giving the search, its seed and the
    /// failed verdicts. The same search seed gives the same text, byte for byte.
    /// [`Failure::write_regression`] heads it with the editor's schema line too, relative to
    /// where it writes.
    pub fn regression(&self) -> String {
        text(self, None)
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
        let schema = schema_from(dir);
        std::fs::write(&path, text(self, schema.as_deref()))?;
        Ok(path)
    }
}

/// `<name as lowercase words joined by ->-seed-<seed>.yaml`.
pub(crate) fn file_name(name: &str, seed: u64) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "search" } else { slug };
    format!("{slug}-seed-{seed}.yaml")
}

/// The path of the repository's `scenarios/schema.json` relative to the folder `dir`: the
/// first folder holding `scenarios/schema.json` among `dir` and its parents, `..` for each
/// level climbed. `None` when there is none (a folder outside the repository): the file
/// then has no schema line rather than one that points nowhere.
pub(crate) fn schema_from(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    for (up, folder) in dir.ancestors().enumerate() {
        if folder.join("scenarios").join("schema.json").is_file() {
            return Some(format!("{}scenarios/schema.json", "../".repeat(up)));
        }
    }
    None
}

/// The file: the editor's schema line when `schema` (relative to the file) is known,
/// comments (the search, the seeds, the failed verdicts), then the scenario.
pub(crate) fn text(failure: &Failure, schema: Option<&str>) -> String {
    let scenario = scenario(failure);
    let mut out = schema
        .map(|path| format!("# yaml-language-server: $schema={path}\n"))
        .unwrap_or_default();
    out += &format!(
        "# A regression found by retrylab's property search: case {} of search seed {}, \
         shrunk in {} steps.\n# The run's seed: {}. The client failed:\n",
        failure.case, failure.search_seed, failure.shrink_steps, failure.scenario.seed
    );
    for verdict in &failure.verdicts {
        let mut lines = verdict.message.lines();
        let first = lines.next().unwrap_or("");
        out.push_str(&format!("#   {}: {first}\n", verdict.check));
        for line in lines {
            out.push_str(&format!("#     {line}\n"));
        }
    }
    let unwritten: Vec<&str> = failure
        .verdicts
        .iter()
        .map(|v| v.check.as_str())
        .filter(|check| failure.closures.iter().any(|c| c == check))
        .collect();
    if unwritten.len() == failure.verdicts.len() {
        out.push_str(&format!(
            "# Only invariants written in Rust failed ({}): they are not part of this file, \
             so it shows nothing of the failure.\n",
            unwritten.join(", ")
        ));
    } else if !unwritten.is_empty() {
        out.push_str(&format!(
            "# Invariants written in Rust failed too, and are not part of this file: {}.\n",
            unwritten.join(", ")
        ));
    }
    let dropped = unjudged_expectations(failure);
    if !dropped.is_empty() {
        out.push_str(&format!(
            "# Not expected here, since this case gives them nothing to judge: {}.\n",
            dropped.join(", ")
        ));
    }
    out.push_str(
        "# It passes while the defect is there; once fixed it fails with \"now passes: \
         remove the marker\".\n",
    );
    out.push_str(&scenario.to_yaml());
    out
}

/// The invariants' checks that the smallest case did not judge: left out of its `expect:`,
/// where they would be "not judged" once the defect is fixed, rather than "now passes".
fn unjudged_expectations(failure: &Failure) -> Vec<&'static str> {
    failure
        .scenario
        .expect
        .check_names()
        .into_iter()
        .filter(|name| !failure.judged.contains(*name))
        .collect()
}

/// The smallest case as the file holds it: marked `known_failure`, its name saying it is a
/// regression, expecting only the checks it judged.
fn scenario(failure: &Failure) -> Scenario {
    let mut s = failure.scenario.clone();
    for name in unjudged_expectations(failure) {
        s.expect = s.expect.without(name);
    }
    s.status = Some(ScenarioStatus::KnownFailure);
    s.name = format!("{} (search regression)", failure.scenario.name);
    // Short enough for the YAML emitter's plain style (a longer string quotes them all).
    s.description = Some(format!(
        "Case {} of search seed {}, shrunk; see the comments above.",
        failure.case, failure.search_seed
    ));
    s
}
