//! The `retrylab` binary (feature `cli`).
#![cfg(feature = "cli")]

use std::process::Command;

/// `retrylab check` prints a scenario's contradictions as located warnings, and they fail
/// nothing.
#[test]
fn check_prints_warnings_and_passes() {
    let dir = std::env::temp_dir().join(format!("retrylab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("too-many.yaml");
    std::fs::write(
        &file,
        "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nclient: { exponential: { max_attempts: 3 } }\n\
         expect: { attempts: 4 }\n",
    )
    .expect("the scenario file");
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("retrylab runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let shown = file.display().to_string();
    assert_eq!(
        stdout,
        format!(
            "ok    {shown}\nwarning: {shown}:6:21 expect.attempts: every call must make at \
             least 4 attempts, but the built-in client (`exponential`) makes at most 3 per \
             call\n1 files, 0 with errors, 0 skipped\n"
        )
    );
}

/// `retrylab check` counts a file that needs a feature the build lacks as skipped, apart from
/// the files with errors.
#[test]
fn check_counts_the_files_it_skips() {
    let folder = Folder::with(
        "skip",
        &[
            (
                "a.yaml",
                "version: 1\nname: a\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
            ),
            (
                "b.yaml",
                "version: 1\nname: b\nbackend: turmoil\nendpoints: { api: {} }\n\
                 operation: { endpoint: api }\n",
            ),
        ],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("check")
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let summary = if cfg!(feature = "turmoil") {
        "2 files, 0 with errors, 0 skipped\n"
    } else {
        "2 files, 0 with errors, 1 skipped\n"
    };
    assert!(stdout.ends_with(summary), "{stdout}");
    // The skip line says how to get a build that checks the file.
    if cfg!(not(feature = "turmoil")) {
        assert!(
            stdout.contains(
                "b.yaml (needs retrylab's `turmoil` feature: `cargo install retrylab --features \
                 cli,turmoil`)\n"
            ),
            "{stdout}"
        );
    }
}

/// A temporary folder with `files`, removed when dropped.
struct Folder(std::path::PathBuf);

impl Folder {
    fn with(name: &str, files: &[(&str, &str)]) -> Folder {
        let dir = std::env::temp_dir().join(format!("retrylab-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        for (file, text) in files {
            std::fs::write(dir.join(file), text).expect("a scenario file");
        }
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_json(folder: &Folder) -> (std::process::Output, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", "--format", "json"])
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let json = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (output, json)
}

const PASSING: &str = "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                       operation: { endpoint: api }\nexpect: { attempts: 1 }\n";
const FAILING: &str = "version: 1\nname: fails\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                       operation: { endpoint: api, calls: 2 }\n\
                       client: { fixed: { delay: 1s, max_attempts: 2 } }\n\
                       expect: { outcome: success }\n";
const CUSTOM: &str = "version: 1\nname: custom\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                      operation: { endpoint: api }\nclient: { custom: mine }\n";

/// Every output says which client judged a run: a file that names none runs with the
/// default `no_retry`, and passed without a word of it.
#[test]
fn every_output_names_the_client_that_judged_the_run() {
    let named = PASSING.replace("expect:", "client: { fixed: { delay: 10ms } }\nexpect:");
    let folder = Folder::with(
        "judged-by",
        &[("a-default.yaml", PASSING), ("b-named.yaml", &named)],
    );
    let (_, json) = run_json(&folder);
    let clients: Vec<(&str, &str)> = json["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            (
                r["client"]["policy"].as_str().unwrap(),
                r["client"]["from"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(clients, [("no_retry", "default"), ("fixed", "file")]);
    let human = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("run")
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("client no_retry (the default: the file names none)"),
        "{human}"
    );
    assert!(human.contains(", client fixed\n"), "{human}");
    let overridden = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", "--client", "no_retry"])
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let overridden = String::from_utf8_lossy(&overridden.stdout);
    assert_eq!(
        overridden.matches("client no_retry (--client)").count(),
        2,
        "{overridden}"
    );
    let junit = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", "--format", "junit"])
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let junit = String::from_utf8_lossy(&junit.stdout);
    assert!(
        junit.contains("client no_retry (the default: the file names none)</system-out>"),
        "{junit}"
    );
}

/// A skipped scenario said `"passed": true`, and verdicts were only text.
#[test]
fn json_tells_skipped_from_passed_and_structures_verdicts() {
    let folder = Folder::with(
        "json",
        &[
            ("a-ok.yaml", PASSING),
            ("b-fails.yaml", FAILING),
            ("c-custom.yaml", CUSTOM),
        ],
    );
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(1));
    let runs = json["runs"].as_array().expect("runs");
    let statuses: Vec<(&str, bool)> = runs
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [("passed", true), ("failed", false), ("skipped", false)]
    );
    assert_eq!(json["totals"]["skipped"], 1);
    let outcome = runs[1]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "outcome")
        .expect("the outcome verdict");
    assert_eq!(outcome["judgement"], "failed");
    let findings = outcome["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[1]["call"], 1);
    assert_eq!(findings[1]["client"], 0);
    // Each run holds its trace as a JSON object, the same document `Trace::to_json` writes.
    let attempts = runs[1]["trace"]["attempts"].as_array().expect("the trace");
    assert_eq!(attempts.len(), 4);
    assert_eq!(
        runs[0]["trace"]["attempts"].as_array().map(Vec::len),
        Some(1)
    );
}

/// Nothing ran, so nothing was verified: that is not a success.
#[test]
fn a_run_where_everything_was_skipped_fails() {
    let folder = Folder::with("skipped", &[("custom.yaml", CUSTOM)]);
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json["runs"][0]["status"], "skipped");
    assert!(String::from_utf8_lossy(&output.stderr).contains("no scenario ran"));
}

#[test]
fn passing_runs_exit_zero() {
    let folder = Folder::with("passing", &[("ok.yaml", PASSING), ("custom.yaml", CUSTOM)]);
    let (output, json) = run_json(&folder);
    assert_eq!(output.status.code(), Some(0), "{json}");
}

/// Runs the binary with `args`, killed and failed after 30 s: a walk into a symlink cycle
/// or a read of `/dev/zero` must not hang the suite.
fn bounded(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("retrylab runs");
    for _ in 0..300 {
        if child.try_wait().expect("waitable").is_some() {
            return child.wait_with_output().expect("its output");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let output = child.wait_with_output().expect("its output");
    panic!(
        "retrylab {args:?} did not finish in 30 s; stderr so far:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A FIFO at `path` through `mkfifo`, or why there is none.
fn mkfifo(path: &std::path::Path) -> Result<(), String> {
    match Command::new("mkfifo").arg(path).status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("mkfifo exited with {status}")),
        Err(e) => Err(format!("mkfifo is not available: {e}")),
    }
}

/// The folder walk followed a symlink cycle until the path was too long, would block on a
/// FIFO and read `/dev/zero` without end; now each is skipped with a warning saying what it
/// is, and the scenarios beside them are checked.
#[cfg(unix)]
#[test]
fn the_walk_skips_cycles_fifos_devices_and_dangling_links() {
    use std::os::unix::fs::symlink;
    let folder = Folder::with("walk", &[("ok.yaml", PASSING)]);
    let dir = &folder.0;
    std::fs::create_dir(dir.join("sub")).expect("a subfolder");
    std::fs::write(dir.join("sub/inner.yaml"), PASSING).expect("a scenario");
    symlink("..", dir.join("sub/up")).expect("a link back to the parent");
    symlink("/dev/zero", dir.join("zero.yaml")).expect("a link to /dev/zero");
    symlink("missing.yaml", dir.join("gone.yaml")).expect("a dangling link");
    let fifo = mkfifo(&dir.join("pipe.yaml"));
    if let Err(why) = &fifo {
        println!("no FIFO in this test: {why}");
    }

    for command in ["check", "run"] {
        let output = bounded(&[command.as_ref(), dir.as_os_str()]);
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {stdout}\n{stderr}"
        );
        let d = dir.display();
        let mut expected = vec![
            format!(
                "warning: {d}/gone.yaml: skipped: a dangling symlink: its target missing.yaml \
                 does not exist"
            ),
            format!(
                "warning: {d}/sub/up: skipped: the folder {} was already searched as {d} (a \
                 symlink cycle or a second link)",
                std::fs::canonicalize(dir).expect("canonical").display()
            ),
            format!(
                "warning: {d}/zero.yaml: skipped: not a regular file (a character device); \
                 scenario files are read only from regular files"
            ),
        ];
        if fifo.is_ok() {
            expected.insert(
                1,
                format!(
                    "warning: {d}/pipe.yaml: skipped: not a regular file (a FIFO); scenario \
                     files are read only from regular files"
                ),
            );
        }
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("warning:"))
            .collect();
        assert_eq!(warnings, expected, "{command}");
        if command == "check" {
            assert!(
                stdout.ends_with("2 files, 0 with errors, 0 skipped\n"),
                "{stdout}"
            );
        } else {
            assert!(stdout.contains("2 runs: 2 passed"), "{stdout}");
        }
    }
}

/// Given by name, a path that is not a regular file is an error saying what it is, and never
/// read: "no such file" only when nothing is there.
#[cfg(unix)]
#[test]
fn a_path_that_cannot_be_read_says_what_it_is() {
    use std::os::unix::fs::symlink;
    let folder = Folder::with("paths", &[]);
    let dir = &folder.0;
    symlink("/dev/zero", dir.join("zero.yaml")).expect("a link to /dev/zero");
    symlink("missing.yaml", dir.join("gone.yaml")).expect("a dangling link");
    let big = std::fs::File::create(dir.join("big.yaml")).expect("a file");
    // Sparse: no 16 MiB are written.
    big.set_len(retrylab::internals::MAX_FILE_BYTES + 1)
        .expect("a large file");
    let mut cases = vec![
        (
            "zero.yaml",
            1,
            "zero.yaml: not a regular file (a character device); scenario files are read only \
             from regular files",
        ),
        (
            "gone.yaml",
            1,
            "gone.yaml: a dangling symlink: its target missing.yaml does not exist",
        ),
        (
            "big.yaml",
            1,
            "big.yaml: the file is 16777217 bytes; scenario files are limited to 16777216 bytes \
             (16 MiB)",
        ),
        (
            "absent.yaml",
            2,
            "absent.yaml: no such file or directory (give scenario files or folders of them)",
        ),
    ];
    match mkfifo(&dir.join("pipe.yaml")) {
        Ok(()) => cases.push((
            "pipe.yaml",
            1,
            "pipe.yaml: not a regular file (a FIFO); scenario files are read only from regular \
             files",
        )),
        Err(why) => println!("no FIFO in this test: {why}"),
    }
    let locked = dir.join("locked.yaml");
    std::fs::write(&locked, PASSING).expect("a scenario");
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000))
            .expect("permissions");
    }
    // Root reads any file whatever its mode.
    if std::fs::read(&locked).is_err() {
        cases.push((
            "locked.yaml",
            1,
            "locked.yaml: permission denied (Permission denied (os error 13))",
        ));
    } else {
        println!("no permission case: this user reads files of mode 000");
    }
    for (name, code, message) in cases {
        let path = dir.join(name);
        let output = bounded(&["check".as_ref(), path.as_os_str()]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{name}: {stderr}");
        let expected = format!("{}/{message}", dir.display());
        assert!(
            stderr.lines().any(|l| l.ends_with(&expected)),
            "{name}: expected `{expected}` in:\n{stderr}"
        );
    }
}

/// A folder without a scenario gave `0 files, 0 with errors` and exit 0: nothing checked.
#[test]
fn a_folder_without_scenarios_is_an_error() {
    let folder = Folder::with("empty", &[("notes.txt", "not a scenario")]);
    for command in ["check", "run"] {
        let output = bounded(&[command.as_ref(), folder.0.as_os_str()]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: {}: no scenario files (*.yaml, *.yml) in this folder\n",
                folder.0.display()
            ),
            "{command}"
        );
    }
}

/// The command line read files as text, so invalid UTF-8 lost its position.
#[test]
fn invalid_utf8_is_located() {
    let folder = Folder::with("utf8", &[]);
    let file = folder.0.join("cafe.yaml");
    std::fs::write(&file, b"version: 1\nname: caf\xe9\n").expect("a file");
    let output = bounded(&["check".as_ref(), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}:2:10: the file is not valid UTF-8: byte 0xE9 at byte offset 20\n",
            file.display()
        )
    );
}

/// `retrylab run` with `RETRYLAB_SEED` set to `value`.
fn run_with_seed_var(folder: &Folder, value: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("run")
        .arg(&folder.0)
        .env("RETRYLAB_SEED", value)
        .output()
        .expect("retrylab runs")
}

/// A `RETRYLAB_SEED` that is not a seed panicked in the middle of the run; now it is an
/// error naming the variable and its value, before anything runs, with exit code 2.
#[test]
fn a_garbage_seed_override_is_an_error() {
    let folder = Folder::with("seed", &[("ok.yaml", PASSING)]);
    for value in ["abc", "0x10", "-1", "18446744073709551616", "7 8"] {
        let output = run_with_seed_var(&folder, value);
        assert_eq!(output.status.code(), Some(2), "RETRYLAB_SEED={value}");
        assert_eq!(
            text(&output.stderr),
            format!(
                "error: RETRYLAB_SEED=\"{value}\": not a seed, expected a whole number from 0 \
                 to 18446744073709551615 in decimal digits, such as RETRYLAB_SEED=7\n"
            )
        );
        assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    }
    // Surrounding space, a plus sign and an empty value (no override) stay accepted.
    for value in [" 7 ", "+7", ""] {
        let output = run_with_seed_var(&folder, value);
        assert_eq!(
            output.status.code(),
            Some(0),
            "RETRYLAB_SEED={value:?}: {}",
            text(&output.stderr)
        );
    }
}

/// `check` passed these, and `run` panicked (capacity overflow), aborted allocating 800 GB,
/// or 275 GB: every count now has a bound, and `check` refuses past it, located.
#[test]
fn check_refuses_what_a_run_would_crash_on() {
    let head = "version: 1\nname: x\nendpoints: { api: {} }\n";
    let folder = Folder::with(
        "bounds",
        &[
            (
                "calls.yaml",
                &format!(
                    "{head}operation: {{ endpoint: api, calls: 4294967295, concurrency: 4294967295 }}\n"
                ),
            ),
            (
                "seeds.yaml",
                &format!("{head}operation: {{ endpoint: api }}\nseeds: 0..18446744073709551615\n"),
            ),
            (
                "time.yaml",
                &format!(
                    "{head}operation: {{ endpoint: api }}\nlimits: {{ max_virtual_time: 36500d }}\n"
                ),
            ),
        ],
    );
    let output = bounded(&["check".as_ref(), folder.0.as_os_str()]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.ends_with("3 files, 3 with errors, 0 skipped\n"),
        "{stdout}"
    );
    let root = folder
        .0
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let root = root.unwrap_or_default();
    assert_eq!(
        stderr,
        format!(
            "{root}/calls.yaml:4:36 operation.calls: `calls: 4294967295`, over the limit of the \
             format, expected at most 100000 calls per run\n\
             {root}/calls.yaml:4:61 operation.concurrency: `concurrency: 4294967295`, over the \
             limit of the format, expected at most 10000 calls in flight\n\
             {root}/seeds.yaml:5:8 seeds: a range of 18446744073709551616 seeds, over the limit \
             of the format, expected at most 10000 seeds, each run as a test of its own\n\
             {root}/time.yaml:5:29 limits.max_virtual_time: duration `36500d` is over the limit \
             of the format, expected at most 3650d (about 10 years; a run's clock ends about 30 \
             years on)\n"
        )
    );
}

/// `run --seeds` listed every seed before running any: a hundred billion of them aborted the
/// process. The range is refused when the file loads, and the run goes on to the next file.
#[test]
fn run_with_seeds_refuses_a_huge_range_before_listing_it() {
    let folder = Folder::with(
        "seeds",
        &[
            (
                "huge.yaml",
                "version: 1\nname: huge\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                 seeds: 1..100000000000\n",
            ),
            ("ok.yaml", PASSING),
        ],
    );
    let output = bounded(&[
        "run".as_ref(),
        "--seeds".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        folder.0.as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one document");
    assert_eq!(json["totals"]["invalid"], 1, "{json}");
    assert_eq!(json["totals"]["passed"], 1, "{json}");
    let why = json["runs"][0]["why"].as_str().unwrap_or_default();
    assert!(
        why.ends_with(
            "huge.yaml:5:8 seeds: a range of 100000000000 seeds, over the limit of the format, \
             expected at most 10000 seeds, each run as a test of its own"
        ),
        "{why}"
    );
}

/// `retrylab check scenarios | head -1`: the reader goes away after one line. `println!`
/// panicked on the broken pipe (exit 101 and a panic message); the check now finishes and
/// its exit code still says whether the files loaded.
#[test]
fn check_survives_a_reader_that_goes_away() {
    let files: Vec<(String, String)> = (0..200)
        .map(|i| {
            let yaml = format!(
                "version: 1\nname: f{i}\nendpoints: {{ api: {{}} }}\noperation: {{ endpoint: api }}\n\
                 expect: {{ requests_received: 0 }}\n"
            );
            (format!("f{i:03}.yaml"), yaml)
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let folder = Folder::with("broken-pipe", &borrowed);
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("check")
        .arg(&folder.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("retrylab runs");
    // Closing the read end at once: every write after it fails with EPIPE.
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("retrylab ends");
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

/// `retrylab serve` with a client on plain sockets: the URLs come first, on 127.0.0.1 only
/// (a non-loopback address of this machine reaches nothing), and once the client is done
/// the report follows within a second of `--idle`.
#[test]
fn serve_listens_on_loopback_only_and_ends_after_idle() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::time::{Duration, Instant};

    let folder = Folder::with(
        "serve",
        &[(
            "served.yaml",
            "version: 1\nname: served\n\
             endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
             operation: { endpoint: api }\nexpect: { attempts: 3, outcome: success }\n",
        )],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["serve", "--env", "--idle", "300ms", "--timeout", "30s"])
        .arg(folder.0.join("served.yaml"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("retrylab runs");
    let mut stdout = BufReader::new(child.stdout.take().expect("its output"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the URL line");
    let url = line
        .trim_end()
        .strip_prefix("RETRYLAB_URL_API=http://")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    let port: u16 = url
        .strip_prefix("127.0.0.1:")
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("not on 127.0.0.1: {url}"));
    // Any address of this machine other than loopback: nothing listens there.
    let outside = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|socket| {
            socket.connect("192.0.2.1:9")?;
            socket.local_addr()
        })
        .map(|address| address.ip())
        .ok()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    match outside {
        Some(ip) => {
            let reached = std::net::TcpStream::connect_timeout(
                &std::net::SocketAddr::new(ip, port),
                Duration::from_secs(2),
            );
            assert!(reached.is_err(), "the endpoint answered on {ip}:{port}");
        }
        None => println!("skipped the outside-address check: this machine has no route out"),
    }
    for _ in 0..3 {
        let mut stream = std::net::TcpStream::connect(&url).expect("the endpoint");
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n")
            .expect("the request");
        stream.read_to_end(&mut Vec::new()).expect("the answer");
    }
    let done = Instant::now();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the report");
    let status = child.wait().expect("retrylab exits");
    let took = done.elapsed();
    assert!(status.success(), "{rest}");
    assert!(
        rest.contains("ok   attempts: every call made 3 attempts"),
        "{rest}"
    );
    assert!(
        took < Duration::from_millis(300 + 1000),
        "serve ended {took:?} after the client, with --idle 300ms"
    );
}

/// `--bind` is the only way off loopback, and a scenario `serve` cannot make on real sockets
/// is refused with its located errors, exit status 2.
#[test]
fn serve_refuses_what_real_sockets_cannot_do() {
    let folder = Folder::with(
        "serve-refused",
        &[(
            "refused.yaml",
            "version: 1\nname: x\nendpoints: { api: { connect: [ { action: refuse } ] } }\n\
             operation: { endpoint: api }\n",
        )],
    );
    let output = bounded(&["serve".as_ref(), folder.0.join("refused.yaml").as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "refused.yaml:3:42 endpoints.api.connect[0].action: a `refuse` entry of a number \
             of attempts cannot be made on real sockets"
        ),
        "{stderr}"
    );
}

/// `retrylab search` runs a file's `search:` block with its built-in client: a client that
/// makes one attempt more than the policy it is judged by is found, shrunk, and written as a
/// regression file (the same bytes on a second run, and for a shard), whose path it prints;
/// the policy itself passes.
#[test]
fn search_writes_the_smallest_failing_case_and_prints_its_path() {
    let search = "search:\n  cases: 32\n  vary:\n    endpoints.api.script.0:\n      \
                  one_of: [ { status: 200 }, { status: 503 } ]\n    \
                  endpoints.api.script.0.times: { integers: [1, 5] }\n  \
                  invariants: { conforms_to: { fixed: { delay: 1s, max_attempts: 3 } } }\n";
    let file = |attempts: u32| {
        format!(
            "version: 1\nname: fixed, searched\nendpoints: {{ api: {{ script: [ {{ status: 200 }}, \
             {{ status: 200 }} ] }} }}\noperation: {{ endpoint: api }}\n\
             client: {{ fixed: {{ delay: 1s, max_attempts: {attempts} }} }}\n{search}"
        )
    };
    let must_fail = format!("{}must_fail: [conforms_to]\n", file(4));
    let folder = Folder::with(
        "search",
        &[
            ("off.yaml", &file(4)),
            ("ok.yaml", &file(3)),
            ("must-fail.yaml", &must_fail),
        ],
    );
    let search_in = |name: &str, regressions: &str, shard: &str| {
        Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .arg("search")
            .arg(folder.0.join(name))
            .arg("--regressions")
            .arg(folder.0.join(regressions))
            .args(["--shard", shard])
            .output()
            .expect("retrylab runs")
    };
    // PROPTEST_CASES sets the cases of the search, as it does proptest's.
    let few = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("search")
        .arg(folder.0.join("ok.yaml"))
        .env("PROPTEST_CASES", "5")
        .output()
        .expect("retrylab runs");
    assert!(
        text(&few.stdout).contains(": 5 cases in "),
        "{}",
        text(&few.stdout)
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("search")
        .arg(folder.0.join("ok.yaml"))
        .env("PROPTEST_CASES", "0")
        .output()
        .expect("retrylab runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("PROPTEST_CASES=\"0\": not a count of cases"));

    // A shard alone cannot say whether the whole search's smallest failure is the expected
    // one: a `must_fail` search is refused in shards, and judged whole.
    let sharded = search_in("must-fail.yaml", "none", "1/2");
    assert_eq!(sharded.status.code(), Some(2), "{}", text(&sharded.stdout));
    assert!(
        text(&sharded.stderr).contains(
            "`--shard` cannot judge a search with `must_fail`: run it whole, with `retrylab \
             search "
        ) && text(&sharded.stderr).contains("` and no `--shard`"),
        "{}",
        text(&sharded.stderr)
    );
    let whole = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("search")
        .arg(folder.0.join("must-fail.yaml"))
        .output()
        .expect("retrylab runs");
    assert!(whole.status.success(), "{}", text(&whole.stdout));

    let ok = search_in("ok.yaml", "none", "1/1");
    assert!(ok.status.success(), "{}", text(&ok.stdout));
    assert!(
        text(&ok.stdout).ends_with("none of the 32 cases failed\n"),
        "{}",
        text(&ok.stdout)
    );
    assert!(!folder.0.join("none").exists());

    let mut written = Vec::new();
    for (regressions, shard) in [("a", "1/1"), ("b", "1/1"), ("c", "2/3")] {
        let off = search_in("off.yaml", regressions, shard);
        assert_eq!(off.status.code(), Some(1), "{}", text(&off.stdout));
        let path = folder
            .0
            .join(regressions)
            .join("fixed-searched-seed-0.yaml");
        let stdout = text(&off.stdout);
        assert!(
            stdout.contains(&format!("regression written to {}:\n", path.display())),
            "{stdout}"
        );
        written.push(std::fs::read_to_string(&path).expect("the regression file"));
    }
    assert_eq!(written[0], written[1]);
    assert_eq!(written[0], written[2]);
    assert!(
        written[0].contains("status: known_failure\n"),
        "{}",
        written[0]
    );
    assert!(written[0].contains("#   conforms_to: "), "{}", written[0]);
}

#[test]
fn run_prints_a_passed_fleets_view_after_the_table() {
    let folder = Folder::with(
        "fleet",
        &[(
            "herd.yaml",
            "version: 1\nname: herd\n\
             endpoints: { api: { timeline: [ { during: [0s, 1s], status: 503 } ] } }\n\
             operation: { endpoint: api, clients: 3 }\n\
             client: { fixed: { delay: 1s, max_attempts: 2 } }\n\
             expect: { outcome: success }\n",
        )],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("run")
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // Three clients fail at 0s and succeed at their retry at 1s: 50ms buckets (at most 40
    // up to the last attempt), three first attempts in the first, three retries in the last.
    assert!(
        stdout.contains(
            " (fleet)\n  3 clients, 3 calls: 3 success (100.0%), 0 failure (0.0%), 0 unfinished \
             (0.0%)\n  attempts per 0.050s (retries in brackets):\n    0.000s 3 (0) "
        ),
        "{stdout}"
    );
}

/// `retrylab schema` prints `scenarios/schema.json` byte for byte (the tests crate keeps the
/// file equal to the types' schema), and exits 0.
#[test]
fn schema_prints_the_committed_schema() {
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .arg("schema")
        .output()
        .expect("retrylab runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/schema.json"
    ))
    .expect("scenarios/schema.json");
    let printed = text(&output.stdout);
    assert!(
        printed == committed,
        "`retrylab schema` differs from scenarios/schema.json"
    );
    let schema: serde_json::Value = serde_json::from_str(&printed).expect("JSON");
    assert!(schema["properties"]["endpoints"].is_object(), "{schema}");
}

/// `retrylab run` with `args` (then the paths), from the directory `cwd`.
fn retrylab_in(cwd: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("retrylab runs")
}

/// `--seeds=a..b` runs each seed of the range (named `@seed-<n>`); a reversed range, one over
/// the bound and the form without `=` (read as a path) exit 2 saying what to write.
#[test]
fn run_seeds_range_runs_each_seed_and_refuses_bad_ranges() {
    let folder = Folder::with("seed-range", &[("ok.yaml", PASSING)]);
    let output = retrylab_in(
        &folder.0,
        &["run", "--format", "json", "--seeds=3..5", "ok.yaml"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let seeds: Vec<u64> = json["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["seed"].as_u64().expect("a seed"))
        .collect();
    assert_eq!(seeds, [3, 4, 5]);
    assert_eq!(json["runs"][1]["name"], "ok@seed-4");
    for (args, said) in [
        (
            &["run", "--seeds=5..3", "ok.yaml"][..],
            "starts after it ends",
        ),
        (
            &["run", "--seeds=0..10000", "ok.yaml"],
            "10001 seeds, at most 10000",
        ),
        (&["run", "--seeds=x", "ok.yaml"], "invalid seed range `x`"),
        (&["run", "--seeds", "3..5", "ok.yaml"], "write --seeds=3..5"),
    ] {
        let output = retrylab_in(&folder.0, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(said),
            "{args:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    // RETRYLAB_SEED and --seeds both choose seeds: refused for a range and for a sweep
    // alike (a sweep used to run the file's seeds and leave the variable's out).
    let swept = "version: 1\nname: swept\nseeds: 1..3\nendpoints: { api: {} }\n\
                 operation: { endpoint: api }\n";
    std::fs::write(folder.0.join("swept.yaml"), swept).expect("a file");
    for (args, said) in [
        (
            &["run", "--seeds", "swept.yaml"][..],
            "--seeds and RETRYLAB_SEED",
        ),
        (
            &["run", "--seeds=sweep", "swept.yaml"],
            "--seeds and RETRYLAB_SEED",
        ),
        (
            &["run", "--seeds=3..5", "ok.yaml"],
            "--seeds=3..5 and RETRYLAB_SEED",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .args(args)
            .current_dir(&folder.0)
            .env("RETRYLAB_SEED", "7")
            .output()
            .expect("retrylab runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&format!("{said} both choose the seeds")),
            "{args:?}: {stderr}"
        );
    }
    let sweep = retrylab_in(&folder.0, &["run", "--seeds", "swept.yaml"]);
    assert_eq!(sweep.status.code(), Some(0), "{}", text(&sweep.stderr));
}

/// A file whose own client gives up at the first 503, where three attempts would succeed.
const GIVES_UP: &str = "version: 1\nname: gives up\n\
                        endpoints: { api: { script: [ { status: 503 }, { status: 503 }, { status: 200 } ] } }\n\
                        operation: { endpoint: api }\nexpect: { outcome: success }\n";

/// `--client` runs a file against another reference policy (a name or a mapping); an
/// unknown policy or a custom client exits 2 listing the policies it knows.
#[test]
fn run_client_runs_another_policy_and_refuses_unknown_ones() {
    let folder = Folder::with("client", &[("gives-up.yaml", GIVES_UP)]);
    let own = retrylab_in(&folder.0, &["run", "gives-up.yaml"]);
    assert_eq!(own.status.code(), Some(1), "{}", text(&own.stdout));
    let other = retrylab_in(
        &folder.0,
        &[
            "run",
            "--client",
            "{ fixed: { delay: 1s, max_attempts: 3 } }",
            "gives-up.yaml",
        ],
    );
    assert_eq!(other.status.code(), Some(0), "{}", text(&other.stdout));
    assert!(
        text(&other.stdout).contains("3 attempts, 1 calls"),
        "{}",
        text(&other.stdout)
    );
    // A bare name is the policy with its defaults (exponential: 3 attempts).
    let named = retrylab_in(
        &folder.0,
        &["run", "--client", "exponential", "gives-up.yaml"],
    );
    assert_eq!(named.status.code(), Some(0), "{}", text(&named.stdout));
    for (policy, said) in [
        (
            "expo",
            "`expo` is not a client policy; known policies: no_retry, fixed, exponential",
        ),
        ("custom", "a custom client is written in Rust"),
        ("{ fixed: { dela: 1s } }", "unknown field `dela`"),
    ] {
        let output = retrylab_in(&folder.0, &["run", "--client", policy, "gives-up.yaml"]);
        assert_eq!(output.status.code(), Some(2), "{policy}");
        assert!(
            text(&output.stderr).contains(said),
            "{policy}: {}",
            text(&output.stderr)
        );
    }
}

/// `--backend` runs a file on another backend, checked again for it: the sim network's
/// latency is an error on `real`, the same file passes on `sim`.
#[test]
fn run_backend_checks_the_file_again_for_the_backend() {
    let with_latency = "version: 1\nname: slow net\nnetwork: { latency: 5ms }\n\
                        endpoints: { api: { script: [ { status: 200 } ] } }\n\
                        operation: { endpoint: api }\nexpect: { attempts: 1 }\n";
    let folder = Folder::with("backend", &[("slow.yaml", with_latency)]);
    let sim = retrylab_in(&folder.0, &["run", "--backend", "sim", "slow.yaml"]);
    assert_eq!(sim.status.code(), Some(0), "{}", text(&sim.stdout));
    let real = retrylab_in(&folder.0, &["run", "--backend", "real", "slow.yaml"]);
    assert_eq!(real.status.code(), Some(1));
    let stdout = text(&real.stdout);
    assert!(
        stdout.starts_with("ERR   slow  invalid with the command line's overrides"),
        "{stdout}"
    );
    assert!(
        stdout.contains("with --backend real:\nslow.yaml:3:21 network.latency: the sim network's latency cannot be made on the real backend"),
        "{stdout}"
    );
    let turmoil = retrylab_in(&folder.0, &["run", "--backend", "turmoil", "slow.yaml"]);
    if cfg!(feature = "turmoil") {
        assert_eq!(turmoil.status.code(), Some(0), "{}", text(&turmoil.stdout));
    } else {
        assert_eq!(turmoil.status.code(), Some(2));
        assert!(text(&turmoil.stderr).contains("built without its `turmoil` feature"));
    }
    let unknown = retrylab_in(&folder.0, &["run", "--backend", "tcp", "slow.yaml"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// `--format junit` is `JUnit` XML a `JUnit` reader takes: a test case per file and seed, the
/// failed verdicts in the failure, skipped and invalid files as such.
#[test]
fn run_junit_parses_back_with_its_counts() {
    let folder = Folder::with(
        "junit",
        &[
            ("a-ok.yaml", PASSING),
            ("b-fails.yaml", FAILING),
            ("c-custom.yaml", CUSTOM),
            ("d-invalid.yaml", "version: 1\nname: bad\nendpoints: {}\n"),
        ],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", "--format", "junit", "--seeds=1..2"])
        .arg(&folder.0)
        .output()
        .expect("retrylab runs");
    assert_eq!(output.status.code(), Some(1));
    let suites = junit_parser::from_reader(std::io::Cursor::new(output.stdout))
        .expect("JUnit XML a reader parses");
    // Two seeds each of the files that ran; one case each for the skipped and invalid.
    assert_eq!(
        (suites.tests, suites.failures, suites.skipped, suites.errors),
        (6, 2, 1, 1)
    );
    assert_eq!(suites.suites.len(), 1);
    let cases = &suites.suites[0].cases;
    let names: Vec<&str> = cases.iter().map(|c| c.original_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a-ok.yaml@seed-1",
            "a-ok.yaml@seed-2",
            "b-fails.yaml@seed-1",
            "b-fails.yaml@seed-2",
            "c-custom.yaml",
            "d-invalid.yaml"
        ]
    );
    let folder_name = folder.0.file_name().expect("a name").to_string_lossy();
    assert!(
        cases
            .iter()
            .all(|c| c.classname.as_deref() == Some(&*folder_name))
    );
    let failure = cases[2].status.failure_as_ref();
    assert!(
        failure.message.starts_with("FAIL outcome: "),
        "{}",
        failure.message
    );
    assert!(failure.text.contains("timeline"), "{}", failure.text);
    assert!(cases[4].status.is_skipped());
    assert!(
        cases[4]
            .status
            .skipped_as_ref()
            .message
            .contains("custom client: mine")
    );
    // A failure's text ends with its offending attempts, never coloured in XML.
    assert!(
        failure.text.contains("offending attempts:"),
        "{}",
        failure.text
    );
    assert!(!failure.text.contains("\\u{1b}"), "{}", failure.text);
    // An invalid file's errors are the one-line form, `file:line:col path: message`, not
    // the drawing `check --format human` makes of them.
    let error = cases[5].status.error_as_ref();
    assert!(error.text.contains("operation"), "{}", error.text);
    assert!(
        error
            .text
            .lines()
            .all(|line| line.contains("d-invalid.yaml:") && !line.contains('×')),
        "{}",
        error.text
    );
}

/// `--update-snapshots` rewrites the snapshot of a file with `snapshot: true` from the run,
/// byte for byte what the scenario suite compares; a snapshot that holds is left alone, and
/// a changed file rewrites it.
#[test]
fn run_update_snapshots_rewrites_a_copy() {
    let library = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let source = format!("{library}/scenarios/http/429-retry-after.yaml");
    let committed =
        format!("{library}/tests/tests/snapshots/scenarios__http__429-retry-after.snap");
    let folder = Folder::with("snapshots", &[]);
    let copy = folder.0.join("scenarios/http");
    std::fs::create_dir_all(&copy).expect("a folder");
    let yaml = std::fs::read_to_string(&source).expect("the library file");
    assert!(
        yaml.contains("\nsnapshot: true"),
        "the file asks for a snapshot"
    );
    std::fs::write(copy.join("429-retry-after.yaml"), &yaml).expect("the copy");
    let update = [
        "run",
        "scenarios",
        "--update-snapshots",
        "--snapshot-dir",
        "snaps",
    ];
    let output = retrylab_in(&folder.0, &update);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = folder.0.join("snaps/scenarios__http__429-retry-after.snap");
    assert!(
        text(&output.stderr)
            .contains("snapshot written: snaps/scenarios__http__429-retry-after.snap"),
        "{}",
        text(&output.stderr)
    );
    let snap = std::fs::read_to_string(&written).expect("the snapshot");
    assert_eq!(
        snap,
        std::fs::read_to_string(&committed).expect("the committed snapshot")
    );
    let again = retrylab_in(&folder.0, &update);
    assert!(
        text(&again.stderr).contains("0 written, 1 unchanged"),
        "{}",
        text(&again.stderr)
    );
    // The scenario changed: its snapshot follows.
    let renamed = yaml.replacen(
        "name: 429 with Retry-After, then a 5xx burst, then a slow success",
        "name: renamed",
        1,
    );
    assert_ne!(renamed, yaml);
    std::fs::write(copy.join("429-retry-after.yaml"), renamed).expect("the copy");
    let changed = retrylab_in(&folder.0, &update);
    assert_eq!(changed.status.code(), Some(0));
    let snap = std::fs::read_to_string(&written).expect("the snapshot");
    assert!(
        snap.starts_with("---\nsource: harness/src/report/snapshot.rs\n---\nscenario: renamed\n"),
        "{snap}"
    );
    // A file without `snapshot: true` has none: said, and nothing is written.
    std::fs::write(folder.0.join("ok.yaml"), PASSING).expect("a file");
    let none = retrylab_in(
        &folder.0,
        &[
            "run",
            "ok.yaml",
            "--update-snapshots",
            "--snapshot-dir",
            "none",
        ],
    );
    assert_eq!(none.status.code(), Some(0));
    assert!(
        text(&none.stderr).contains("snapshots: none to update"),
        "{}",
        text(&none.stderr)
    );
    assert!(!folder.0.join("none").exists());
    // Without --snapshot-dir, tests/snapshots is used only where it exists: from a folder
    // without one (the repository's root among them, whose suite reads
    // tests/tests/snapshots), no stray folder is made and the command is refused.
    let defaulted = retrylab_in(&folder.0, &["run", "scenarios", "--update-snapshots"]);
    assert_eq!(defaulted.status.code(), Some(2));
    assert!(
        text(&defaulted.stderr).contains("tests/snapshots does not exist here")
            && text(&defaulted.stderr).contains("--snapshot-dir"),
        "{}",
        text(&defaulted.stderr)
    );
    assert!(!folder.0.join("tests").exists());
    std::fs::create_dir_all(folder.0.join("tests/snapshots")).expect("a folder");
    let existing = retrylab_in(&folder.0, &["run", "scenarios", "--update-snapshots"]);
    assert_eq!(
        existing.status.code(),
        Some(0),
        "{}",
        text(&existing.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(
            folder
                .0
                .join("tests/snapshots/scenarios__http__429-retry-after.snap")
        )
        .expect("the snapshot"),
        std::fs::read_to_string(&written).expect("the snapshot")
    );
    // The root of this repository has no tests/snapshots: refused there too.
    let root = retrylab_in(
        std::path::Path::new(library),
        &[
            "run",
            "scenarios/http/429-retry-after.yaml",
            "--update-snapshots",
        ],
    );
    assert_eq!(root.status.code(), Some(2), "{}", text(&root.stderr));
    assert!(
        !std::path::Path::new(library)
            .join("tests/snapshots")
            .exists()
    );
    // --snapshot-dir means nothing without --update-snapshots.
    let alone = retrylab_in(&folder.0, &["run", "ok.yaml", "--snapshot-dir", "x"]);
    assert_eq!(alone.status.code(), Some(2));
    // A snapshot records the file as written, not with another client.
    let refused = retrylab_in(
        &folder.0,
        &["run", "ok.yaml", "--update-snapshots", "--client", "fixed"],
    );
    assert_eq!(refused.status.code(), Some(2));
}

/// Every template of `retrylab new`: written under the name given, commented, passing
/// `check` without a warning and `run` (the simulated ones; `real` is checked only, as it
/// runs on real sockets and time).
#[test]
fn new_writes_each_template_as_a_starter_that_passes() {
    let folder = Folder::with("new", &[]);
    for template in [
        "5xx-burst",
        "retry-after",
        "duplicate-on-timeout",
        "broker",
        "fleet",
        "real",
    ] {
        let name = format!("my-{template}");
        let output = retrylab_in(&folder.0, &["new", &name, "--from", template]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{template}: {}",
            text(&output.stderr)
        );
        let file = format!("{name}.yaml");
        assert_eq!(
            text(&output.stdout),
            format!("wrote {file}; check it with `retrylab check {file}`\n")
        );
        let written = std::fs::read_to_string(folder.0.join(&file)).expect("the starter");
        assert!(
            written.starts_with("# A starter from `retrylab new --from "),
            "{template}"
        );
        assert!(written.contains(&format!("\nname: {name}\n")), "{template}");
        let check = retrylab_in(&folder.0, &["check", &file]);
        assert_eq!(
            text(&check.stdout),
            format!("ok    {file}\n1 files, 0 with errors, 0 skipped\n"),
            "{template}: {}",
            text(&check.stderr)
        );
        assert_eq!(check.status.code(), Some(0));
        if template != "real" {
            let run = retrylab_in(&folder.0, &["run", &file]);
            assert_eq!(
                run.status.code(),
                Some(0),
                "{template}: {}",
                text(&run.stdout)
            );
            assert!(
                text(&run.stdout).contains("1 passed, 0 failed"),
                "{template}"
            );
        }
    }
}

/// `retrylab new` never overwrites a file, quotes a name YAML would misread, and refuses an
/// unknown template listing the known ones (exit 2 each time).
#[test]
fn new_refuses_to_overwrite_and_names_its_templates() {
    let folder = Folder::with("new-refuses", &[("taken.yaml", "mine\n")]);
    let taken = retrylab_in(&folder.0, &["new", "taken", "--from", "fleet"]);
    assert_eq!(taken.status.code(), Some(2));
    assert!(text(&taken.stderr).contains("taken.yaml: already exists; not overwritten"));
    assert_eq!(
        std::fs::read_to_string(folder.0.join("taken.yaml")).expect("kept"),
        "mine\n"
    );
    let odd = retrylab_in(&folder.0, &["new", "a: b #c.yml", "--from", "broker"]);
    assert_eq!(odd.status.code(), Some(0), "{}", text(&odd.stderr));
    let written = std::fs::read_to_string(folder.0.join("a: b #c.yml")).expect("written");
    assert!(written.contains("\nname: \"a: b #c\"\n"), "{written}");
    let check = retrylab_in(&folder.0, &["check", "a: b #c.yml"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    // Names YAML would read as null or a boolean are quoted, so the file loads by its name.
    for (word, file) in [
        ("null", "null.yaml"),
        ("True", "True.yaml"),
        ("yes", "yes.yaml"),
    ] {
        let made = retrylab_in(&folder.0, &["new", word, "--from", "fleet"]);
        assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
        let written = std::fs::read_to_string(folder.0.join(file)).expect("written");
        assert!(
            written.contains(&format!("\nname: \"{word}\"\n")),
            "{written}"
        );
        let check = retrylab_in(&folder.0, &["check", file]);
        assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    }
    let unknown = retrylab_in(&folder.0, &["new", "x", "--from", "5xx"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains(
            "[possible values: 5xx-burst, retry-after, duplicate-on-timeout, broker, fleet, real]"
        ),
        "{}",
        text(&unknown.stderr)
    );
    assert!(!folder.0.join("x.yaml").exists());
    let nowhere = retrylab_in(&folder.0, &["new", "no/such/dir/x", "--from", "fleet"]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(text(&nowhere.stderr).contains("no/such/dir/x.yaml: cannot create"));
}

/// A command client's processes are in every output: their exit status and what they
/// printed in the JSON, their output in `JUnit`'s `system-out`.
#[test]
fn a_command_client_s_exit_and_output_are_in_json_and_junit() {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: node is not on this machine");
        return;
    }
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/real/node-fetch-retry-after.yaml"
    );
    let run = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .args(["run", file, "--format", format])
            .output()
            .expect("retrylab runs")
    };
    let json = run("json");
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stdout)
    );
    let document: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("one JSON document");
    let process = &document["runs"][0]["processes"][0];
    assert_eq!(process["exit_code"], 0, "{process}");
    assert_eq!(process["stdout"], "status 200\n", "{process}");
    assert_eq!(process["requests"], 3, "{process}");
    assert_eq!(document["runs"][0]["client"]["from"], "file");
    let junit = run("junit");
    let xml = String::from_utf8_lossy(&junit.stdout);
    assert!(xml.contains("<system-out>"), "{xml}");
    assert!(xml.contains("(call 0): exit 0\nstatus 200"), "{xml}");
}
