//! The shell blocks of the README and of the guide (`docs/guide/*.md`) name only commands that
//! exist: every `retrylab` command (also after `cargo run ... --`) is a subcommand the binary
//! lists in its `--help`, with options its `<subcommand> --help` lists; every `cargo` command
//! is one cargo or a named plugin has; a path run as a program exists; anything else is a
//! program the blocks are allowed to name. The guide's `retrylab serve` recipe is also run, by
//! `guide_serve.rs`.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `retrylab <args> --help`, as text.
fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .arg("--help")
        .output()
        .expect("retrylab runs");
    assert!(output.status.success(), "retrylab {args:?} --help failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The README and the guide's chapters, as (name, text).
fn documents() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_owned()];
    let mut chapters: Vec<String> = std::fs::read_dir(root().join("docs/guide"))
        .expect("docs/guide")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/guide/{name}"))
        .collect();
    chapters.sort();
    names.extend(chapters);
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name)).expect("a document");
            (name, text)
        })
        .collect()
}

/// The commands of the shell blocks of `markdown`: one per line, continuations joined,
/// comments and blank lines left out, as (line number, command).
fn commands(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut inside = false;
    let mut pending: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            inside = !inside && matches!(info.trim(), "sh" | "bash" | "shell");
            continue;
        }
        if !inside || trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (number, mut text) = pending.take().unwrap_or((index + 1, String::new()));
        text.push_str(trimmed.trim_end_matches('\\'));
        text.push(' ');
        if trimmed.ends_with('\\') {
            pending = Some((number, text));
        } else {
            found.push((number, text));
        }
    }
    found
}

/// `command` split into words: quotes group, a `#` after a space starts a comment, and a
/// redirection, `&` or `|` ends the command.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && previous == ' ' => break,
            None if matches!(c, '>' | '&' | '|' | ';') => break,
            None if c == ' ' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            None => word.push(c),
        }
        previous = c;
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Checks one `retrylab` command line (its words after `retrylab`).
fn check_retrylab(at: &str, args: &[String], top: &str) {
    let Some(sub) = args.first() else {
        panic!("{at}: `retrylab` with no subcommand");
    };
    if sub == "<command>" {
        return;
    }
    assert!(
        top.lines()
            .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
        "{at}: `retrylab {sub}` is no subcommand of:\n{top}"
    );
    let own = help(&[sub]);
    for arg in &args[1..] {
        if !arg.starts_with('-') {
            continue;
        }
        let flag = arg.split('=').next().unwrap_or(arg);
        assert!(
            lists(&own, flag),
            "{at}: `retrylab {sub}` has no option {flag}:\n{own}"
        );
    }
}

/// Whether `help` names the option `flag` (not merely a longer option it begins).
fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        help[at + flag.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'))
    })
}

#[test]
fn every_shell_command_of_the_readme_and_the_guide_exists() {
    let top = help(&[]);
    // Programs other than retrylab and cargo that the blocks may run.
    let allowed = ["curl", "export", "for", "wait"];
    let cargo = [
        "install", "run", "test", "bench", "build", "insta", "nextest",
    ];
    let mut checked = 0;
    for (name, text) in documents() {
        for (line, command) in commands(&text) {
            let at = format!("{name}:{line}");
            let mut words = words(&command);
            // Leading variable assignments (`INSTA_UPDATE=always cargo test`).
            while words
                .first()
                .is_some_and(|w| w.contains('=') && !w.starts_with('-'))
            {
                words.remove(0);
            }
            let Some(program) = words.first().cloned() else {
                continue;
            };
            match program.as_str() {
                "retrylab" | "target/debug/retrylab" => check_retrylab(&at, &words[1..], &top),
                "cargo" => {
                    let sub = words.get(1).map(String::as_str).unwrap_or_default();
                    assert!(cargo.contains(&sub), "{at}: `cargo {sub}` is not expected");
                    let runs_retrylab = sub == "run" && words.iter().any(|w| w == "retrylab");
                    let dashes = words.iter().position(|w| w == "--");
                    if let (true, Some(dashes)) = (runs_retrylab, dashes) {
                        check_retrylab(&at, &words[dashes + 1..], &top);
                    }
                }
                path if path.contains('/') => {
                    assert!(root().join(path).exists(), "{at}: {path} does not exist");
                }
                other => assert!(allowed.contains(&other), "{at}: `{other}` is not expected"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} commands checked");
}
