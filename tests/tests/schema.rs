//! `scenarios/schema.json`, which every scenario names in its first line for editors, is the
//! schema of the current types. It stays a plain JSON file (editors read it, and the retrylab
//! crate ships it), so it is not an insta snapshot: when it is stale the test fails with the
//! command that rewrites it, [`WRITE`].

use std::path::{Path, PathBuf};

/// Set to `1` to rewrite `scenarios/schema.json` from the types instead of comparing:
/// `RETRYLAB_WRITE_SCHEMA=1 cargo test -p retrylab-tests --test schema`, then review the diff.
/// (The retrylab CLI has no `schema` subcommand to print it.)
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
