//! Property search (`retrylab::search`): a planted defect is found and shrunk, a correct
//! client passes, and the regression file is the same for the same seed, however the search
//! is sharded, and behaves as a `known_failure` file should.

use std::path::PathBuf;

use retrylab::prelude::*;
use retrylab::search::{Invariants, SearchConfig, SearchOutcome, Shard, Space};
use retrylab_tests::clients::planted;

fn base() -> Scenario {
    Scenario::builder("planted off by one")
        .endpoint("api", endpoint())
        .latency(ms(1))
        .operation(post("api", "/orders"))
        .client(ClientSpec::Custom("planted_off_by_one".into()))
        .build()
        .unwrap()
}

fn invariants() -> Invariants {
    Invariants::from(expect().conforms_to(planted::policy()))
}

fn config(seed: u64) -> SearchConfig {
    SearchConfig::new(base())
        .seed(seed)
        .cases(256)
        .space(Space::default().steps(4))
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("retrylab-search-{}-{name}", std::process::id()))
}

fn defect(seed: u64, shard: Shard) -> SearchOutcome {
    retrylab::search(config(seed).shard(shard))
        .run(planted::off_by_one, &invariants())
        .unwrap()
}

#[test]
fn the_planted_off_by_one_is_found_and_shrunk_to_at_most_three_steps() {
    let outcome = defect(1, Shard::WHOLE);
    let failure = outcome.failure().expect("the defect is found");
    assert_eq!(
        failure.failed_checks(),
        ["conforms_to"],
        "{}",
        failure.regression()
    );
    assert!(
        failure.script().unwrap().len() <= 3,
        "{}",
        failure.regression()
    );
    // Four failing answers in a row are all it takes: one burst of three (the fourth
    // attempt is the defect's), then the final 200.
    let yaml = failure.regression();
    assert!(yaml.contains("\nstatus: known_failure\n"), "{yaml}");
    assert!(
        yaml.contains("      - status: 500\n        times: 3\n      - status: 200\n"),
        "{yaml}"
    );
}

#[test]
fn the_correct_client_passes_every_case() {
    retrylab::search(config(1)).check(planted::correct, invariants());
}

#[test]
fn the_same_seed_writes_the_same_file_byte_for_byte() {
    let (a, b) = (defect(7, Shard::WHOLE), defect(7, Shard::WHOLE));
    let (a, b) = (a.failure().unwrap(), b.failure().unwrap());
    let dir = scratch("same-seed");
    let first = std::fs::read(a.write_regression(&dir).unwrap()).unwrap();
    let second = std::fs::read(b.write_regression(&dir.join("again")).unwrap()).unwrap();
    assert_eq!(first, second);
    assert_eq!(a.file_name(), "planted-off-by-one-seed-7.yaml");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_regression_file_fails_with_the_defect_and_asks_for_its_marker_once_fixed() {
    let outcome = defect(3, Shard::WHOLE);
    let failure = outcome.failure().unwrap();
    let dir = scratch("file");
    let path = failure.write_regression(&dir).unwrap();
    let scenario = Scenario::load(&path).unwrap();
    assert_eq!(
        scenario.status,
        Some(retrylab::scenario::ScenarioStatus::KnownFailure)
    );

    // With the defect: the same verdict fails, so the known failure passes.
    let report = scenario.run(planted::off_by_one);
    assert!(report.passed(), "{}", report.summary());
    let known = &report.verdicts()[0];
    assert_eq!(known.check, "known_failure");
    assert_eq!(known.message, "fails as known (conforms_to)");

    // Fixed: the marker must go.
    let report = scenario.run(planted::correct);
    assert!(!report.passed());
    let failed: Vec<&str> = report.failures().map(|v| v.message.as_str()).collect();
    assert_eq!(
        failed,
        ["now passes: remove the marker `status: known_failure`"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_smallest_file_is_the_same_however_the_search_is_sharded() {
    let whole = defect(5, Shard::WHOLE);
    let whole = whole.failure().unwrap();
    for n in [2, 3, 5] {
        let mut found = 0;
        for k in 1..=n {
            let outcome = defect(5, Shard::new(k, n).unwrap());
            if let Some(failure) = outcome.failure() {
                found += 1;
                assert_eq!(failure.case(), whole.case(), "shard {k}/{n}");
                assert_eq!(failure.regression(), whole.regression(), "shard {k}/{n}");
            }
        }
        assert!(found >= 1, "no shard of {n} found the failure");
    }
}

/// The `search:` block of the library's backon file, run from Rust: the smallest failing
/// case is three retryable failures, then a 429 with `Retry-After` that backon's documented
/// `adjust` retries after although its retries are used up.
#[test]
fn a_search_block_finds_backons_adjust_retrying_past_its_retries() {
    let file = "../scenarios/search/backon-retry-after-adjust-beyond-retries.yaml";
    let scenario = Scenario::load(file).unwrap();
    let (config, invariants) = SearchConfig::from_block(&scenario).unwrap();
    let outcome = retrylab::search(config)
        .run(retrylab_tests::clients::backon::retry_after, &invariants)
        .unwrap();
    let failure = outcome.failure().expect("the defect is found");
    assert_eq!(
        failure.failed_checks(),
        ["attempts"],
        "{}",
        failure.regression()
    );
    let script = failure.script().unwrap();
    assert_eq!(
        script[..3].iter().map(|s| s.status).collect::<Vec<_>>(),
        [Some(503); 3]
    );
    assert_eq!(script[3].status, Some(429), "{}", failure.regression());
    assert!(script[3].retry_after.is_some(), "{}", failure.regression());
    assert_eq!(
        failure
            .scenario()
            .run(retrylab_tests::clients::backon::retry_after)
            .trace()
            .attempts
            .len(),
        5
    );
}

/// Every kind of step, latency and fault the space draws makes a scenario that loads: a
/// search over all of them with a client that bounds its attempts (hangs need a timeout)
/// runs to the end, without an invalid case.
#[test]
fn every_kind_of_step_and_fault_draws_a_valid_scenario() {
    let space = Space::default()
        .steps(6)
        .hangs(true)
        .network_latency(Some(ms(30)))
        .faults(3, secs(5));
    let client: ClientSpec = exponential()
        .initial(ms(100))
        .max_attempts(4)
        .attempt_timeout(secs(2))
        .into();
    let config = SearchConfig::new(base()).seed(11).cases(300).space(space);
    let invariants = Invariants::new().holds("completes", |report| {
        if report.end() == &RunEnd::Completed {
            Ok(())
        } else {
            Err(format!("{:?}", report.end()))
        }
    });
    let outcome = retrylab::search(config)
        .run(retrylab::search::reference_client(&client), &invariants)
        .unwrap();
    assert!(
        outcome.passed(),
        "{}",
        outcome.failure().unwrap().regression()
    );
    assert_eq!(outcome.cases_tried(), 300);
}

/// Judging several cases at once changes nothing: the same first failing case, the same file.
#[test]
fn the_outcome_is_the_same_on_any_number_of_threads() {
    let run = |threads| {
        retrylab::search(config(13).threads(threads))
            .run(planted::off_by_one, &invariants())
            .unwrap()
    };
    let one = run(1);
    let one = one.failure().unwrap();
    for threads in [2, 3, 8] {
        let many = run(threads);
        let many = many.failure().unwrap();
        assert_eq!(many.case(), one.case(), "{threads} threads");
        assert_eq!(many.regression(), one.regression(), "{threads} threads");
    }
}

/// Run plainly (as `retrylab run` and the other library tests do), a search file is its base
/// scenario judged by its own `expect:`: its `must_fail` is for the search.
#[test]
fn a_search_file_run_plainly_is_judged_by_its_own_expect() {
    let file = "../scenarios/search/planted-off-by-one.yaml";
    let scenario = Scenario::load(file).unwrap();
    let report = scenario.run(planted::off_by_one);
    assert!(report.passed(), "{}", report.summary());
}

/// Shrinking moves faults earlier and makes them shorter and fewer: against an invariant that
/// any fault breaks, the smallest case has one partition, at 0, of 1 ms, and one step.
#[test]
fn faults_shrink_to_one_partition_at_the_start_lasting_a_millisecond() {
    let space = Space::default().faults(3, secs(5));
    let invariants =
        Invariants::new().holds("no fault", |report| match report.trace().faults.first() {
            None => Ok(()),
            Some(fault) => Err(format!("a fault at {}ms", fault.at_ms)),
        });
    // A connect in a partition is black-holed: without a timeout the call would wait forever.
    let client: ClientSpec = exponential()
        .max_attempts(3)
        .attempt_timeout(secs(1))
        .into();
    let outcome = retrylab::search(SearchConfig::new(base()).seed(2).space(space))
        .run(retrylab::search::reference_client(&client), &invariants)
        .unwrap();
    let failure = outcome.failure().expect("a case with a fault");
    let faults = &failure.scenario().network.faults;
    assert_eq!(
        faults,
        &[retrylab::scenario::FaultSpec::Partition {
            at: ms(0),
            endpoint: "api".into(),
            r#for: ms(1),
        }],
        "{}",
        failure.regression()
    );
    assert_eq!(
        failure.script().unwrap().len(),
        2,
        "{}",
        failure.regression()
    );
    assert!(
        failure.regression().contains(
            "# Only invariants written in Rust failed (no fault): they are not part of this file, \
         so it shows nothing of the failure.\n"
        ),
        "{}",
        failure.regression()
    );
}

/// An invariant no case gives anything to judge was never tested: with no 429 in the space,
/// `retry_after` holds vacuously in every case, and the search fails saying so.
#[test]
fn an_invariant_no_case_judged_fails_the_search() {
    let invariants = Invariants::from(
        expect()
            .conforms_to(planted::policy())
            .retry_after(retrylab::scenario::RetryAfterCheckSpec::default()),
    );
    let config = config(1)
        .cases(32)
        .space(Space::default().retry_after(None));
    let outcome = retrylab::search(config)
        .run(planted::correct, &invariants)
        .unwrap();
    assert!(outcome.failure().is_none());
    assert!(!outcome.passed());
    assert_eq!(outcome.never_judged(), ["retry_after"]);
    assert_eq!(
        outcome.never_judged_message().unwrap(),
        "`retry_after` was never judged in 32 cases"
    );
}

/// A search with no invariant would pass whatever the client did: it is refused.
#[test]
fn a_search_without_invariants_is_refused() {
    let outcome = retrylab::search(config(1)).run(planted::off_by_one, &Invariants::new());
    assert_eq!(
        outcome.unwrap_err(),
        retrylab::search::SearchError::NoInvariants
    );
    let refused = Scenario::from_yaml_str(
        "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
         search: { cases: 4, vary: { network.latency: { durations: [0ms, 5ms] } } }\n",
        "x.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(refused.contains("search.invariants"), "{refused}");
    assert!(refused.contains("no invariant to check"), "{refused}");
}

/// The regression file expects only what its smallest case judged: `retry_after` is an
/// invariant of the search, but the smallest case (bursts of 500) sends no `Retry-After`, so
/// the file leaves it out, says so, and once fixed asks for its marker rather than failing
/// "not judged".
#[test]
fn the_regression_file_expects_only_what_its_smallest_case_judged() {
    let invariants = Invariants::from(
        expect()
            .conforms_to(planted::policy())
            .retry_after(retrylab::scenario::RetryAfterCheckSpec::default()),
    );
    let outcome = retrylab::search(config(3))
        .run(planted::off_by_one, &invariants)
        .unwrap();
    let failure = outcome.failure().expect("the defect is found");
    let yaml = failure.regression();
    assert!(
        yaml.contains(
            "# Not expected here, since this case gives them nothing to judge: retry_after.\n"
        ),
        "{yaml}"
    );
    let dir = scratch("judged-only");
    let scenario = Scenario::load(failure.write_regression(&dir).unwrap()).unwrap();
    assert_eq!(scenario.expect.check_names(), ["conforms_to"], "{yaml}");
    let report = scenario.run(planted::correct);
    let failed: Vec<&str> = report.failures().map(|v| v.message.as_str()).collect();
    assert_eq!(
        failed,
        ["now passes: remove the marker `status: known_failure`"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An invariant closure that panics fails its case, named after it, on any number of
/// threads (a worker that unwound used to leave the others waiting forever); the failure,
/// which a file cannot hold, is not written.
#[test]
fn a_panicking_invariant_fails_its_case_and_is_not_written() {
    let invariants = Invariants::from(expect().conforms_to(planted::policy()))
        .holds("never panics", |_| panic!("the invariant's own bug"));
    for threads in [1, 2, 3] {
        let outcome = retrylab::search(config(1).cases(8).threads(threads))
            .run(planted::correct, &invariants)
            .unwrap();
        let failure = outcome.failure().expect("the panic fails the case");
        assert_eq!(
            failure.failed_checks(),
            ["never panics"],
            "{threads} threads"
        );
        assert!(
            failure.verdicts()[0]
                .message
                .contains("the invariant panicked: the invariant's own bug"),
            "{}",
            failure.verdicts()[0].message
        );
        assert!(failure.only_closures_failed());
        let dir = scratch("closure-only");
        let refused = failure.write_regression(&dir).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
        assert!(!dir.join(failure.file_name()).exists());
        let said = outcome.judge(&[], &dir).unwrap_err();
        assert!(said.contains("the regression was not written"), "{said}");
    }
}

/// A shrunk candidate that is not a valid scenario is not a failure: shrinking steps back
/// from it (as proptest does from a rejected case) and keeps the failure it had.
#[test]
fn an_invalid_shrunk_candidate_keeps_the_failure_found() {
    // The first choice, which shrinking tries first, is refused (`times: 0`); case 0 of this
    // seed draws the second, whose 503 makes the client retry.
    let yaml = "version: 1\nname: invalid candidate\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                operation: { endpoint: api }\n\
                client: { exponential: { initial: 10ms, max_attempts: 3 } }\n\
                search:\n  cases: 4\n  vary:\n    endpoints.api.script.0:\n      one_of:\n        \
                - { status: 503, times: 0 }\n        - { status: 503 }\n  invariants: { attempts: 1 }\n";
    let scenario = Scenario::from_yaml_str(yaml, "invalid-candidate.yaml").unwrap();
    let (config, invariants) = SearchConfig::from_block(&scenario).unwrap();
    let run = |seed| {
        retrylab::search(config.clone().seed(seed)).run(
            retrylab::search::reference_client(&scenario.client),
            &invariants,
        )
    };
    // A seed whose case 0 draws the refused choice stops the search there (an invalid case
    // is the space's fault); of those that draw the valid one, shrinking meets the refused
    // choice first and must keep the failure.
    let mut kept = 0;
    for seed in 0..16 {
        let Ok(outcome) = run(seed) else { continue };
        let failure = outcome.failure().expect("the retry is found");
        assert_eq!(failure.case(), 0, "seed {seed}");
        assert_eq!(failure.failed_checks(), ["attempts"], "seed {seed}");
        assert_eq!(failure.script().unwrap()[0].status, Some(503));
        assert_eq!(failure.script().unwrap()[0].times, None, "seed {seed}");
        assert_eq!(
            run(seed).unwrap().failure().unwrap().regression(),
            failure.regression()
        );
        kept += 1;
    }
    assert!(kept > 0, "no seed drew the valid choice first");
}

/// backon's documented `adjust` client, searched without being told where to look: the
/// default space (every kind of step, every `Retry-After` form, latencies, commits, cuts,
/// seeds, nothing chosen for backon) and the policy its documentation gives (1s doubling to
/// 60s, no jitter, 3 retries, so 4 attempts, `Retry-After` honoured), judged by
/// `conforms_to`, `retry_after` and `attempts`.
///
/// What it finds is not the defect of `scenarios/search/` (retrying past its retries) but
/// one the client files only show in passing: the closure *replaces* backon's delay with the
/// header's, so a `Retry-After` shorter than the backoff shortens the wait. Shrunk: one 429
/// with `Retry-After: 0`, and the second attempt starts at once where the policy waits 1s.
#[test]
fn a_generic_search_finds_a_defect_in_backons_documented_adjust_client() {
    use retrylab::scenario::{CountSpec, Jitter, RetryAfterCheckSpec};
    let base = Scenario::builder("backon adjust, searched")
        .endpoint("api", endpoint())
        .latency(ms(1))
        .operation(get("api", "/items"))
        .client(ClientSpec::Custom("backon_retry_after".into()))
        .build()
        .unwrap();
    let documented: ClientSpec = exponential()
        .initial(secs(1))
        .multiplier(2.0)
        .max_delay(secs(60))
        .jitter(Jitter::None)
        .max_attempts(4)
        .into();
    let invariants = Invariants::from(
        expect()
            .conforms_to(documented)
            .retry_after(RetryAfterCheckSpec::default())
            .attempts(CountSpec::between(1, 4)),
    );
    let outcome = retrylab::search(SearchConfig::new(base).seed(1).cases(256))
        .run(retrylab_tests::clients::backon::retry_after, &invariants)
        .unwrap();
    let failure = outcome.failure().expect("a defect is found");
    let yaml = failure.regression();
    assert_eq!(failure.failed_checks(), ["conforms_to"], "{yaml}");
    assert!(
        failure.verdicts()[0]
            .message
            .contains("attempt 2 started 0.000s after the end of attempt 1, a 429"),
        "{yaml}"
    );
    let script = failure.script().unwrap();
    assert_eq!(script.len(), 2, "{yaml}");
    assert_eq!(script[0].status, Some(429), "{yaml}");
    assert!(
        yaml.contains("      - status: 429\n        retry_after: 0\n      - status: 200\n"),
        "{yaml}"
    );
    // The file holds it: with the defect, the known failure passes.
    let report = failure
        .scenario()
        .run(retrylab_tests::clients::backon::retry_after);
    let failed: Vec<&str> = report.failures().map(|v| v.check.as_str()).collect();
    assert_eq!(failed, ["conforms_to"], "{}", report.summary());
}

/// Settings a search cannot draw from are refused, each named, rather than read as others.
#[test]
fn empty_statuses_and_zero_cases_or_threads_are_refused() {
    let refused = |config: SearchConfig| {
        retrylab::search(config)
            .run(planted::correct, &invariants())
            .unwrap_err()
            .to_string()
    };
    let why = refused(config(1).space(Space::default().statuses([])));
    assert!(why.contains("`Space::statuses([])`"), "{why}");
    let why = refused(config(1).cases(0).threads(0));
    assert!(why.contains("`SearchConfig::cases(0)`"), "{why}");
    assert!(why.contains("`SearchConfig::threads(0)`"), "{why}");
}

/// The written file's schema line points at `scenarios/schema.json` from where it is
/// written, and is left out where there is none.
#[test]
fn the_schema_line_is_relative_to_where_the_file_is_written() {
    let outcome = defect(7, Shard::WHOLE);
    let failure = outcome.failure().unwrap();
    let root = scratch("schema-line");
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::write(root.join("scenarios/schema.json"), "{}").unwrap();
    let inside = failure
        .write_regression(&root.join("scenarios/regressions"))
        .unwrap();
    let text = std::fs::read_to_string(inside).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=../../scenarios/schema.json\n"),
        "{text}"
    );
    assert_eq!(text.split_once('\n').unwrap().1, failure.regression());
    let outside = scratch("no-schema-line");
    let text = std::fs::read_to_string(failure.write_regression(&outside).unwrap()).unwrap();
    assert_eq!(text, failure.regression());
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

/// A search runs a built-in client as `run_builtin` does: one reference client per client
/// instance, its calls sharing the policy's state. An AWS quota of 5 tokens pays for one
/// retry in all, so against a 500 the first call retries once and the second not at all (3
/// attempts); a client made for each call would retry in both (4). Each case (each clone of
/// the closure) starts with a full quota.
#[test]
fn a_search_runs_the_built_in_client_as_run_builtin_does() {
    let yaml = r#"
version: 1
name: a quota spans the calls
endpoints: { api: { script: [ { status: 500 } ] } }
operation: { endpoint: api, calls: 2 }
client: { aws_standard: { initial_tokens: 5, jitter: none } }
"#;
    let scenario = Scenario::from_yaml_str(yaml, "quota.yaml").unwrap();
    let client = retrylab::search::reference_client(&scenario.client);
    let builtin = scenario.run_builtin();
    assert_eq!(builtin.trace().attempts.len(), 3, "{}", builtin.summary());
    for _ in 0..2 {
        let searched = scenario.run_with_seed(scenario.seed, client.clone());
        assert_eq!(searched.trace().attempts.len(), 3, "{}", searched.summary());
        // The same attempts and decisions (the calls' errors are only typed differently).
        let timeline = |text: String| text[text.find("attempts:").unwrap_or(0)..].to_owned();
        assert_eq!(
            timeline(searched.snapshot_text()),
            timeline(builtin.snapshot_text())
        );
    }
}
