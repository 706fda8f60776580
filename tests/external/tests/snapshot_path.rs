//! Snapshots of a user's crate go to its own `tests/snapshots`, named after the scenario.

use retrylab::Scenario;

const YAML: &str = r#"
version: 1
name: external user
endpoints:
  api:
    script: [ { status: 503 }, { status: 200 } ]
network: { latency: 5ms }
operation: { endpoint: api, path: /ping }
client: { fixed: { delay: 1s, max_attempts: 2 } }
expect: { outcome: success, attempts: 2, gaps: [ { within: [1s, 1s] } ] }
snapshot: true
"#;

#[test]
fn snapshot_lands_in_this_crate() {
    let scenario = Scenario::from_yaml_str(YAML, "external/ping.yaml").expect("valid scenario");
    scenario.run_builtin().assert();
    let expected = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/external__ping.snap");
    assert!(expected.is_file(), "no snapshot at {}", expected.display());
}
