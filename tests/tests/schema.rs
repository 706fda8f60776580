//! `scenarios/schema.json`, which every scenario names in its first line for editors, is the
//! schema of the current types. It stays a plain JSON file (editors read it, and the retrylab
//! crate ships it), so it is not an insta snapshot: when it is stale the test fails with the
//! command that rewrites it, [`WRITE`]. `retrylab schema` prints the same text (asserted by
//! harness/tests/cli.rs, the crate that builds the binary), and every library scenario
//! validates against the file, so an editor that checks against it flags no sound file.

use std::path::{Path, PathBuf};

/// Set to `1` to rewrite `scenarios/schema.json` from the types instead of comparing:
/// `RETRYLAB_WRITE_SCHEMA=1 cargo test -p retrylab-tests --test schema`, then review the diff.
/// (`retrylab schema > scenarios/schema.json` writes the same bytes.)
const WRITE: &str = "RETRYLAB_WRITE_SCHEMA";

fn schema_json() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .join("scenarios/schema.json")
}

#[test]
fn schema_json_is_up_to_date() {
    let path = schema_json();
    let schema = format!("{}\n", retrylab::scenario::json_schema());
    if std::env::var_os(WRITE).is_some_and(|v| v == "1") {
        std::fs::write(&path, &schema).expect("writable schema");
        return;
    }
    let run = format!(
        "run: {WRITE}=1 cargo test -p retrylab-tests --test schema\n\
         then review: git diff scenarios/schema.json"
    );
    let current = match std::fs::read_to_string(&path) {
        Ok(current) => current,
        Err(e) => panic!("scenarios/schema.json: {e}\n{run}"),
    };
    if current != schema {
        let committed: Vec<&str> = current.lines().collect();
        let generated: Vec<&str> = schema.lines().collect();
        let difference = (0..committed.len().max(generated.len()))
            .find(|&i| committed.get(i) != generated.get(i))
            .map_or("in line endings".to_owned(), |i| {
                let show = |line: Option<&&str>| line.map_or("(end of file)", |l| *l).to_owned();
                format!(
                    "first at line {}:\n  committed: {}\n  generated: {}",
                    i + 1,
                    show(committed.get(i)),
                    show(generated.get(i))
                )
            });
        panic!("scenarios/schema.json is stale; it differs {difference}\n{run}");
    }
}

#[test]
fn schema_names_every_top_level_key() {
    let schema: serde_json::Value =
        serde_json::from_str(&retrylab::scenario::json_schema()).expect("the schema is JSON");
    let properties = schema["properties"]
        .as_object()
        .expect("top-level properties");
    for key in [
        "version",
        "name",
        "endpoints",
        "operation",
        "client",
        "expect",
        "search",
    ] {
        assert!(properties.contains_key(key), "{key}");
    }
    assert!(!properties.contains_key("source"));
}

/// Every `*.yaml` and `*.yml` file under `dir`, sorted, so failures read in a stable order.
fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            scenario_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml")
        {
            out.push(path);
        }
    }
}

/// The library's scenario files and `retrylab new`'s templates all validate against
/// `scenarios/schema.json`, read as an
/// editor reads it (YAML as JSON values), with a JSON-Schema validator independent of the
/// loader: a file the loader accepts and the schema rejects would be flagged red in an
/// editor, and the other way round the schema would promise what the loader refuses.
#[test]
fn every_library_scenario_validates_against_the_schema() {
    let path = schema_json();
    let text = std::fs::read_to_string(&path).expect("scenarios/schema.json");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is a valid schema");
    let root = path.parent().expect("scenarios/").to_path_buf();
    let mut files = Vec::new();
    scenario_files(&root, &mut files);
    // The library has 180-odd files: a walk that found a handful went wrong.
    assert!(
        files.len() > 100,
        "only {} scenario files found",
        files.len()
    );
    // `retrylab new`'s starters are scenarios too, written out for editing.
    scenario_files(&root.join("../harness/templates"), &mut files);
    let mut invalid = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a readable scenario");
        let document: serde_json::Value = serde_saphyr::from_str(&source)
            .unwrap_or_else(|e| panic!("{}: not YAML: {e}", file.display()));
        for error in validator.iter_errors(&document) {
            invalid.push(format!(
                "{}: at {}: {error}",
                file.strip_prefix(&root).unwrap_or(file).display(),
                error.instance_path()
            ));
        }
    }
    assert!(
        invalid.is_empty(),
        "{} of {} files do not validate against scenarios/schema.json:\n{}",
        invalid.len(),
        files.len(),
        invalid.join("\n")
    );
}

/// The validator is not vacuous: a file with an unknown key, a wrong type and a missing
/// required key fails it, each error at its place.
#[test]
fn the_schema_rejects_a_broken_scenario() {
    let schema: serde_json::Value =
        serde_json::from_str(&retrylab::scenario::json_schema()).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is a valid schema");
    let document: serde_json::Value = serde_saphyr::from_str(
        "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api, calls: many }\n\
         colour: red\n",
    )
    .expect("YAML");
    let places: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| e.instance_path().to_string())
        .collect();
    assert!(places.iter().any(|p| p == "/operation/calls"), "{places:?}");
    assert!(
        places.iter().any(|p| p.is_empty()),
        "the unknown key: {places:?}"
    );
}
