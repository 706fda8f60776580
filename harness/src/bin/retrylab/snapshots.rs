//! `retrylab run --update-snapshots`: each passing run's snapshot written where the scenario
//! suite compares it.

use std::path::PathBuf;

use retrylab::Report;

/// The insta header of a scenario's snapshot, as the suite's assertion writes it: insta
/// compares what follows it, so the file reads back as the snapshot the suite expects.
const HEADER: &str = "---\nsource: harness/src/report/snapshot.rs\n---\n";

/// What the runs of one command line did to snapshots.
pub(crate) struct Snapshots {
    dir: PathBuf,
    written: Vec<PathBuf>,
    unchanged: usize,
    /// Runs with a snapshot that failed: theirs is left as it was.
    not_written: Vec<String>,
    errors: Vec<String>,
}

impl Snapshots {
    /// Snapshots written into `dir`.
    pub(crate) fn new(dir: PathBuf) -> Snapshots {
        Snapshots {
            dir,
            written: Vec::new(),
            unchanged: 0,
            not_written: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Writes the snapshot of `report`, a run of the file shown as `file`, when it has one
    /// (the file sets `snapshot: true` and the run used its snapshot seed) and every verdict
    /// passed: a failed run's snapshot would record the failure as the expected result.
    pub(crate) fn record(&mut self, file: &str, report: &Report) {
        let Some(name) = report.snapshot_name() else {
            return;
        };
        if !report.passed() {
            self.not_written
                .push(format!("{file} (seed {}): the run failed", report.seed()));
            return;
        }
        let path = self.dir.join(format!("{name}.snap"));
        let mut body = report.snapshot_text();
        if !body.ends_with('\n') {
            body.push('\n');
        }
        // Compared as insta compares: the body, whatever the header says (older snapshots
        // name another source file), so a snapshot that holds is left as it is.
        if std::fs::read_to_string(&path).is_ok_and(|old| self::body(&old) == Some(&body)) {
            self.unchanged += 1;
            return;
        }
        let text = format!("{HEADER}{body}");
        match std::fs::create_dir_all(&self.dir).and_then(|()| std::fs::write(&path, text)) {
            Ok(()) => self.written.push(path),
            Err(error) => self
                .errors
                .push(format!("{}: cannot write: {error}", path.display())),
        }
    }

    /// What was done, a line each, then the counts.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for path in &self.written {
            lines.push(format!("snapshot written: {}", path.display()));
        }
        for why in &self.not_written {
            lines.push(format!("snapshot not written: {why}"));
        }
        for error in &self.errors {
            lines.push(format!("error: snapshot {error}"));
        }
        let total =
            self.written.len() + self.unchanged + self.not_written.len() + self.errors.len();
        lines.push(if total == 0 {
            "snapshots: none to update (no run of a file with `snapshot: true` at its seed)"
                .to_owned()
        } else {
            format!(
                "snapshots in {}: {} written, {} unchanged, {} not written (failed runs), {} \
                 errors",
                self.dir.display(),
                self.written.len(),
                self.unchanged,
                self.not_written.len(),
                self.errors.len()
            )
        });
        lines
    }

    /// Whether a snapshot could not be written.
    pub(crate) fn failed(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// What follows the header of a `.snap` file (`---`, metadata lines, `---`).
fn body(snap: &str) -> Option<&str> {
    let rest = snap.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    Some(&rest[end + "\n---\n".len()..])
}
