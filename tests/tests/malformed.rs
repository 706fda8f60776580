//! The malformed corpus: each `tests/malformed/<name>.yaml` fails to load with exactly the
//! errors (`file:line:col path: message`, one per line) in the insta snapshot
//! `tests/tests/snapshots/malformed__errors@<name>.yaml.snap`.
//!
//! Beside each, `malformed__drawn@<name>.yaml.snap` is what `retrylab check --format human`
//! prints for it: every error drawn under its source line (`retrylab::diagnostic`), with
//! what was expected and the did-you-mean.
//!
//! A changed message fails the test and leaves a `.snap.new` beside the snapshot: review it
//! with `cargo insta review` (or accept every change with `INSTA_UPDATE=always cargo test -p
//! retrylab-tests --test malformed`), then review the diff. A new case gets its snapshot the
//! same way.

use std::path::{Path, PathBuf};

use retrylab::scenario::Scenario;

/// What loading the file reports, with the file named relative to the workspace.
fn render(path: &Path) -> String {
    let name = format!(
        "tests/malformed/{}",
        path.file_name().expect("a file").to_string_lossy()
    );
    let bytes = std::fs::read(path).expect("readable case");
    // Cases may be deliberately broken UTF-8; loading reports that like any other error.
    let result = Scenario::from_yaml_bytes(&bytes, &name);
    match result {
        Ok(_) => "(loaded without error)".to_string(),
        Err(errors) => {
            for e in &errors {
                assert!(e.line > 0 && e.column > 0, "unlocated error: {e}");
                assert!(!e.message.is_empty(), "empty message: {e}");
            }
            errors.to_string()
        }
    }
}

#[test]
fn every_malformed_file_gives_its_snapshotted_errors() {
    let mut cases = 0;
    insta::glob!("../malformed", "*.yaml", |path| {
        cases += 1;
        let errors = render(path);
        assert!(
            !errors.starts_with("(loaded"),
            "{} loads: it is not malformed",
            path.display()
        );
        insta::assert_snapshot!("errors", errors);
    });
    assert!(cases >= 30, "only {cases} malformed cases");
}

/// The errors of the file at `path` drawn as `retrylab check --format human` draws them.
fn drawn(path: &Path) -> String {
    let name = format!(
        "tests/malformed/{}",
        path.file_name().expect("a file").to_string_lossy()
    );
    let bytes = std::fs::read(path).expect("readable case");
    let errors = Scenario::from_yaml_bytes(&bytes, &name).expect_err("a malformed case");
    let source = String::from_utf8_lossy(&bytes);
    retrylab::diagnostic::render(&errors, &source, &retrylab::diagnostic::Style::plain())
}

#[test]
fn every_malformed_file_is_drawn_with_its_source_line() {
    let (mut cases, mut snippets, mut suggestions) = (0, 0, 0);
    insta::glob!("../malformed", "*.yaml", |path| {
        cases += 1;
        let text = drawn(path);
        // Every error is drawn: as many headings as errors, each under its file's name.
        let bytes = std::fs::read(path).expect("readable case");
        let errors = Scenario::from_yaml_bytes(&bytes, "f").expect_err("a malformed case");
        assert_eq!(text.matches("  × ").count(), errors.len(), "{text}");
        snippets += usize::from(text.contains("╭─[tests/malformed/"));
        suggestions += usize::from(text.contains("help: did you mean `"));
        assert!(
            !text.contains('\u{1b}'),
            "colour in a plain drawing: {text}"
        );
        insta::assert_snapshot!("drawn", text);
    });
    assert!(cases >= 30, "only {cases} malformed cases");
    // Nearly every case has a line to show, and the misspellings a suggestion.
    assert!(
        snippets * 10 >= cases * 9,
        "{snippets} of {cases} cases with a snippet"
    );
    assert!(
        suggestions >= 10,
        "only {suggestions} cases with a did-you-mean"
    );
}

#[test]
fn no_snapshot_is_left_without_its_case() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("malformed");
    for entry in std::fs::read_dir(tests.join("snapshots")).expect("tests/tests/snapshots exists") {
        let name = entry.expect("readable entry").file_name();
        let name = name.to_string_lossy();
        if let Some(case) = name
            .strip_prefix("malformed__errors@")
            .or_else(|| name.strip_prefix("malformed__drawn@"))
            .and_then(|n| n.strip_suffix(".snap"))
        {
            let case: PathBuf = corpus.join(case);
            assert!(
                case.exists(),
                "tests/tests/snapshots/{name} has no case {}: delete the snapshot",
                case.display()
            );
        }
    }
}
