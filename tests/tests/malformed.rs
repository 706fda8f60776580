//! The malformed corpus: each `tests/malformed/<name>.yaml` fails to load with exactly the
//! errors in `tests/malformed/<name>.err` (`file:line:col path: message`, one per line).
//!
//! Regenerate the golden files with `RETRYLAB_BLESS=1 cargo test -p retrylab-tests --test
//! malformed`, then review the diff.

use std::path::{Path, PathBuf};

use retrylab::scenario::Scenario;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("malformed")
}

fn cases() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/malformed exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// What loading the file reports, with the file named relative to the workspace.
fn render(path: &Path) -> String {
    let name = format!(
        "tests/malformed/{}",
        path.file_name().expect("a file").to_string_lossy()
    );
    let bytes = std::fs::read(path).expect("readable case");
    // Cases may be deliberately broken UTF-8; loading reports that like any other error.
    let result = match String::from_utf8(bytes) {
        Ok(text) => Scenario::from_yaml_str(&text, &name),
        Err(_) => {
            let err = Scenario::load(path).expect_err("invalid UTF-8 must fail");
            let shown = err.to_string().replace(&path.display().to_string(), &name);
            return format!("{shown}\n");
        }
    };
    match result {
        Ok(_) => "(loaded without error)\n".to_string(),
        Err(errors) => {
            for e in &errors {
                assert!(e.line > 0 && e.column > 0, "unlocated error: {e}");
                assert!(!e.message.is_empty(), "empty message: {e}");
            }
            format!("{errors}\n")
        }
    }
}

#[test]
fn the_corpus_is_large_enough() {
    assert!(
        cases().len() >= 30,
        "only {} malformed cases",
        cases().len()
    );
}

#[test]
fn every_malformed_file_gives_its_golden_errors() {
    let bless = std::env::var_os("RETRYLAB_BLESS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for case in cases() {
        let actual = render(&case);
        let golden = case.with_extension("err");
        if bless {
            std::fs::write(&golden, &actual).expect("writable golden file");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}:\n--- expected\n{expected}--- actual\n{actual}",
                case.display()
            )),
            Err(_) => failures.push(format!(
                "{}: no golden file; run with RETRYLAB_BLESS=1\n--- actual\n{actual}",
                case.display()
            )),
        }
        assert!(
            !actual.starts_with("(loaded"),
            "{} loads: it is not malformed",
            case.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_golden_file_is_left_without_its_case() {
    for entry in std::fs::read_dir(corpus()).expect("tests/malformed exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|e| e == "err") {
            assert!(
                path.with_extension("yaml").exists(),
                "{} has no .yaml case",
                path.display()
            );
        }
    }
}
