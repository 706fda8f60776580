//! `retrylab run --format junit`: the runs as `JUnit` XML, which CI systems render.
//!
//! A test suite per folder, in the order the folders were first run; in it a test case per
//! file and seed, named `<file>@seed-<n>` with the folder as its class name. A failed run is
//! a `failure` whose message lists the checks that failed and whose text is the run's report
//! (verdicts, calls, timeline); a skipped file is `skipped` with why; a file that does not
//! load, or a seed that could not run, is an `error` with its errors. No times or timestamps:
//! the same scenarios and seeds give the same bytes.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::row::{Row, Status};

/// The XML of `rows`.
pub(crate) fn render(rows: &[Row]) -> Result<String, quick_junit::SerializeError> {
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    for row in rows {
        let (folder, file) = split(&row.file);
        let index = match suites.iter().position(|(name, _)| *name == folder) {
            Some(index) => index,
            None => {
                suites.push((folder.clone(), TestSuite::new(folder.as_str())));
                suites.len() - 1
            }
        };
        let name = match row.seed {
            Some(seed) => format!("{file}@seed-{seed}"),
            None => file,
        };
        let mut case = TestCase::new(name, status(row));
        case.set_classname(folder);
        suites[index].1.add_test_case(case);
    }
    let mut report = Report::new("retrylab");
    report.add_test_suites(suites.into_iter().map(|(_, suite)| suite));
    report.to_string()
}

/// The folder a file is in as shown (`scenarios/http`, or `.` for a bare file name), and
/// its file name.
fn split(display: &str) -> (String, String) {
    let path = std::path::Path::new(display);
    let folder = path
        .parent()
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".to_owned());
    let file = path
        .file_name()
        .map_or_else(|| display.to_owned(), |f| f.to_string_lossy().into_owned());
    (folder, file)
}

/// The test case's outcome: the failed verdicts of a failure, why of a skip, the errors of
/// an invalid file.
fn status(row: &Row) -> TestCaseStatus {
    match row.status {
        Status::Passed => TestCaseStatus::success(),
        Status::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(row.failed.join("; "));
            status.set_type("verdict");
            if let Some(summary) = &row.summary {
                status.set_description(summary.as_str());
            }
            status
        }
        Status::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(row.detail.as_str());
            status
        }
        Status::Invalid => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(row.detail.as_str());
            status.set_type("invalid scenario");
            if let Some(summary) = &row.summary {
                status.set_description(summary.as_str());
            }
            status
        }
    }
}
