//! `retrylab run --format junit`: the runs as `JUnit` XML, which CI systems render.
//!
//! A test suite per folder, in the order the folders were first run; in it a test case per
//! file and seed, named `<file>@seed-<n>` with the folder as its class name. A failed run is
//! a `failure` whose message lists the checks that failed and whose text is the run's report
//! (verdicts, calls, timeline); a skipped file is `skipped` with why; a file that does not
//! load, or a seed that could not run, is an `error` with its errors. A run's `system-out` is
//! its row (attempts, calls, its end and the client that judged it). No times or timestamps:
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
                suites.push((folder.clone(), TestSuite::new(xml_text(&folder))));
                suites.len() - 1
            }
        };
        let name = match row.seed {
            Some(seed) => format!("{file}@seed-{seed}"),
            None => file,
        };
        let mut case = TestCase::new(xml_text(&name), status(row));
        case.set_classname(xml_text(&folder));
        if matches!(row.status, Status::Passed | Status::Failed) {
            // What the run came to and which client judged it, as the human row says.
            match &row.output {
                Some((out, err)) => {
                    case.set_system_out(xml_text(&format!("{}\n{out}", row.detail)));
                    case.set_system_err(xml_text(err));
                }
                None => {
                    case.set_system_out(xml_text(&row.detail));
                }
            }
        }
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
            status.set_message(xml_text(&row.failed.join("; ")));
            status.set_type("verdict");
            if let Some(summary) = &row.summary {
                status.set_description(xml_text(summary));
            }
            status
        }
        Status::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(xml_text(&row.detail));
            status
        }
        Status::Invalid => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(xml_text(&row.detail));
            status.set_type("invalid scenario");
            if let Some(summary) = &row.summary {
                status.set_description(xml_text(summary));
            }
            status
        }
    }
}

/// `text` with the characters XML 1.0 cannot hold, even escaped (control characters but tab,
/// line feed and carriage return), written as `\u{..}`: a response body or a file name may
/// carry them, and one would make the whole report unreadable to a CI system.
fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let allowed = matches!(c, '\t' | '\n' | '\r')
            || matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
        if allowed {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_cannot_hold_are_escaped() {
        assert_eq!(xml_text("a\u{1}b\tc\u{FFFE}"), "a\\u{1}b\tc\\u{fffe}");
        let row = Row {
            name: "x".to_owned(),
            file: "t/x\u{7}.yaml".to_owned(),
            seed: Some(0),
            status: Status::Failed,
            detail: String::new(),
            output: None,
            summary: Some("body \u{0}".to_owned()),
            failed: vec!["FAIL outcome: \u{1b}[31m".to_owned()],
            fleet: None,
            json: None,
        };
        let xml = render(&[row]).expect("XML");
        assert!(xml.contains("name=\"x\\u{7}.yaml@seed-0\""), "{xml}");
        assert!(
            xml.contains("message=\"FAIL outcome: \\u{1b}[31m\""),
            "{xml}"
        );
        assert!(xml.contains("body \\u{0}"), "{xml}");
        assert!(
            !xml.chars()
                .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        );
    }
}
