//! `scenarios/schema.json`, which every scenario names in its first line for editors, is the
//! schema of the current types. Regenerate it with
//! `RETRYLAB_BLESS=1 cargo test -p retrylab-tests --test schema`.

use std::path::Path;

#[test]
fn schema_json_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .join("scenarios/schema.json");
    let schema = format!("{}\n", retrylab::scenario::json_schema());
    if std::env::var_os("RETRYLAB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &schema).expect("writable schema");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == schema,
        "scenarios/schema.json is stale: run RETRYLAB_BLESS=1 cargo test -p retrylab-tests --test schema"
    );
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
