//! `retrylab conformance` and `retrylab run --profile`: client profiles applied to fault
//! files, the table of verdicts written, and a stale table caught. The clients here are
//! the reference client's policies and `sh`, so nothing needs installing.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder of files, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn with(name: &str, files: &[(&str, &str)]) -> Folder {
        let dir = std::env::temp_dir().join(format!("retrylab-conf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/"))).expect("a folder");
            std::fs::write(&file, text).expect("a file");
        }
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const BURST: &str = "version: 1\nname: a 503 burst\n\
    endpoints: { api: { script: [ { status: 503 } ] } }\noperation: { endpoint: api }\n";

const POST: &str = "version: 1\nname: a POST's 503\n\
    endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
    operation: { endpoint: api, method: POST }\n";

/// Documents four attempts 10ms apart, of any method; keeps them.
const KEEPS: &str = "version: 1\nname: keeps\nlanguage: Rust\nlibrary: retrylab fixed\n\
    client: { fixed: { delay: 10ms, max_attempts: 4 } }\n\
    documented:\n  conforms_to: { fixed: { delay: 10ms, max_attempts: 4 } }\n\
    \x20 promises: { burst: 'four attempts', post: 'a POST is retried as a GET is' }\n";

/// Documents three attempts but makes four, and retries a POST.
const BREAKS: &str = "version: 1\nname: breaks\nlanguage: Rust\nlibrary: retrylab fixed\n\
    client: { fixed: { delay: 10ms, max_attempts: 4 } }\n\
    documented:\n  conforms_to: { fixed: { delay: 10ms, max_attempts: 3 } }\n  methods: [GET]\n\
    \x20 promises: { burst: 'three attempts' }\n";

/// A program that is not installed.
const ABSENT: &str = "version: 1\nname: absent\nlanguage: shell\nlibrary: none\n\
    client: { command: [./not-installed-yet, '{url}'] }\n\
    documented:\n  promises: { burst: 'whatever' }\n";

fn retrylab(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .output()
        .expect("retrylab runs")
}

#[test]
fn the_table_says_who_conforms_who_deviates_and_who_is_silent() {
    let folder = Folder::with(
        "table",
        &[
            ("suite/burst.yaml", BURST),
            ("suite/post.yaml", POST),
            ("profiles/a-keeps.yaml", KEEPS),
            ("profiles/b-breaks.yaml", BREAKS),
            ("profiles/c-absent.yaml", ABSENT),
            ("table.md", "# Conformance\n\nProse kept as written.\n"),
        ],
    );
    let table = folder.0.join("table.md");
    let output = retrylab(&[
        "conformance".as_ref(),
        folder.0.join("suite").as_os_str(),
        "--profiles".as_ref(),
        folder.0.join("profiles").as_os_str(),
        "--write".as_ref(),
        table.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "3 clients x 2 promises: 2 conform, 1 deviate, 1 silent, 2 skipped, 0 errors"
        ),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&table).expect("the table");
    assert!(
        written.starts_with("# Conformance\n\nProse kept as written.\n"),
        "{written}"
    );
    assert!(
        written.contains("| keeps | Rust | retrylab fixed | conforms | conforms |"),
        "{written}"
    );
    assert!(
        written.contains("| breaks | Rust | retrylab fixed | **deviates** | silent |"),
        "{written}"
    );
    assert!(
        written.contains("| burst | three attempts | 4 attempts | **deviates** (conforms_to)"),
        "{written}"
    );
    assert!(
        written
            .contains("skipped: `./not-installed-yet` does not exist (install the suite's clients"),
        "{written}"
    );

    // The table just written is current; one whose verdict differs is stale.
    let check = |file: &Path| {
        retrylab(&[
            "conformance".as_ref(),
            folder.0.join("suite").as_os_str(),
            "--profiles".as_ref(),
            folder.0.join("profiles").as_os_str(),
            "--check".as_ref(),
            file.as_os_str(),
        ])
    };
    assert!(check(&table).status.success());
    let stale = folder.0.join("stale.md");
    std::fs::write(
        &stale,
        written.replace("| 4 attempts | **deviates**", "| 4 attempts | conforms"),
    )
    .expect("a stale table");
    let output = check(&stale);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("breaks / burst: the table says conforms"),
        "{stderr}"
    );
    assert!(
        stderr.contains("regenerate it with: retrylab conformance"),
        "{stderr}"
    );
}

#[test]
fn run_applies_a_profile_to_every_file() {
    let folder = Folder::with(
        "run",
        &[("suite/burst.yaml", BURST), ("breaks.yaml", BREAKS)],
    );
    let output = retrylab(&[
        "run".as_ref(),
        folder.0.join("suite").as_os_str(),
        "--profile".as_ref(),
        folder.0.join("breaks.yaml").as_os_str(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("client fixed (--profile)"), "{stdout}");
    assert!(stdout.contains("FAIL conforms_to"), "{stdout}");
}

#[test]
fn jobs_give_the_same_table_and_a_missing_requirement_is_skipped() {
    // Needs a stamp no install step made: skipped, naming it, whatever its program.
    let needs = "version: 1\nname: needs\nlanguage: shell\nlibrary: none\n\
        client: { command: [sh, -c, 'exit 1'] }\nrequires: [no-such-stamp]\n\
        documented:\n  promises: { burst: 'whatever' }\n";
    let folder = Folder::with(
        "jobs",
        &[
            ("suite/burst.yaml", BURST),
            ("suite/post.yaml", POST),
            ("profiles/a-keeps.yaml", KEEPS),
            ("profiles/b-breaks.yaml", BREAKS),
            ("profiles/c-needs.yaml", needs),
        ],
    );
    let table = |jobs: &str| {
        let output = retrylab(&[
            "conformance".as_ref(),
            folder.0.join("suite").as_os_str(),
            "--profiles".as_ref(),
            folder.0.join("profiles").as_os_str(),
            "--jobs".as_ref(),
            jobs.as_ref(),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
    };
    let (one, stderr) = table("1");
    let (three, _) = table("3");
    assert_eq!(one, three);
    assert!(
        stderr.contains("skipped: needs / burst: `no-such-stamp` does not exist"),
        "{stderr}"
    );
}

/// A request that hangs ends, on real sockets, when the client gave up on it: the delay
/// before its retry is measured from there, not from the request's arrival.
#[test]
fn a_hung_request_ends_when_the_client_gives_up() {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("curl").is_file()));
    if !on_path {
        eprintln!("skipped: no curl on PATH");
        return;
    }
    let hang = "version: 1\nname: hang\n\
        endpoints: { api: { script: [ { fail: hang }, { status: 200 } ] } }\n\
        operation: { endpoint: api }\n\
        client: { command: [curl, -s, -o, /dev/null, --max-time, '1', --retry, '1', --retry-delay, '1', '{url}'] }\n\
        expect:\n  attempts: 2\n  gaps: [ { within: [1s, 1500ms] } ]\n\
        \x20 conforms_to: { fixed: { delay: 1s, max_attempts: 2, retry_on: [timeout] } }\n\
        tolerance: 250ms\n";
    let folder = Folder::with("hang", &[("hang.yaml", hang)]);
    let output = retrylab(&["run".as_ref(), folder.0.join("hang.yaml").as_os_str()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
}
