//! The third-party retry clients of `retrylab_tests::clients` against their scenarios in
//! `scenarios/clients/`, with each verdict pinned: which checks pass, which fail as the
//! file's `must_fail` expects, and the instants that make the point.
//!
//! `tests/scenarios.rs` runs the same files (and asserts their snapshots) through the client
//! registry; these tests call `Scenario::run` with the client functions directly and check
//! verdicts only (`report.assert()` would assert each snapshot a second time under the
//! same name).

use retrylab::scenario::StepSpec;
use retrylab::trace::CallResult;
use retrylab::{Judgement, Scenario};
use retrylab_tests::clients::{backoff, backon, tokio_retry2, tower};
use retrylab_tests::pinned::{
    call0, caught, checks, client_scenario, failure, gaps, gaps_per_call, jitter, jitter_scenario,
    message, starts,
};

// ---- tower ------------------------------------------------------------------------------

#[test]
fn tower_backoff_jitters_sub_second_delays_but_not_whole_seconds() {
    let scenario = client_scenario("tower-retry-backoff.yaml");
    let report = scenario.run(tower::retry_backoff);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["gaps"], "{}", report.summary());
    assert!(message(&report, "gaps").contains(
        "attempt 4 started 1.000s after attempt 3 ended, expected within [1.001s, 1.500s]; \
         call 0: attempt 5 started 2.000s after attempt 4 ended, expected within [2.001s, 3.000s]"
    ));
    // On every seed of the file's sweep: the 1s and 2s delays exact, the sub-second ones
    // jittered, the last one at the 4s maximum.
    for seed in 1..=10 {
        let report = scenario.run_with_seed(seed, tower::retry_backoff);
        assert!(report.passed(), "seed {seed}: {}", report.summary());
        let gaps = gaps(&report);
        assert_eq!(gaps[2..], [1000, 2000, 4000], "seed {seed}");
        assert!((251..=375).contains(&gaps[0]) && (501..=750).contains(&gaps[1]));
    }
}

#[test]
fn tower_budget_allows_one_retry_per_four_deposits() {
    let report = client_scenario("tower-retry-budget.yaml").run(tower::retry_budget);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    // Calls 0-7 deposit; call 8 retries twice (100ms apart), call 9 not at all.
    let per_call: Vec<u32> = report
        .trace()
        .calls
        .iter()
        .map(|c| {
            report
                .trace()
                .attempts
                .iter()
                .filter(|a| a.call_id == c.call_id)
                .count() as u32
        })
        .collect();
    assert_eq!(per_call, [1, 1, 1, 1, 1, 1, 1, 1, 3, 1]);
    assert_eq!(starts(&report)[8..], [18, 120, 222, 224]);
}

#[test]
fn tower_budget_forgets_deposits_after_its_ttl_in_virtual_time() {
    let report = client_scenario("tower-retry-budget-ttl.yaml").run(tower::retry_budget);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    // Call 8's 503 arrives 1.5s later: the deposits have expired, no retry.
    let last = report.trace().calls.last().expect("calls");
    assert_eq!(last.end_ms, Some(1520), "{}", report.summary());
    assert_eq!(report.trace().attempts.len(), 9);
}

// ---- backon -----------------------------------------------------------------------------

#[test]
fn backon_exponential_defaults_are_exact() {
    let report = client_scenario("backon-exponential.yaml").run(backon::exponential);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(
        checks(&report),
        ["outcome", "attempts", "gaps", "conforms_to", "total_time"]
    );
    assert_eq!(starts(&report), [0, 1004, 3006, 7008]);
    assert_eq!(
        call0(&report),
        (
            &failure("Retryable { status: 503, retry_after: None }"),
            Some(7010)
        )
    );
}

#[test]
fn backon_seeded_jitter_stays_in_bounds_and_is_reproducible() {
    let scenario = client_scenario("backon-exponential-jitter.yaml");
    let report = scenario.run_with_seed(scenario.seed, backon::exponential_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(gaps(&report), [1511, 2454, 7454], "{}", report.summary());
    // with_jitter_seed(env.call_seed(..)): the same seed draws the same delays.
    let again = scenario.run_with_seed(scenario.seed, backon::exponential_jitter);
    assert_eq!(again.snapshot_text(), report.snapshot_text());
}

/// A client whose backoff (and its generator) is made in each call draws jitter of its own
/// in each call: seeded per call with `env.call_seed`, not once per run with `env.seed`.
#[test]
fn per_call_generators_jitter_each_call_differently() {
    let mut backon = client_scenario("backon-exponential-jitter.yaml");
    backon.operation.calls = 3;
    let report = backon.run(backon::exponential_jitter);
    assert!(report.passed(), "{}", report.summary());
    let per_call = gaps_per_call(&report);
    assert_eq!(per_call.len(), 3);
    assert!(
        per_call[0] != per_call[1] && per_call[1] != per_call[2] && per_call[0] != per_call[2],
        "{per_call:?}"
    );
    // Two calls of 503s only: each call retries 5 times.
    let mut tower = client_scenario("tower-retry-backoff.yaml");
    tower.operation.calls = 2;
    tower.endpoints.get_mut("api").expect("endpoint api").script =
        Some(vec![StepSpec::status(503)]);
    let report = tower.run(tower::retry_backoff);
    let per_call = gaps_per_call(&report);
    assert_eq!(per_call.len(), 2, "{}", report.summary());
    // The sub-second delays are the jittered ones.
    assert_ne!(per_call[0][..2], per_call[1][..2], "{}", report.summary());
}

#[test]
fn backon_fibonacci_passes_its_max_delay() {
    let report = client_scenario("backon-fibonacci.yaml").run(backon::fibonacci);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["gaps", "conforms_to"]);
    assert_eq!(gaps(&report), [100, 100, 200, 300, 500, 500]);
    assert!(message(&report, "conforms_to").contains(
        "attempt 6 started 0.500s after the end of attempt 5, a 503 (needed exactly 0.400s)"
    ));
    assert_eq!(
        call0(&report),
        (&CallResult::Success("200".into()), Some(1700))
    );
}

#[test]
fn backon_adjust_sleeps_retry_after_even_past_max_times() {
    let report = client_scenario("backon-retry-after-adjust.yaml").run(backon::retry_after);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(
        message(&report, "retry_after"),
        "all 3 Retry-After values were honoured"
    );
    // 3 retries allowed, 4 made: the last on a Retry-After after backon proposed None.
    assert_eq!(starts(&report), [0, 3004, 5006, 6008, 7010]);
}

// ---- tokio-retry2 -----------------------------------------------------------------------

#[test]
fn tokio_retry2_exponential_matches_its_doc_example() {
    let report = client_scenario("tokio-retry2-exponential.yaml").run(tokio_retry2::exponential);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(gaps(&report), [10, 100, 100]);
    assert_eq!(
        call0(&report),
        (
            &failure("Retryable { status: 503, retry_after: None }"),
            Some(220)
        )
    );
}

#[test]
fn tokio_retry2_jitter_stays_in_bounds_but_is_not_reproducible() {
    let scenario = client_scenario("tokio-retry2-jitter.yaml");
    let mut traces = Vec::new();
    for _ in 0..3 {
        let report = scenario.run(tokio_retry2::jitter);
        assert!(report.passed(), "{}", report.summary());
        traces.push(gaps(&report));
    }
    // rand's thread generator, unseeded: three runs all drawing the same three delays
    // (each from hundreds of milliseconds) would be a chance below 1e-15.
    assert!(
        traces[0] != traces[1] || traces[1] != traces[2],
        "{traces:?}"
    );
}

#[test]
fn tokio_retry2_retry_after_does_not_delay_the_retry() {
    let report = client_scenario("tokio-retry2-retry-after.yaml").run(tokio_retry2::retry_after);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["gaps", "retry_after"]);
    assert!(message(&report, "retry_after").contains(
        "attempt 2 started 0.100s after the head of a 429 with Retry-After: 2 (needed exactly 2.000s)"
    ));
    assert_eq!(starts(&report), [0, 104, 206]);
}

#[test]
fn tokio_retry2_max_duration_never_expires_in_virtual_time() {
    let report = client_scenario("tokio-retry2-max-duration.yaml").run(tokio_retry2::max_duration);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["attempts", "total_time"]);
    assert!(message(&report, "attempts").contains("call 0 made 21 attempts, expected 7"));
    // take(20) ended it, 20 virtual seconds in.
    assert_eq!(call0(&report).1, Some(20_000));
}

// ---- backoff ----------------------------------------------------------------------------

#[test]
fn backoff_max_elapsed_time_expires_on_the_virtual_clock() {
    let report = client_scenario("backoff-max-elapsed-time.yaml").run(backoff::virtual_clock);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(starts(&report), [0, 2000, 5000, 10_000]);
    // The last attempt starts on the deadline, in time; the call ends a second after it.
    assert_eq!(
        message(&report, "no_attempt_after"),
        "every attempt of every call started within 10.000s of its call's start (4 attempts; \
         the latest, call 0's attempt 4, at 10.000s)"
    );
    assert_eq!(call0(&report).1, Some(11_000));
}

#[test]
fn backoff_max_elapsed_time_on_the_system_clock_does_not_expire() {
    let report =
        client_scenario("backoff-max-elapsed-time-system-clock.yaml").run(backoff::system_clock);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        caught(&report),
        ["attempts", "total_time", "no_attempt_after"]
    );
    assert_eq!(
        message(&report, "no_attempt_after"),
        "failed as must_fail expects: call 0: attempt 5 started 19.000s after the call \
         started, later than 10.000s"
    );
    // An 8s sleep after 11s of virtual time: the real clock said ~0s had elapsed.
    assert_eq!(starts(&report), [0, 2000, 5000, 10_000, 19_000]);
    assert_eq!(call0(&report).1, Some(20_000));
}

// ---- jitter: present --------------------------------------------------------------------

#[test]
fn the_clients_that_jitter_are_not_flagged() {
    // backon's jitter, seeded per call (with the same seed on every call it would draw the
    // same delays every call, and be flagged).
    let backon = jitter_scenario("backon-exponential-jitter.yaml", 4);
    for seed in 1..=30 {
        let report = backon.run_with_seed(seed, backon::exponential_jitter);
        assert_eq!(
            jitter(&report).0,
            Judgement::Passed,
            "seed {seed}: {}",
            report.summary()
        );
    }
    // tower jitters its sub-second delays only (1s and 2s come out exact): they vary.
    let tower = jitter_scenario("tower-retry-backoff.yaml", 3);
    for seed in 1..=30 {
        let report = tower.run_with_seed(seed, tower::retry_backoff);
        let (judgement, message) = jitter(&report);
        assert_eq!(
            judgement,
            Judgement::Passed,
            "seed {seed}: {}",
            report.summary()
        );
        assert!(message.contains("call 2's attempt 2 started"), "{message}");
    }
    // tokio-retry2's jitter draws from rand's thread generator: every run differs.
    let tokio_retry2 = jitter_scenario("tokio-retry2-jitter.yaml", 3);
    for _ in 0..10 {
        let report = tokio_retry2.run(tokio_retry2::jitter);
        assert_eq!(jitter(&report).0, Judgement::Passed, "{}", report.summary());
    }
}

#[test]
fn the_clients_that_do_not_jitter_are_flagged() {
    // backon's default ExponentialBuilder: 1s, 2s, 4s, no jitter. With 1ms of latency the
    // first call opens the connection and the others reuse it, so calls 1-3 are compared
    // with each other, not with call 0.
    let report = jitter_scenario("backon-exponential.yaml", 4).run(backon::exponential);
    assert_eq!(
        jitter(&report),
        (
            Judgement::Failed,
            "the delays do not vary: each of the 6 delays compared equals an earlier call's after \
             the same responses at the same instants (call 2 attempt 2: 1.000s as in call 1; \
             call 2 attempt 3: 2.000s as in call 1; call 2 attempt 4: 4.000s as in call 1; 3 \
             more); a client that jitters does that with probability below 1e-6, even leaving \
             out the 2 at 4.000s, which could be a cap"
        ),
        "{}",
        report.summary()
    );
    // backoff with randomization_factor 0, as its client here is configured.
    let report = jitter_scenario("backoff-max-elapsed-time.yaml", 4).run(backoff::virtual_clock);
    assert_eq!(jitter(&report).0, Judgement::Failed, "{}", report.summary());
}

// ---- the registry -----------------------------------------------------------------------

#[test]
fn every_client_scenario_names_a_registered_client() {
    let registry = retrylab_tests::clients::registry();
    let names = registry.names();
    let mut used = Vec::new();
    // scenarios/clients/ holds only custom clients; scenarios/real/ the black-box ones
    // beside the reference client on real sockets; scenarios/faults/ the clients a fault
    // catches beside the reference client; scenarios/servicenow/ the custom `get_delay`
    // strategy beside the built-in ones; scenarios/idempotency/ the clients that misuse a
    // key beside the reference client; scenarios/search/ the reference client with and
    // without a planted defect beside third-party clients; scenarios/http2/ a client that
    // speaks both versions beside the reference client.
    for (theme, only_custom) in [
        ("clients", true),
        ("real", false),
        ("faults", false),
        ("servicenow", false),
        ("idempotency", false),
        ("search", false),
        ("http2", false),
    ] {
        let dir = format!("{}/../scenarios/{theme}", env!("CARGO_MANIFEST_DIR"));
        for file in retrylab::suite::scenario_files(dir.as_ref()).expect("readable") {
            let scenario = Scenario::load(&file.path).unwrap_or_else(|e| panic!("{e}"));
            match &scenario.client {
                retrylab::scenario::ClientSpec::Custom(name) => {
                    assert!(names.contains(&name.as_str()), "{}: {name}", file.display);
                    used.push(name.clone());
                }
                other if only_custom => {
                    panic!("{}: not a custom client: {other:?}", file.display)
                }
                _ => {}
            }
        }
    }
    used.sort();
    used.dedup();
    assert_eq!(used, names, "every registered client has a scenario");
}
