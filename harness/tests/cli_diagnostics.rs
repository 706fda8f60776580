//! `retrylab check --format human`: errors and warnings drawn under their source lines
//! (feature `cli`, which brings `diagnostics`).
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use retrylab::diagnostic::{Style, render, render_warnings};
use retrylab::scenario::Scenario;

/// The malformed corpus of the tests crate.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed")
}

fn check(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("check")
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("retrylab runs")
}

/// Asked for, the drawing is what the library draws, with the snippet, the label and the
/// did-you-mean, and without colour when not on a terminal.
#[test]
fn check_draws_an_error_under_its_field() {
    let file = corpus().join("client-param-typo.yaml");
    let output = check(&["--format".as_ref(), "human".as_ref(), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = file.display().to_string();
    let errors = Scenario::load_as(&file, &shown).expect_err("a malformed file");
    let source = std::fs::read_to_string(&file).expect("the file");
    assert_eq!(stderr, render(&errors, &source, &Style::plain()));
    assert!(stderr.contains(" 10 │     intial: 100ms\n"), "{stderr}");
    assert!(stderr.contains("    ·     ───┬──\n"), "{stderr}");
    assert!(
        stderr.contains("╰── expected one of `initial`, "),
        "{stderr}"
    );
    assert!(stderr.contains("help: did you mean `initial`?"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour off a terminal: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout,
        format!("error {shown}\n1 files, 1 with errors, 0 skipped\n")
    );
}

/// Off a terminal and unasked, errors stay one line each: scripts and goldens read them.
#[test]
fn check_prints_one_line_per_error_off_a_terminal() {
    let file = corpus().join("client-param-typo.yaml");
    let output = check(&[file.as_os_str()]);
    let short = check(&["--format".as_ref(), "short".as_ref(), file.as_os_str()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = file.display().to_string();
    let errors = Scenario::load_as(&file, &shown).expect_err("a malformed file");
    assert_eq!(stderr, format!("{errors}\n"));
    assert!(stderr.starts_with(&format!("{shown}:10:5 client.exponential.intial: ")));
    assert_eq!(short.stderr, output.stderr);
}

/// The whole corpus: each file's errors drawn in turn, in the order the files are listed.
#[test]
fn check_draws_the_malformed_corpus() {
    let folder = corpus();
    let output = check(&["--format".as_ref(), "human".as_ref(), folder.as_os_str()]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut expected = String::new();
    let mut files = 0;
    for line in stdout.lines() {
        let Some(shown) = line.strip_prefix("error ") else {
            continue;
        };
        files += 1;
        // A folder's files are named from the folder's own name: `malformed/<file>`.
        let path = folder.join("..").join(shown);
        let errors = Scenario::load_as(&path, shown).expect_err("a malformed file");
        let source = String::from_utf8_lossy(&std::fs::read(&path).expect("the file")).into_owned();
        expected.push_str(&render(&errors, &source, &Style::plain()));
    }
    assert!(files >= 100, "{files} files with errors:\n{stdout}");
    assert_eq!(stderr, expected);
    assert!(stdout.ends_with(&format!("{files} files, {files} with errors, 0 skipped\n")));
}

/// Warnings are drawn too, on standard output, marked as warnings.
#[test]
fn check_draws_warnings() {
    let dir = std::env::temp_dir().join(format!("retrylab-drawn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("too-many.yaml");
    let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nclient: { exponential: { max_attempts: 3 } }\n\
                expect: { attempts: 4 }\n";
    std::fs::write(&file, yaml).expect("the scenario file");
    let output = check(&["--format".as_ref(), "human".as_ref(), file.as_os_str()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let shown = file.display().to_string();
    let warnings = Scenario::from_yaml_str(yaml, &shown)
        .expect("a sound scenario")
        .warnings();
    let drawn = render_warnings(&warnings, yaml, &Style::plain());
    assert_eq!(
        stdout,
        format!("ok    {shown}\n{drawn}1 files, 0 with errors, 0 skipped\n")
    );
    assert!(drawn.contains(" 6 │ expect: { attempts: 4 }\n"), "{drawn}");
    assert!(drawn.starts_with("  ⚠ expect.attempts: "), "{drawn}");
}

/// A failed run names its offending attempts: each call a failed verdict names, its
/// attempts, the one a finding is about marked `>` with what was found under it.
#[test]
fn run_marks_the_offending_attempts() {
    let dir = std::env::temp_dir().join(format!("retrylab-offending-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("slow.yaml");
    std::fs::write(
        &file,
        "version: 1\nname: slow\nendpoints: { api: { script: [ { status: 503, times: 2 }, \
         { status: 200 } ] } }\noperation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 3 } }\n\
         expect: { conforms_to: { fixed: { delay: 200ms } } }\n",
    )
    .expect("the scenario file");
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("run")
        .arg(&file)
        .env_remove("NO_COLOR")
        .output()
        .expect("retrylab runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let block = "offending attempts:\n  call 0\n      t=0.000s  #1  GET /  -> 503  conn 1 new  \
                 => retry in 0.100s\n    > t=0.100s  #2  GET /  -> 503  conn 1 reused  gap \
                 0.100s  => retry in 0.100s\n        conforms_to: call 0: attempt 2 started \
                 0.100s after the end of attempt 1, a 503 (needed exactly 0.200s)\n    > \
                 t=0.200s  #3  GET /  -> 200  conn 1 reused  gap 0.100s  => stop: success\n        \
                 conforms_to: call 0: attempt 3 started 0.100s after the end of attempt 2, a 503 \
                 (needed exactly 0.200s)\n";
    assert!(stdout.contains(block), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "colour off a terminal: {stdout}"
    );
}
