//! Every scenario in `scenarios/` loads, can run on this version, and serializes back to YAML
//! that parses to an equal value (search relies on this to write shrunk cases back).

use std::path::{Path, PathBuf};

use retrylab::scenario::Scenario;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// The library's scenarios this build can load, as (name relative to the workspace, text):
/// not those that need a feature of retrylab it lacks (`scenarios/turmoil/` without
/// `turmoil`), which the build with the feature checks.
fn scenario_files() -> Vec<(String, String)> {
    let dir = workspace().join("scenarios");
    retrylab::suite::scenario_files(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file.path)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display));
            (file.display, text)
        })
        .filter(|(name, text)| {
            Scenario::from_yaml_str(text, name)
                .err()
                .and_then(|e| e.lacking_feature())
                .is_none()
        })
        .collect()
}

#[test]
fn the_library_has_scenarios() {
    assert!(scenario_files().len() >= 5);
}

#[test]
fn every_scenario_loads_and_runs_on_this_version() {
    for (name, text) in scenario_files() {
        let scenario = Scenario::from_yaml_str(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        let unsupported = scenario.unsupported();
        assert!(
            unsupported.is_empty(),
            "{}",
            unsupported
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn every_scenario_round_trips_through_yaml() {
    for (name, text) in scenario_files() {
        let scenario = Scenario::from_yaml_str(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        let yaml = scenario.to_yaml();
        let again = Scenario::from_yaml_str(&yaml, &format!("{name} (serialized)"))
            .unwrap_or_else(|e| panic!("{e}\n--- serialized:\n{yaml}"));
        assert_eq!(again, scenario, "{name} changed in the round trip:\n{yaml}");
        // Serializing is stable: a second round gives the same text.
        assert_eq!(again.to_yaml(), yaml, "{name}");
    }
}

#[test]
fn load_reads_files_and_names_them_as_given() {
    let root = workspace();
    let path = root.join("scenarios/http/429-retry-after.yaml");
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.source.file, path.display().to_string());
    assert_eq!(
        scenario
            .locate("client.exponential.max_attempts")
            .map(|l| l.line),
        Some(24)
    );
}

/// Plain YAML drops the spaces around a scalar, so a name, path, body or header value with
/// a space at either end came back without it.
#[test]
fn strings_round_trip_byte_for_byte() {
    let yaml = "version: 1\nname: \"trailing space \"\ndescription: \" leading, and  two \"\n\
                endpoints: { api: { script: [ { status: 200, body: \"ok \\n  \", \
                headers: { X-A: \"v \" } } ] } }\n\
                operation: { endpoint: api, path: /orders, body: \"  \" }\n";
    let scenario = Scenario::from_yaml_str(yaml, "spaces.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.name, "trailing space ");
    let text = scenario.to_yaml();
    let again = Scenario::from_yaml_str(&text, "spaces (serialized)")
        .unwrap_or_else(|e| panic!("{e}\n--- serialized:\n{text}"));
    assert_eq!(
        again, scenario,
        "the round trip changed the scenario:\n{text}"
    );
}
