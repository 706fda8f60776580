//! Plans: what a run of a loaded scenario is given, and that a run refuses what loading refuses.

use super::labels::{draws_label, latency_draws_label};
use super::*;

#[test]
fn an_epoch_with_an_offset_is_converted_to_utc() {
    let at = |epoch: &str| {
        let src = format!(
            "version: 1\nname: t\nendpoints: {{ api: {{}} }}\noperation: {{ endpoint: api }}\nepoch: {epoch}\n"
        );
        let scenario = Scenario::from_yaml_str(&src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let plan = Plan::from_scenario(&scenario, 0).unwrap_or_else(|e| panic!("{e}"));
        plan.epoch_unix_ms
    };
    let y2026 = retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS;
    // Midnight at +02:00 is 22:00 UTC the day before, not the default epoch.
    assert_eq!(at("2026-01-01T00:00:00+02:00"), y2026 - 7_200_000);
    assert_eq!(at("2026-01-01t02:00:00z"), y2026 + 7_200_000);
    assert_eq!(at("2030-06-01T12:00:00.250-04:30"), 1_906_561_800_250);
    assert_eq!(at("Thu, 01 Jan 2026 00:00:00 GMT"), y2026);
}

/// What a run of `scenario` reports as `not_runnable`, through both ways in: a closure
/// client, and the built-in client; `None` when it ran.
fn run_errors(scenario: &Scenario) -> Option<String> {
    let ran = scenario.run_with_seed(scenario.seed, |_env| async { Ok::<(), ()>(()) });
    if ran.end != crate::report::RunEnd::NotRunnable {
        return None;
    }
    assert_eq!(ran.verdicts.len(), 1, "{}", ran.summary());
    let message = ran.verdicts[0].message.clone();
    let builtin = scenario.run_builtin_with_seed(scenario.seed);
    assert_eq!(builtin.end, crate::report::RunEnd::NotRunnable);
    assert_eq!(builtin.verdicts[0].message, message, "{}", scenario.name);
    Some(message)
}

/// `retrylab check` is loading; a run is planning what was parsed. For every file of the
/// malformed corpus that parses, the run refuses it with exactly the errors loading gives
/// (files that do not parse have nothing to run: the CLI and the suite load them first).
#[test]
fn every_malformed_file_gives_a_run_the_errors_loading_gives() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.map(|e| e.path()).unwrap_or_else(|e| panic!("{e}")))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut compared = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue; // not UTF-8: loading says so, and nothing parses
        };
        let name = path.display().to_string();
        let loaded = match Scenario::from_yaml_str(&text, &name) {
            Ok(_) => panic!("{name} loads: it is not malformed"),
            Err(errors) => errors.to_string(),
        };
        let Ok(parsed) = crate::scenario::load::parse(&text, &name) else {
            continue;
        };
        let ran = run_errors(&parsed).unwrap_or_else(|| panic!("{name} ran"));
        assert_eq!(ran, loaded, "{name}: a run and loading disagree");
        compared += 1;
    }
    assert!(
        compared >= 25,
        "only {compared} of {} files compared",
        files.len()
    );
}

#[test]
fn a_planned_feature_is_refused_alike_by_load_and_by_a_run() {
    let yaml = "version: 1\nname: x\nbackend: real\nendpoints:\n  api:\n    script: [ { status: 200 } ]\n\
                    operation: { endpoint: api, clients: 2 }\n";
    let expected = "x.yaml:7:29 operation.clients: a fleet of clients (`clients`) on \
                        `backend: real` is not supported yet: run the fleet on `backend: sim` \
                        (the default), or set `clients: 1`";
    let loaded = Scenario::from_yaml_str(yaml, "x.yaml")
        .map(|_| ())
        .unwrap_err();
    assert_eq!(loaded.to_string(), expected);
    let parsed = crate::scenario::load::parse(yaml, "x.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run_errors(&parsed).as_deref(), Some(expected));
    // The same key set on a scenario that loaded, and on one built in code.
    let mut changed = Scenario::from_yaml_str(&yaml.replace(", clients: 2", ""), "x.yaml")
        .unwrap_or_else(|e| panic!("{e}"));
    changed.operation.clients = 2;
    let expected = "x.yaml:7:1 operation.clients: a fleet of clients (`clients`) on \
                        `backend: real` is not supported yet: run the fleet on `backend: sim` \
                        (the default), or set `clients: 1`";
    assert_eq!(
        changed.validate().map_err(|e| e.to_string()),
        Err(expected.to_owned())
    );
    assert_eq!(run_errors(&changed).as_deref(), Some(expected));
    let built = Scenario::builder("x")
        .endpoint("api", crate::scenario::EndpointSpec::http())
        .operation(crate::scenario::OperationSpec::get("api", "/"))
        .backend(crate::scenario::BackendKind::Turmoil)
        .build()
        .map(|_| ())
        .map_err(|e| e.to_string());
    // turmoil runs behind its feature; a build without it says so where the key is.
    if cfg!(feature = "turmoil") {
        assert_eq!(built, Ok(()));
    } else {
        assert_eq!(
            built,
            Err(
                "<code> backend: `backend: turmoil` needs retrylab's `turmoil` feature, \
                     which this build lacks: run the tests with `cargo test --features \
                     retrylab/turmoil` (or add `features = [\"turmoil\"]` to retrylab in \
                     Cargo.toml), or install the CLI with `cargo install retrylab --features \
                     cli,turmoil`"
                    .to_owned()
            )
        );
    }
}

/// The timeline of a fixed-delay client against `timeline` (no latency).
fn timeline_run(timeline: &str, delay: &str, attempts: u32) -> String {
    let src = format!(
        "version: 1\nname: t\nendpoints: {{ api: {{ timeline: {timeline} }} }}\n\
             operation: {{ endpoint: api }}\n\
             client: {{ fixed: {{ delay: {delay}, max_attempts: {attempts} }} }}\n"
    );
    let scenario = Scenario::from_yaml_str(&src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin_with_seed(0);
    assert_eq!(report.end, crate::report::RunEnd::Completed);
    report.trace().timeline()
}

/// `during: [a, b]` holds `a` and not `b`: a request at 29.999 s meets the outage, one at
/// 30.000 s does not; between windows and after the last, a bare 200 answers.
#[test]
fn a_timeline_window_holds_its_start_and_not_its_end() {
    let outage = "[ { during: [0s, 30s], status: 503 } ]";
    assert_eq!(
        timeline_run(outage, "29999ms", 3),
        "t=0.000s  #1  GET /  -> 503  conn 1 new  => retry in 29.999s\n\
             t=29.999s  #2  GET /  -> 503  conn 1 reused  gap 29.999s  => retry in 29.999s\n\
             t=59.998s  #3  GET /  -> 200  conn 1 reused  gap 29.999s  => stop: success\n"
    );
    assert_eq!(
        timeline_run(outage, "30s", 3),
        "t=0.000s  #1  GET /  -> 503  conn 1 new  => retry in 30.000s\n\
             t=30.000s  #2  GET /  -> 200  conn 1 reused  gap 30.000s  => stop: success\n"
    );
    // A window may start where another ends; before, between and after them, 200.
    let windows = "[ { during: [1s, 2s], status: 429 }, { during: [2s, 3s], status: 503 }, \
                       { during: [4s, 5s], status: 500 } ]";
    assert_eq!(
        timeline_run(windows, "1s", 7),
        "t=0.000s  #1  GET /  -> 200  conn 1 new  => stop: success\n"
    );
    let retry_all = "[ { during: [0s, 1s], status: 502 }, { during: [1s, 2s], status: 429 }, \
                         { during: [2s, 3s], status: 503 }, { during: [4s, 5s], status: 500 } ]";
    let statuses: Vec<String> = timeline_run(retry_all, "1s", 7)
        .lines()
        .map(|l| {
            l.split("-> ")
                .nth(1)
                .unwrap_or("")
                .chars()
                .take(3)
                .collect()
        })
        .collect();
    assert_eq!(statuses, ["502", "429", "503", "200"]);
}

/// A random step draws from its route's own substream of the seed: the first draws, the
/// branches they give and the attempts of a flaky endpoint are pinned here, so that a run
/// in any process, on any machine, takes the same branches for the same seed.
#[test]
fn a_random_step_takes_the_branches_its_seed_draws() {
    let mut stream = crate::rng::Stream::new(1, &draws_label("api", 0));
    let first: Vec<f64> = (0..4).map(|_| stream.uniform_f64()).collect();
    assert_eq!(
        first,
        [
            0.777654450620726,
            0.14627570162035974,
            0.02581430346025282,
            0.6167283619569652
        ]
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/faults/flaky-endpoint.yaml");
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let statuses = |seed| -> Vec<String> {
        let report = scenario.run_builtin_with_seed(seed);
        report
            .trace()
            .timeline()
            .lines()
            .map(|l| {
                l.split("-> ")
                    .nth(1)
                    .unwrap_or("")
                    .chars()
                    .take(3)
                    .collect()
            })
            .collect()
    };
    // Seed 1's first draw, 0.78, is above 0.6: its first request gets the 200.
    assert_eq!(statuses(1), ["200"]);
    assert_eq!(statuses(3), ["503", "503", "503", "200"]);
    let attempts: Vec<usize> = (1..=10).map(|seed| statuses(seed).len()).collect();
    assert_eq!(attempts, [1, 12, 4, 3, 2, 3, 1, 2, 1, 1]);
    // Again, in the same process: the same branches.
    assert_eq!(
        (1..=10)
            .map(|seed| statuses(seed).len())
            .collect::<Vec<_>>(),
        attempts
    );
}

/// A step's latency distribution draws from the route's own latency substream: the first
/// draws of each kind under seed 1, pinned; then the slow broker's seeds, run twice.
#[test]
fn a_sampled_latency_takes_the_draws_its_seed_gives() {
    let first = |d: LatencyDistribution| -> Vec<u128> {
        let mut stream = crate::rng::Stream::new(1, &latency_draws_label("api", 0));
        (0..5).map(|_| d.sample(&mut stream).as_millis()).collect()
    };
    let uniform = first(LatencyDistribution::Uniform {
        low_ms: 100,
        high_ms: 200,
    });
    let lognormal = first(LatencyDistribution::Lognormal {
        median_ms: 20,
        sigma: 2.0,
        max_ms: Some(10_000),
    });
    let exponential = first(LatencyDistribution::Exponential {
        mean_ms: 50,
        max_ms: None,
    });
    assert_eq!(uniform, [189, 138, 164, 117, 195]);
    assert_eq!(lognormal, [1, 81, 99, 12, 95]);
    assert_eq!(exponential, [110, 24, 52, 9, 148]);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/faults/slow-broker.yaml");
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    // (attempts, when the server sent each answer) for each seed.
    let run = |seed| {
        let report = scenario.run_builtin_with_seed(seed);
        let ledger = &report.ledgers[0].1;
        let sent: Vec<u64> = ledger.responses.iter().map(|r| r.at_ms).collect();
        (report.trace().timeline().lines().count(), sent)
    };
    let seeds: Vec<_> = (1..=20).map(run).collect();
    let slow: Vec<u64> = (1..=20u64)
        .filter(|s| seeds[*s as usize - 1].0 > 1)
        .collect();
    assert_eq!(slow, [3, 12, 17]);
    // Seed 3 draws 356ms, then 0ms: the first attempt is abandoned at its 100ms timeout,
    // the retry sent at 200ms is answered at once.
    let mut stream = crate::rng::Stream::new(3, &latency_draws_label("broker", 0));
    let broker = LatencyDistribution::Lognormal {
        median_ms: 20,
        sigma: 2.0,
        max_ms: Some(10_000),
    };
    let draws: Vec<u128> = (0..3)
        .map(|_| broker.sample(&mut stream).as_millis())
        .collect();
    assert_eq!(draws, [356, 0, 112]);
    assert_eq!(seeds[2], (2, vec![100, 200]));
    // The same seeds again, in the same process: the same latencies.
    assert_eq!((1..=20).map(run).collect::<Vec<_>>(), seeds);
}

/// A network latency distribution draws each segment's (and SYN's) one-way latency from
/// the endpoint's own substream, in the order they are sent.
#[test]
fn a_sampled_network_latency_draws_per_segment() {
    let src = concat!(
        "version: 1\nname: t\nendpoints:\n  api:\n    script:\n",
        "      - { status: 200, body: ok }\n",
        "network:\n  latency: { uniform: [1ms, 9ms] }\n",
        "operation: { endpoint: api }\n",
    );
    let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let mut stream = crate::rng::Stream::new(1, &network_latency_label("api"));
    let uniform = LatencyDistribution::Uniform {
        low_ms: 1,
        high_ms: 9,
    };
    let draws: Vec<u128> = (0..6)
        .map(|_| uniform.sample(&mut stream).as_millis())
        .collect();
    assert_eq!(draws, [2, 1, 7, 3, 2, 9]);
    let report = scenario.run_builtin_with_seed(1);
    // SYN 2ms, SYN-ACK 1ms, the request 7ms: it arrives at 10ms, answered at once; the
    // answer takes the fourth draw, 3ms, and the call ends at 13ms.
    let ledger = &report.ledgers[0].1;
    assert_eq!(ledger.requests[0].at_ms, 10);
    assert_eq!(ledger.responses[0].at_ms, 10);
    assert_eq!(report.trace().calls[0].end_ms, Some(13));
    let again = scenario.run_builtin_with_seed(1);
    assert_eq!(again.trace().timeline(), report.trace().timeline());
    assert_eq!(again.trace().calls[0].end_ms, Some(13));
}

/// A branch runs as a step of its own: its latency delays the answer, its commit is the
/// effect's, and the ledger records the branch each request took. `p: 1` always takes
/// `then`, `p: 0` never does.
#[test]
fn a_random_step_runs_the_branch_it_takes() {
    let src = concat!(
        "version: 1\nname: t\nendpoints:\n  api:\n    script:\n",
        "      - { p: 0, then: { status: 200 }, else: { status: 503, latency: 250ms } }\n",
        "      - { p: 1, then: { status: 503, commit: arrival }, else: { status: 200 } }\n",
        "      - { p: 1, then: { p: 0, then: { status: 500 }, else: { status: 201 } },\n",
        "          else: { status: 500 } }\n",
        "operation: { endpoint: api }\n",
        "client: { fixed: { delay: 1s, max_attempts: 3 } }\n",
    );
    let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin_with_seed(0);
    assert_eq!(
        report.trace().timeline(),
        "t=0.000s  #1  GET /  -> 503  conn 1 new  => retry in 1.000s\n\
             t=1.250s  #2  GET /  -> 503  conn 1 reused  gap 1.000s  => retry in 1.000s\n\
             t=2.250s  #3  GET /  -> 201  conn 1 reused  gap 1.000s  => stop: success\n"
    );
    use retrylab_endpoints::Branch::{Else, Then};
    let ledger = &report.ledgers[0].1;
    let branches: Vec<_> = ledger.requests.iter().map(|r| r.branches.clone()).collect();
    assert_eq!(branches, [vec![Else], vec![Then], vec![Then, Else]]);
    // The arrival commit of the second request's branch, and the 201's.
    let effects: Vec<u64> = ledger.effects.iter().map(|e| e.at_ms).collect();
    assert_eq!(effects, [1250, 2250]);
}

#[test]
fn default_limits_are_twice_the_worst_case_per_call() {
    let src = "version: 1\nname: t\nendpoints: { api: {} }\n\
                   operation: { endpoint: api, calls: 3 }\n\
                   client: { fixed: { delay: 1s, max_attempts: 3, attempt_timeout: 500ms } }\n";
    let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan::from_scenario(&scenario, 0).unwrap_or_else(|e| panic!("{e}"));
    // (3 × 0.5 s + 2 × 1 s) × 2 × 3 calls; 3 attempts × 2 × 3 calls.
    assert_eq!(plan.max_virtual_time, Duration::from_millis(21_000));
    assert_eq!(plan.max_attempts, Some(18));
}

/// 20,000 calls of `no_retry` make 20,000 attempts: the default limit gives each call
/// room, rather than stopping the run at 10,000.
#[test]
fn the_default_attempt_limit_scales_with_the_calls() {
    let src = "version: 1\nname: t\nendpoints: { api: {} }\n\
                   operation: { endpoint: api, calls: 20000 }\n";
    let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan::from_scenario(&scenario, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.max_attempts, Some(200_000));
}

/// The longest `limits.max_virtual_time` the format allows is the instant a run stops
/// at, and the one its verdict names: the run's clock ends about 30 years on, and a
/// limit of 100 years was reported as reached by a run that stopped at 30.
#[test]
fn the_longest_virtual_time_is_the_one_a_run_stops_at() {
    let src = "version: 1\nname: t\nendpoints: { api: { script: [ { fail: hang } ] } }\n\
                   operation: { endpoint: api }\nlimits: { max_virtual_time: 3650d }\n";
    let scenario = Scenario::from_yaml_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin_with_seed(0);
    assert_eq!(report.end, crate::report::RunEnd::VirtualTimeLimit);
    let longest = crate::internals::MAX_DURATION.as_ms();
    assert_eq!(report.trace().end_ms, longest);
    assert!(
        report.verdicts[0]
            .message
            .contains(&format!("({})", crate::trace::seconds(longest))),
        "{}",
        report.verdicts[0].message
    );
}
