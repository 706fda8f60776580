//! Every YAML block of the README and of the guide (`docs/guide/*.md`) loads as a scenario and,
//! run with its client (built-in, a registered Rust client or a program), passes; a block
//! fenced `yaml fragment` is part of a file and is only parsed as YAML. Every sample output
//! (`text`) is found in what retrylab really prints. The Rust blocks of the
//! same files are doctests of this crate (`src/lib.rs`), and their shell blocks are checked
//! against the command line by `harness/tests/doc_commands.rs`.

use std::path::{Path, PathBuf};

use retrylab::Scenario;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The README and every chapter of the guide, as (name from the root, text).
fn documents() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_owned()];
    let guide = root().join("docs/guide");
    let mut chapters: Vec<String> = std::fs::read_dir(&guide)
        .unwrap_or_else(|e| panic!("{}: {e}", guide.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_owned))
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/guide/{name}"))
        .collect();
    chapters.sort();
    names.extend(chapters);
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect()
}

/// A fenced block: its info string, its first line's number and its text.
struct Block {
    info: String,
    line: usize,
    text: String,
}

/// The fenced blocks of a Markdown text, at any indentation (a block inside a list item).
fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<(String, usize, String, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let indent = line[..line.len() - trimmed.len()].to_owned();
                    open = Some((info.trim().to_owned(), index + 2, indent, String::new()));
                }
            }
            Some((info, first, indent, text)) => {
                if trimmed == "```" {
                    found.push(Block {
                        info: std::mem::take(info),
                        line: *first,
                        text: std::mem::take(text),
                    });
                    open = None;
                } else {
                    text.push_str(line.strip_prefix(indent.as_str()).unwrap_or(line));
                    text.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    found
}

#[test]
fn every_yaml_block_of_the_readme_and_the_guide_loads_and_passes() {
    let clients = retrylab_tests::clients::registry();
    let mut ran = 0;
    for (name, text) in documents() {
        for block in blocks(&text) {
            let mut words = block.info.split_whitespace();
            if words.next() != Some("yaml") {
                continue;
            }
            let at = format!("{name}:{}", block.line);
            if words.any(|word| word == "fragment") {
                serde_saphyr::from_str::<serde_json::Value>(&block.text)
                    .unwrap_or_else(|e| panic!("{at}: a fragment that is no YAML: {e}"));
                continue;
            }
            let scenario = Scenario::from_yaml_str(&block.text, &at)
                .unwrap_or_else(|e| panic!("{at}: the block does not load:\n{e}"));
            if let Some(why) = clients.unavailable_here(&scenario) {
                eprintln!("{at}: not run here: {why}");
                continue;
            }
            let report = clients
                .run(&scenario, scenario.seed)
                .unwrap_or_else(|e| panic!("{at}: the block does not run: {e}"));
            assert!(report.passed(), "{at}:\n{}", report.summary());
            ran += 1;
        }
    }
    assert!(ran >= 4, "only {ran} YAML blocks ran");
}

/// Every TOML block is written as a manifest is: sections, and `key = value` lines whose
/// value is a string, a boolean, a number, an array or an inline table.
#[test]
fn every_toml_block_is_manifest_shaped() {
    let mut seen = 0;
    for (name, text) in documents() {
        for block in blocks(&text).into_iter().filter(|b| b.info == "toml") {
            for (offset, line) in block.text.lines().enumerate() {
                let at = format!("{name}:{}", block.line + offset);
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                if line.starts_with('[') {
                    assert!(line.ends_with(']'), "{at}: {line}");
                    continue;
                }
                let (key, value) = line
                    .split_once(" = ")
                    .unwrap_or_else(|| panic!("{at}: no `key = value`: {line}"));
                assert!(
                    key.chars()
                        .all(|c| c.is_alphanumeric() || c == '-' || c == '_'),
                    "{at}: {key}"
                );
                let value = value.split(" #").next().unwrap_or(value).trim();
                let shaped = (value.starts_with('"') && value.ends_with('"'))
                    || (value.starts_with('{') && value.ends_with('}'))
                    || (value.starts_with('[') && value.ends_with(']'))
                    || value == "true"
                    || value == "false"
                    || value.parse::<f64>().is_ok();
                assert!(shaped, "{at}: {value}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 2, "only {seen} TOML blocks");
}

/// The README's timeline is the one `scenarios/http/429-retry-after.yaml` gives.
#[test]
fn the_readme_timeline_is_the_library_files() {
    let file = "scenarios/http/429-retry-after.yaml";
    let scenario = Scenario::load(root().join(file)).unwrap_or_else(|e| panic!("{e}"));
    let report = retrylab::Clients::new()
        .run(&scenario, scenario.seed)
        .unwrap_or_else(|e| panic!("{e}"));
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README");
    let timeline = report.trace().timeline();
    let lines: Vec<&str> = timeline.lines().filter(|l| l.starts_with("t=")).collect();
    assert_eq!(lines.len(), 4, "{timeline}");
    let shown = format!("```text\n{}\n```", lines.join("\n"));
    assert!(
        readme.contains(&shown),
        "the README's timeline differs from {file}'s:\n{timeline}"
    );
    assert!(
        readme.contains(&format!("]({file})")),
        "the README links {file}"
    );
}

/// Samples another test holds to a run of its own: the chapter, words of the sample that
/// test's source quotes, and that test. Every other sample of the chapter is checked here.
const HELD_ELSEWHERE: &[(&str, &str, &str)] = &[
    // The guide's fleet with `jitter: none`: no file of the library is that variant.
    (
        "docs/guide/fleets.md",
        "4 waves of 10 or more of the 20 clients",
        "tests/tests/fleets.rs",
    ),
];

/// What retrylab really printed, for the sample outputs to be found in: every snapshot the
/// tests keep, and the report of each simulated example under docs/examples/, one text
/// each.
fn real_output() -> Vec<String> {
    let mut corpus = Vec::new();
    let snapshots = root().join("tests/tests/snapshots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&snapshots)
        .unwrap_or_else(|e| panic!("{}: {e}", snapshots.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "snap"))
        .collect();
    files.sort();
    assert!(files.len() > 100, "only {} snapshots", files.len());
    for file in files {
        corpus.push(std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}")));
    }
    let examples = root().join("docs/examples");
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap_or_else(|e| panic!("{}: {e}", examples.display()))
        .filter_map(|entry| {
            entry
                .expect("a directory entry")
                .file_name()
                .into_string()
                .ok()
        })
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    names.sort();
    for name in names {
        let shown = format!("docs/examples/{name}");
        let text = std::fs::read_to_string(root().join(&shown)).unwrap_or_else(|e| panic!("{e}"));
        let scenario =
            Scenario::from_yaml_str(&text, &shown).unwrap_or_else(|e| panic!("{shown}: {e}"));
        // Real sockets give real instants, never the same twice: no sample quotes them.
        if scenario.backend == retrylab::scenario::BackendKind::Real {
            continue;
        }
        let report = retrylab::Clients::new()
            .run(&scenario, scenario.seed)
            .unwrap_or_else(|e| panic!("{shown}: {e}"));
        corpus.push(report.summary());
    }
    corpus
}

/// Whether `shown`, a sample's line with `...` where it leaves text out, is one line of
/// `output`: its pieces in order within that line, the first at the line's start (after its
/// indentation) and the last at its end unless the sample elides them.
fn is_a_line_of(shown: &str, output: &str) -> bool {
    let pieces: Vec<&str> = shown.split("...").map(str::trim).collect();
    output.lines().map(str::trim).any(|line| {
        let mut rest = line;
        for (i, piece) in pieces.iter().enumerate() {
            let found = if i == 0 {
                rest.starts_with(piece).then_some(0)
            } else {
                rest.find(piece)
            };
            let Some(at) = found else { return false };
            rest = &rest[at + piece.len()..];
        }
        // A sample that ends without `...` shows the line to its end.
        pieces.last().is_some_and(|last| last.is_empty()) || rest.is_empty()
    })
}

/// Every sample output (a `text` block) of the README and the guide is what retrylab prints:
/// each line, cut at its `...` elisions, is one line of a snapshot or of an example's
/// report, so a changed message fails here until the docs show the new one.
#[test]
fn every_sample_output_is_real_output() {
    let corpus = real_output();
    let mut checked = 0;
    for (name, text) in documents() {
        let samples: Vec<Block> = blocks(&text)
            .into_iter()
            .filter(|b| b.info == "text")
            .collect();
        for block in samples {
            let held = HELD_ELSEWHERE
                .iter()
                .find(|(doc, quoted, _)| *doc == name && block.text.contains(quoted));
            if let Some((_, quoted, holder)) = held {
                let source = std::fs::read_to_string(root().join(holder))
                    .unwrap_or_else(|e| panic!("{holder}: {e}"));
                assert!(
                    source.contains(&name) && source.contains(quoted),
                    "{holder} does not hold {name}'s sample `...{quoted}...`"
                );
                continue;
            }
            for (offset, line) in block.text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                assert!(
                    corpus.iter().any(|output| is_a_line_of(line, output)),
                    "{name}:{}: retrylab prints no line `{line}`",
                    block.line + offset
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} sample outputs");
}
