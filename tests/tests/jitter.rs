//! `expect.jitter: present`, and `conforms_to`'s finding on a jittered policy: clients
//! without jitter are caught, and the library's jittered clients are not, over many seeds.
//!
//! The false-alarm bound of both is a probability per run (1e-6 for `jitter`, 1e-9 for
//! `conforms_to`), so over the sweeps here the expected number of false alarms is below
//! 0.001: any false alarm means the bound does not hold. These runs go through the whole
//! harness (the sim network, the reference client, the trace); the harness's unit tests
//! sweep the same jitter kinds over 2,000 seeds each on the statistic alone.

use std::time::Duration;

use retrylab::prelude::*;
use retrylab::scenario::{JitterCheckSpec, LimitsSpec, RetryAfterSpec};
use retrylab::trace::CallResult;
use retrylab_tests::repeat::from_the_start;

/// The seeds of each sweep: about 10 ms a run in a debug build.
const SEEDS: u64 = 100;

/// A scenario whose every call meets 503s only: `calls` calls of the reference client
/// `client` (a YAML policy), expecting `jitter: present` and `conforms_to` the same policy.
fn failing_service(client: &str, calls: u32) -> Scenario {
    let yaml = format!(
        "version: 1\n\
         name: jitter sweep\n\
         endpoints: {{ api: {{ script: [ {{ status: 503 }} ] }} }}\n\
         operation: {{ endpoint: api, path: /items, calls: {calls} }}\n\
         client: {client}\n\
         expect: {{ jitter: present, conforms_to: {client} }}\n"
    );
    Scenario::from_yaml_str(&yaml, "sweep.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn verdict<'a>(report: &'a Report, check: &str) -> &'a Verdict {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

/// How often each judgement came out over a sweep.
#[derive(Debug, Default)]
struct Tally {
    passed: u64,
    failed: u64,
    not_judged: u64,
    /// The first failed run, to show.
    first_failure: Option<String>,
}

impl Tally {
    fn add(&mut self, report: &Report, check: &str) {
        let v = verdict(report, check);
        match v.judgement {
            Judgement::Passed => self.passed += 1,
            Judgement::Failed => {
                self.failed += 1;
                self.first_failure.get_or_insert_with(|| report.summary());
            }
            Judgement::NotJudged => self.not_judged += 1,
        }
    }
}

/// The library's jitter kinds: every generic jitter, AWS's random factor and SNS's ±10 %,
/// on windows from 10ms wide to seconds, decorrelated on a cap it reaches.
const JITTERED: &[&str] = &[
    "{ exponential: { initial: 100ms, jitter: full, max_attempts: 5 } }",
    "{ exponential: { initial: 10ms, jitter: full, max_attempts: 6 } }",
    "{ exponential: { initial: 100ms, jitter: equal, max_attempts: 5 } }",
    "{ exponential: { initial: 100ms, max_delay: 400ms, jitter: decorrelated, max_attempts: 6 } }",
    "{ linear: { initial: 100ms, step: 100ms, jitter: full, max_attempts: 5 } }",
    "{ fibonacci: { initial: 100ms, jitter: equal, max_attempts: 5 } }",
    "{ aws_standard: { max_attempts: 5 } }",
    "{ aws_standard_2_1: { max_attempts: 5 } }",
    "{ sns_delivery: { delivery_policy: { healthyRetryPolicy: { minDelayTarget: 1, maxDelayTarget: 8, numRetries: 4, backoffFunction: exponential } } } }",
];

#[test]
fn the_library_jitters_are_never_flagged() {
    for client in JITTERED {
        let scenario = failing_service(client, 4);
        let (mut jitter, mut conforms) = (Tally::default(), Tally::default());
        for seed in 0..SEEDS {
            let report = scenario.run_builtin_with_seed(seed);
            jitter.add(&report, "jitter");
            conforms.add(&report, "conforms_to");
        }
        assert_eq!(
            (jitter.failed, conforms.failed),
            (0, 0),
            "{client}: false alarms over {SEEDS} seeds (jitter {jitter:?}, conforms_to \
             {conforms:?})"
        );
        // Not vacuous: the check had the evidence to pass on (nearly) every seed.
        assert!(jitter.passed >= SEEDS * 98 / 100, "{client}: {jitter:?}");
        assert_eq!(conforms.passed, SEEDS, "{client}: {conforms:?}");
    }
}

/// A jittered scenario of the library whose `calls` calls each meet the script from its
/// start, expecting `jitter: present` beside the file's own `conforms_to`.
fn repeated(file: &str, calls: u32) -> Scenario {
    let path = format!("{}/../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut scenario = from_the_start(scenario, calls);
    let conforms_to = scenario.expect.conforms_to.clone();
    scenario.expect = expect().jitter_present();
    scenario.expect.conforms_to = conforms_to;
    scenario.must_fail.clear();
    scenario
}

#[test]
fn the_library_jittered_scenarios_are_never_flagged() {
    for file in [
        "policies/decorrelated-jitter.yaml",
        "policies/full-jitter-100-attempts.yaml",
        "policies/full-jitter-varies-across-calls.yaml",
        "aws/standard-jittered-exhaustion.yaml",
        "sns/jittered-linear-conforms.yaml",
        "http/429-retry-after.yaml",
    ] {
        let scenario = repeated(file, 3);
        let (mut jitter, mut conforms) = (Tally::default(), Tally::default());
        for seed in 0..50 {
            let report = scenario.run_builtin_with_seed(seed);
            jitter.add(&report, "jitter");
            conforms.add(&report, "conforms_to");
        }
        assert_eq!(
            (
                jitter.failed,
                conforms.failed,
                jitter.passed,
                conforms.passed
            ),
            (0, 0, 50, 50),
            "{file}: jitter {jitter:?}, conforms_to {conforms:?}"
        );
    }
}

/// The same policies with their jitter off.
const PLAIN: &[(&str, &str)] = &[
    (
        "{ exponential: { initial: 100ms, jitter: none, max_attempts: 5 } }",
        "{ exponential: { initial: 100ms, jitter: full, max_attempts: 5 } }",
    ),
    (
        "{ exponential: { initial: 100ms, max_delay: 400ms, jitter: none, max_attempts: 6 } }",
        "{ exponential: { initial: 100ms, max_delay: 400ms, jitter: decorrelated, max_attempts: 6 } }",
    ),
    (
        "{ linear: { initial: 100ms, step: 100ms, jitter: none, max_attempts: 5 } }",
        "{ linear: { initial: 100ms, step: 100ms, jitter: full, max_attempts: 5 } }",
    ),
    (
        "{ fibonacci: { initial: 100ms, jitter: none, max_attempts: 5 } }",
        "{ fibonacci: { initial: 100ms, jitter: equal, max_attempts: 5 } }",
    ),
    (
        "{ aws_standard: { max_attempts: 5, jitter: none } }",
        "{ aws_standard: { max_attempts: 5 } }",
    ),
    (
        "{ sns_delivery: { jitter: 0, delivery_policy: { healthyRetryPolicy: { minDelayTarget: 1, maxDelayTarget: 8, numRetries: 4, backoffFunction: exponential } } } }",
        "{ sns_delivery: { delivery_policy: { healthyRetryPolicy: { minDelayTarget: 1, maxDelayTarget: 8, numRetries: 4, backoffFunction: exponential } } } }",
    ),
];

#[test]
fn the_library_policies_with_jitter_off_are_caught() {
    for (client, intended) in PLAIN {
        let yaml = format!(
            "version: 1\n\
             name: jitter off\n\
             endpoints: {{ api: {{ script: [ {{ status: 503 }} ] }} }}\n\
             operation: {{ endpoint: api, path: /items, calls: 4 }}\n\
             client: {client}\n\
             expect: {{ jitter: present, conforms_to: {intended} }}\n"
        );
        let report = Scenario::from_yaml_str(&yaml, "off.yaml")
            .unwrap_or_else(|e| panic!("{e}"))
            .run_builtin();
        for check in ["jitter", "conforms_to"] {
            let v = verdict(&report, check);
            assert_eq!(
                v.judgement,
                Judgement::Failed,
                "{client}, {check}:\n{}",
                report.summary()
            );
        }
        assert!(
            verdict(&report, "jitter")
                .message
                .starts_with("the delays do not vary: each of the "),
            "{}",
            report.summary()
        );
        assert!(
            verdict(&report, "conforms_to")
                .message
                .starts_with("every one of the "),
            "{}",
            report.summary()
        );
    }
}

/// A hand-written retry loop with a fixed doubling and no jitter: 100ms, 200ms, 400ms, 800ms.
async fn doubling(env: Env) -> Result<u16, u16> {
    let mut delay = Duration::from_millis(100);
    let mut status = 0;
    for attempt in 1..=5 {
        let response = env.http_client().request(env.operation().request()).await;
        status = response.map(|r| r.status().as_u16()).unwrap_or(0);
        if status == 200 || attempt == 5 {
            break;
        }
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
    if status == 200 {
        Ok(status)
    } else {
        Err(status)
    }
}

#[test]
fn a_hand_written_loop_without_jitter_is_caught() {
    let scenario = Scenario::builder("a doubling loop")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/items").calls(3))
        .expect(expect().attempts(5).jitter_present())
        .build()
        .unwrap();
    let report = scenario.run(doubling);
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::Failed, "{}", report.summary());
    assert_eq!(
        v.message,
        "the delays do not vary: each of the 8 delays compared equals an earlier call's after \
         the same responses at the same instants (call 1 attempt 2: 0.100s as in call 0; call 1 \
         attempt 3: 0.200s as in call 0; call 1 attempt 4: 0.400s as in call 0; 5 more); a \
         client that jitters does that with probability below 1e-6, even leaving out the 2 at \
         0.800s, which could be a cap"
    );

    // With two calls the same matches are too few: not judged, and it says what it needs.
    let two = Scenario::builder("a doubling loop, twice")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/items").calls(2))
        .expect(expect().jitter_present())
        .build()
        .unwrap();
    let report = two.run(doubling);
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::NotJudged, "{}", report.summary());
    assert!(
        v.message
            .ends_with("needs about 1 more equal delays like these (more calls) to flag it"),
        "{}",
        v.message
    );
}

#[test]
fn a_fixed_delay_is_not_judged_since_a_cap_does_the_same() {
    let scenario = Scenario::builder("a fixed delay")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/items").calls(5))
        .client(fixed(secs(1)).max_attempts(5))
        .expect(expect().jitter_present())
        .build()
        .unwrap();
    let report = scenario.run_builtin();
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::NotJudged, "{}", report.summary());
    assert!(
        v.message
            .contains("leaving out the 16 at 1.000s, which could be a cap")
            && v.message.ends_with(
                "needs equal delays of two values or more, each above 6ms (a backoff that grows)"
            ),
        "{}",
        v.message
    );
}

#[test]
fn calls_that_saw_different_responses_are_not_compared() {
    // The script is shared: call 0 meets the 503s, call 1 only the 200.
    let scenario = Scenario::builder("one failing call")
        .endpoint(
            "api",
            endpoint().script([status(503).times(3), status(200)]),
        )
        .operation(get("api", "/items").calls(2))
        .client(exponential().initial(ms(100)).max_attempts(5))
        .expect(expect().jitter_present())
        .build()
        .unwrap();
    let report = scenario.run_builtin();
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::NotJudged, "{}", report.summary());
    assert_eq!(
        v.message,
        "no two calls retried after the same responses at the same instants (3 delays), so \
         no delay could be compared: needs 2 or more calls that each retry after \
         the same responses (a script whose last step repeats, or `scope: key`)"
    );
}

#[test]
fn delays_set_by_retry_after_are_not_compared() {
    // Every retry sleeps the server's 1s: a jittered client honouring it does the same.
    let scenario = Scenario::builder("Retry-After every time")
        .endpoint(
            "api",
            endpoint().script([status(503).retry_after(RetryAfterSpec::Seconds(1))]),
        )
        .operation(get("api", "/items").calls(3))
        .client(exponential().initial(ms(100)).max_attempts(4))
        .expect(expect().jitter_present())
        .build()
        .unwrap();
    let report = scenario.run_builtin();
    assert!(report.trace().attempts.len() == 12, "{}", report.summary());
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::NotJudged, "{}", report.summary());
    assert_eq!(
        v.message,
        "each of the run's 9 retry delays followed a `Retry-After` or `x-amz-retry-after`, \
         which a jittered client sleeps exactly too: needs 2 or more calls that each retry \
         after the same responses (a script whose last step repeats, or `scope: key`)"
    );
}

#[test]
fn jitter_needs_two_calls() {
    let err = Scenario::builder("one call")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/items"))
        .expect(expect().jitter_present())
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "<code> expect.jitter: `jitter` compares the delays of calls that retried after the \
         same responses, and the scenario makes 1 call, expected `operation.calls` of 2 or more"
    );
    assert_eq!(
        expect().jitter_present().jitter,
        Some(JitterCheckSpec::Present)
    );
}

#[test]
fn a_run_cut_short_says_so_when_not_judged() {
    let scenario = Scenario::builder("cut short")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/items").calls(2))
        .client(exponential().initial(ms(100)).max_attempts(5))
        .limits(LimitsSpec::default().max_virtual_time(ms(50)))
        .expect(expect().jitter_present())
        .build()
        .unwrap();
    let report = scenario.run_builtin();
    assert_eq!(report.trace().calls[0].result, CallResult::Stopped);
    let v = verdict(&report, "jitter");
    assert_eq!(v.judgement, Judgement::NotJudged, "{}", report.summary());
    assert!(
        v.message
            .contains("(the run ended early: virtual_time_limit)"),
        "{}",
        v.message
    );
}

/// On real sockets a client that sleeps exactly 200 ms each time passed `jitter: present`
/// under `tolerance: 0` in 2 of 5 runs: the scheduler alone made its delays differ. There
/// the check is not judged, whatever the tolerance.
#[test]
fn real_sockets_never_judge_jitter_from_noise() {
    let yaml = "version: 1\n\
         name: no jitter on real sockets\n\
         backend: real\n\
         tolerance: 0ms\n\
         endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 }, { status: 503 }, { status: 200 } ] } }\n\
         operation: { endpoint: api, path: /items, calls: 2 }\n\
         client: { fixed: { delay: 200ms, max_attempts: 3 } }\n\
         expect: { jitter: present }\n\
         limits: { wall: 20s }\n";
    let scenario = Scenario::from_yaml_str(yaml, "real.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin();
    let jitter = verdict(&report, "jitter");
    assert_eq!(
        jitter.judgement,
        Judgement::NotJudged,
        "{}",
        report.summary()
    );
    assert!(
        jitter.message.starts_with("the run was on real sockets"),
        "{}",
        jitter.message
    );
}
