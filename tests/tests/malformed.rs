//! The malformed corpus: each `tests/malformed/<name>.yaml` fails to load with exactly the
//! errors (`file:line:col path: message`, one per line) in the insta snapshot
//! `tests/tests/snapshots/malformed__errors@<name>.yaml.snap`.
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

#[test]
fn no_snapshot_is_left_without_its_case() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("malformed");
    for entry in std::fs::read_dir(tests.join("snapshots")).expect("tests/tests/snapshots exists") {
        let name = entry.expect("readable entry").file_name();
        let name = name.to_string_lossy();
        if let Some(case) = name
            .strip_prefix("malformed__errors@")
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
