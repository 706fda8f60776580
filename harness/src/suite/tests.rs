//! The suite: its test names, its folder walk and its registry.

use super::*;
use std::path::PathBuf;

/// A folder of scenario files, removed when dropped.
struct Folder(PathBuf);

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `scenario_main!` listed a test per seed before running any: a range of 2^64 seeds
/// panicked (capacity overflow) and one of 10^11 aborted the test binary, allocating
/// 800 GB. The range is refused when the file loads, so it is one failing test.
#[test]
fn a_huge_seed_range_is_one_failing_test() {
    let folder =
        Folder(std::env::temp_dir().join(format!("retrylab-suite-seeds-{}", std::process::id())));
    std::fs::create_dir_all(&folder.0).unwrap_or_else(|e| panic!("{e}"));
    let head = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
    for (file, seeds) in [
        ("huge.yaml", "0..18446744073709551615"),
        ("few.yaml", "1..3"),
    ] {
        std::fs::write(folder.0.join(file), format!("{head}seeds: {seeds}\n"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let trials = trials(&folder.0, Clients::new());
    let names: Vec<&str> = trials.iter().map(Trial::name).collect();
    // One test for the file, which fails with the error loading it gives.
    assert_eq!(names, ["few@seed-1", "few@seed-2", "few@seed-3", "huge"]);
    let error = Scenario::load_as(folder.0.join("huge.yaml"), "huge.yaml")
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "huge.yaml:5:8 seeds: a range of 18446744073709551616 seeds, over the limit of the \
             format, expected at most 10000 seeds, each run as a test of its own"
    );
}

/// A file with a `search:` block is one test per shard of its cases; a shard that finds a
/// failing case fails, naming the regression file it wrote under `regressions/`, which
/// holds the smallest case marked `known_failure`.
#[cfg(feature = "search")]
#[test]
fn a_search_file_is_a_test_per_shard_and_writes_its_regression() {
    let folder =
        Folder(std::env::temp_dir().join(format!("retrylab-suite-search-{}", std::process::id())));
    std::fs::create_dir_all(&folder.0).unwrap_or_else(|e| panic!("{e}"));
    let yaml = "version: 1\nname: too many\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                    operation: { endpoint: api }\nclient: { fixed: { delay: 1s, max_attempts: 5 } }\n\
                    search:\n  cases: 100\n  vary:\n    endpoints.api.script.0.status: { one_of: [200, 503] }\n  \
                    invariants: { attempts: { max: 4 } }\n";
    std::fs::write(folder.0.join("too-many.yaml"), yaml).unwrap_or_else(|e| panic!("{e}"));
    let trials = trials(&folder.0, Clients::new());
    let names: Vec<&str> = trials.iter().map(Trial::name).collect();
    assert_eq!(names, ["too-many@shard-1-of-2", "too-many@shard-2-of-2"]);
    let scenario = Scenario::load(folder.0.join("too-many.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let regressions = folder.0.join("regressions");
    let written = regressions.join("too-many-seed-0.yaml");
    // About half the cases answer 503 to the end, and each shard finds one; the one whose
    // first failure is later finds the other's first, earlier, before shrinking: both
    // fail, naming the same file.
    for k in [1, 2] {
        let shard = crate::search::Shard::new(k, 2).unwrap_or_else(|| panic!("a shard"));
        let failed = run_search(&scenario, shard, &Clients::new(), &regressions, "repro")
            .map(|()| "passed".to_owned())
            .unwrap_or_else(|f| f.message().map(str::to_owned).unwrap_or_default());
        assert!(
            failed.contains(&format!("regression written to {}", written.display())),
            "{failed}"
        );
    }
    let text = std::fs::read_to_string(&written).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("\nstatus: known_failure\n"), "{text}");
    assert!(text.contains("#   attempts: "), "{text}");
    let regression = Scenario::load(&written).unwrap_or_else(|e| panic!("{e}"));
    let report = Clients::new()
        .run(&regression, regression.seed)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.passed(), "{}", report.summary());
}

/// A scenario whose client is behind a feature that is off is listed as ignored: it
/// neither fails (the client is fine) nor passes (nothing was judged).
#[test]
fn a_scenario_of_an_unavailable_client_is_ignored() {
    let folder = Folder(
        std::env::temp_dir().join(format!("retrylab-suite-unavailable-{}", std::process::id())),
    );
    std::fs::create_dir_all(&folder.0).unwrap_or_else(|e| panic!("{e}"));
    let head = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
    for (file, client) in [("off.yaml", "off"), ("on.yaml", "on")] {
        let yaml = format!("{head}client: {{ custom: {client} }}\nexpect: {{ attempts: 1 }}\n");
        std::fs::write(folder.0.join(file), yaml).unwrap_or_else(|e| panic!("{e}"));
    }
    let clients = Clients::new()
        .register("on", |_env| async { Ok::<_, ()>(()) })
        .unavailable("off", "needs feature `off`");
    let trials = trials(&folder.0, clients);
    let ignored: Vec<(&str, bool)> = trials
        .iter()
        .map(|t| (t.name(), t.has_ignored_flag()))
        .collect();
    assert_eq!(ignored, [("off", true), ("on", false)]);
}

/// A scenario that needs a feature of retrylab the build lacks is listed as ignored, and
/// runs, as any other, in a build with it.
#[test]
fn a_scenario_needing_a_lacking_feature_is_ignored() {
    let folder =
        Folder(std::env::temp_dir().join(format!("retrylab-suite-lacking-{}", std::process::id())));
    std::fs::create_dir_all(&folder.0).unwrap_or_else(|e| panic!("{e}"));
    let body = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
    for (file, backend) in [("sim.yaml", "sim"), ("turmoil.yaml", "turmoil")] {
        let yaml = format!("{body}backend: {backend}\n");
        std::fs::write(folder.0.join(file), yaml).unwrap_or_else(|e| panic!("{e}"));
    }
    let trials = trials(&folder.0, Clients::new());
    let ignored: Vec<(&str, bool)> = trials
        .iter()
        .map(|t| (t.name(), t.has_ignored_flag()))
        .collect();
    let lacking = cfg!(not(feature = "turmoil"));
    assert_eq!(ignored, [("sim", false), ("turmoil", lacking)]);
}
