//! The CI-at-scale recipe (docs/guide/ci-at-scale.md, feature `cli`): its workflow parses,
//! names only commands and flags the real `retrylab` and `cargo nextest` have, and its
//! `retrylab search --shard k/3` lines, run on three shards, come to what one unsplit search
//! comes to.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root (the harness crate is one folder below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| panic!("the harness crate has a parent folder"))
        .to_path_buf()
}

/// The shard count the workflow's matrix runs, and the values it gives `matrix.shard`.
const SHARDS: u32 = 3;

/// The shell command lines of the workflow's `run:` steps (those run by the default shell),
/// with `>-` folding already undone by the YAML parser.
fn workflow_commands() -> Vec<String> {
    let path = root().join("docs/guide/ci-at-scale.yml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let workflow: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let jobs = workflow["jobs"]
        .as_object()
        .unwrap_or_else(|| panic!("the workflow has `jobs`"));
    let mut commands = Vec::new();
    for (name, job) in jobs {
        if let Some(shards) = job["strategy"]["matrix"]["shard"].as_array() {
            let expected: Vec<u64> = (1..=u64::from(SHARDS)).collect();
            let shards: Vec<u64> = shards.iter().filter_map(|s| s.as_u64()).collect();
            assert_eq!(shards, expected, "job `{name}`: matrix.shard");
        }
        let steps = job["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("job `{name}` has steps"));
        for step in steps {
            assert!(
                step.get("uses").is_some() || step.get("run").is_some(),
                "job `{name}`: a step neither uses an action nor runs a command: {step}"
            );
            // The merge step is a Python program, not a shell line: its commands are Python's.
            if step.get("shell").is_some() {
                continue;
            }
            if let Some(run) = step["run"].as_str() {
                commands.push(run.trim().to_owned());
            }
        }
    }
    commands
}

/// `command` with the matrix's shard set to `k`.
fn for_shard(command: &str, k: u32) -> Vec<String> {
    command
        .replace("${{ matrix.shard }}", &k.to_string())
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// What `program args... --help` prints, or why it cannot be asked.
fn help(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .arg("--help")
        .output()
        .map_err(|e| format!("`{program}` cannot be started: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{program} {} --help` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Every flag of `words` (after the subcommand) is one `help` documents.
fn flags_documented(words: &[String], help: &str, command: &str) {
    for word in words.iter().filter(|w| w.starts_with('-')) {
        let flag = word.split('=').next().unwrap_or(word);
        assert!(
            help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=')
                .any(|w| w == flag),
            "`{command}`: {flag} is not an option of the command (its --help does not list it)"
        );
    }
}

/// Every command line of the workflow names a command that exists with flags it has: the
/// `retrylab` ones against the binary this crate builds, `cargo nextest` ones against the
/// installed nextest (said and passed over where it is not installed), the nextest profile
/// against .config/nextest.toml, and the files they name against the repository.
#[test]
fn the_workflow_names_commands_and_flags_that_exist() {
    let commands = workflow_commands();
    let retrylab = env!("CARGO_BIN_EXE_retrylab");
    let mut seen = [false; 3];
    for command in &commands {
        let words = for_shard(command, 1);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["cargo", "nextest", "run", rest @ ..] => {
                seen[0] = true;
                let profile = rest
                    .iter()
                    .position(|w| *w == "--profile")
                    .and_then(|i| rest.get(i + 1))
                    .unwrap_or_else(|| panic!("`{command}` names a nextest profile"));
                let config = std::fs::read_to_string(root().join(".config/nextest.toml"))
                    .unwrap_or_else(|e| panic!(".config/nextest.toml: {e}"));
                assert!(
                    config.contains(&format!("[profile.{profile}.junit]")),
                    "`{command}`: profile `{profile}` writes no JUnit in .config/nextest.toml"
                );
                assert!(
                    rest.contains(&"--partition") && rest.contains(&"count:1/3"),
                    "`{command}`: no --partition count:k/3"
                );
                match help("cargo", &["nextest", "run"]) {
                    Ok(help) => flags_documented(&for_shard(command, 1)[3..], &help, command),
                    Err(why) => eprintln!(
                        "not checked: the flags of `{command}` ({why}); install cargo-nextest \
                         (`cargo install cargo-nextest --locked`) to check them"
                    ),
                }
            }
            ["cargo", "build", rest @ ..] => {
                seen[1] = true;
                let help = help("cargo", &["build"]).unwrap_or_else(|why| panic!("{why}"));
                flags_documented(&for_shard(command, 1)[2..], &help, command);
                let manifest = std::fs::read_to_string(root().join("harness/Cargo.toml"))
                    .unwrap_or_else(|e| panic!("harness/Cargo.toml: {e}"));
                if let Some(i) = rest.iter().position(|w| *w == "--features") {
                    let features = rest.get(i + 1).copied().unwrap_or_default();
                    for feature in features.split(',') {
                        assert!(
                            manifest.contains(&format!("\n{feature} = [")),
                            "`{command}`: retrylab has no feature `{feature}`"
                        );
                    }
                }
            }
            [program, subcommand, rest @ ..] if program.ends_with("/retrylab") => {
                seen[2] = true;
                assert_eq!(
                    *program, "target/release/retrylab",
                    "the binary `cargo build --release -p retrylab` writes"
                );
                let help = help(retrylab, &[subcommand]).unwrap_or_else(|why| panic!("{why}"));
                flags_documented(&for_shard(command, 1)[2..], &help, command);
                for path in rest.iter().filter(|w| w.ends_with(".yaml")) {
                    assert!(root().join(path).is_file(), "`{command}`: no file {path}");
                }
            }
            // The report job's last step: a shell builtin that fails the job.
            ["exit", code] => assert!(code.parse::<u8>().is_ok(), "`{command}`"),
            _ => panic!("`{command}`: a command this test does not know how to check"),
        }
    }
    assert_eq!(
        seen, [true; 3],
        "the workflow runs nextest, builds the CLI and searches"
    );
}

/// What a search run came to: its exit status, the cases it tried, its verdict line and the
/// regression files it wrote (name and bytes).
#[derive(Debug)]
struct Searched {
    code: Option<i32>,
    cases: u32,
    verdict: String,
    written: Vec<(String, Vec<u8>)>,
}

/// Runs the workflow's search line with `file` in place of its scenario, for shard `k` (or
/// unsplit, without `--shard`, for `None`), writing regressions under `scratch`.
fn search(line: &str, file: &Path, shard: Option<u32>, scratch: &Path) -> Searched {
    let words = for_shard(line, shard.unwrap_or(1));
    let regressions = scratch.join(shard.map_or("whole".to_owned(), |k| format!("shard-{k}")));
    let mut args: Vec<String> = Vec::new();
    let mut rest = words.iter().skip(1);
    while let Some(word) = rest.next() {
        match word.as_str() {
            "--shard" => {
                let value = rest.next().cloned().unwrap_or_default();
                if shard.is_some() {
                    args.extend(["--shard".to_owned(), value]);
                }
            }
            "--regressions" => {
                rest.next();
                args.extend([
                    "--regressions".to_owned(),
                    regressions.display().to_string(),
                ]);
            }
            w if w.ends_with(".yaml") => args.push(file.display().to_string()),
            w => args.push(w.to_owned()),
        }
    }
    let output: Output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(&args)
        .current_dir(root())
        .env_remove("PROPTEST_CASES")
        .output()
        .unwrap_or_else(|e| panic!("retrylab search: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = stdout.lines();
    let first = lines.next().unwrap_or_default();
    let cases = first
        .split(": ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "retrylab {}: no case count in {stdout:?} ({})",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            )
        });
    // The verdict names the folder the regression went to, which differs from run to run.
    let verdict = lines
        .next()
        .unwrap_or_default()
        .replace(&regressions.display().to_string(), "<regressions>");
    let mut written = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&regressions) {
        for entry in entries.flatten() {
            let bytes = std::fs::read(entry.path()).unwrap_or_else(|e| panic!("{e}"));
            written.push((entry.file_name().to_string_lossy().into_owned(), bytes));
        }
    }
    written.sort();
    Searched {
        code: output.status.code(),
        cases,
        verdict,
        written,
    }
}

/// A folder of its own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The workflow's `retrylab search --shard k/3`, run for k = 1, 2, 3 and unsplit, over the
/// library's search (which holds) and one that fails: for the one that holds the shards'
/// cases add up to the unsplit search's; the merged verdict (failed when any shard failed)
/// is the unsplit verdict; and every failing shard says what the unsplit search says and
/// wrote its regression file, byte for byte, and nothing else.
#[test]
fn the_search_shards_together_come_to_one_unsplit_search() {
    let commands = workflow_commands();
    let line = commands
        .iter()
        .find(|c| c.contains(" search ") && c.contains("--shard"))
        .unwrap_or_else(|| panic!("the workflow runs `retrylab search --shard`"));
    let scratch =
        Scratch(std::env::temp_dir().join(format!("retrylab-ci-recipe-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap_or_else(|e| panic!("{e}"));
    // Half the cases end in 503 after five attempts, over the invariant's four: the search
    // fails, and the first failing case may lie in any shard.
    let failing = scratch.0.join("too-many.yaml");
    std::fs::write(
        &failing,
        "version: 1\nname: too many\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api }\nclient: { fixed: { delay: 1s, max_attempts: 5 } }\n\
         search:\n  cases: 24\n  vary:\n    endpoints.api.script.0.status: { one_of: [200, 503] }\n  \
         invariants: { attempts: { max: 4 } }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let library = root().join(
        line.split_whitespace()
            .find(|w| w.ends_with(".yaml"))
            .unwrap_or_else(|| panic!("`{line}` names a file")),
    );
    for (file, fails) in [(library, false), (failing, true)] {
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        let dir = scratch.0.join(name.unwrap_or_default());
        let whole = search(line, &file, None, &dir);
        let shards: Vec<Searched> = (1..=SHARDS)
            .map(|k| search(line, &file, Some(k), &dir))
            .collect();
        let context = format!("{}: unsplit {whole:?}, shards {shards:?}", file.display());
        assert_eq!(whole.code, Some(i32::from(fails)), "{context}");
        // A search stops at its first failing case: only a search that holds tries them all.
        if !fails {
            assert_eq!(
                shards.iter().map(|s| s.cases).sum::<u32>(),
                whole.cases,
                "{context}"
            );
        }
        assert!(shards.iter().all(|s| s.cases > 0), "{context}");
        let merged_failed = shards.iter().any(|s| s.code != Some(0));
        assert_eq!(merged_failed, fails, "{context}");
        for shard in &shards {
            match shard.code {
                Some(0) => assert!(shard.written.is_empty(), "{context}"),
                Some(1) => {
                    assert_eq!(shard.written, whole.written, "{context}");
                    assert_eq!(shard.verdict, whole.verdict, "{context}");
                }
                other => panic!("exit status {other:?}: {context}"),
            }
        }
        if fails {
            assert_eq!(whole.written.len(), 1, "{context}");
        }
    }
}
