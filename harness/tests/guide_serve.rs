//! The guide's recipe for `retrylab serve` with curl (docs/guide/other-languages.md), run as
//! the guide writes it: a shell
//! starts `serve` in the background, waits for the URL lines, runs curl, and ends with
//! serve's exit status. Real sockets and real time (about 3 s: curl waits out three
//! `Retry-After: 1`); skipped, saying why, on a machine without `sh` or curl.
#![cfg(feature = "cli")]

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The guide's shell block that runs `retrylab serve` for curl.
fn recipe(guide: &str) -> &str {
    let start = guide
        .find("```sh\nretrylab serve docs/examples/serve-retry-after.yaml")
        .expect("the guide's serve recipe");
    let body = &guide[start + "```sh\n".len()..];
    &body[..body.find("```").expect("the recipe's end")]
}

fn present(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_guide_serve_recipe_runs_and_passes() {
    if !present("curl", &["--version"]) || !present("sh", &["-c", "true"]) {
        eprintln!("skipped: the recipe needs `sh` and `curl` on the PATH");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guide = std::fs::read_to_string(root.join("docs/guide/other-languages.md"))
        .expect("the guide's chapter");
    let dir = std::env::temp_dir().join(format!("retrylab-guide-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    // The recipe names its file from the repository's root, and writes
    // served.txt where it runs.
    let _ = std::os::unix::fs::symlink(root.join("docs"), dir.join("docs"));
    let bin = Path::new(env!("CARGO_BIN_EXE_retrylab"))
        .parent()
        .expect("the binary's folder")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(recipe(&guide))
        .current_dir(&dir)
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A group of its own, so that a recipe past its time is killed with serve and curl.
        .process_group(0)
        .spawn()
        .expect("sh starts");
    let mut status = None;
    for _ in 0..600 {
        if let Some(done) = child.try_wait().expect("the recipe's status") {
            status = Some(done);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if status.is_none() {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status();
        let _ = child.wait();
    }
    let served = std::fs::read_to_string(dir.join("served.txt")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let status = status.unwrap_or_else(|| panic!("the recipe ran past 60 s:\n{served}"));
    assert!(status.success(), "the recipe failed ({status}):\n{served}");
    assert!(
        served.contains("RETRYLAB_URL_API=http://127.0.0.1:"),
        "{served}"
    );
    assert!(served.contains("timeline (4 attempts)"), "{served}");
}
