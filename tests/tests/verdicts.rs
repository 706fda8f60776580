//! Honest verdicts: a run that ends early keeps what happened, a check never passes on
//! nothing, calls run as concurrently as the scenario says, and everything committed is
//! seen before the effects are judged.

use std::time::Duration;

use retrylab::scenario::Scenario;
use retrylab::{Judgement, Report, RunEnd, attempt};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "verdicts.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn judgement(report: &Report, check: &str) -> Judgement {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
        .judgement
}

const ALWAYS_503: &str = r#"
version: 1
name: always 503
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api }
expect:
  outcome: failure
  attempts: 101
  conforms_to: { fixed: { delay: 10ms } }
"#;

/// tryhard 0.5.0 made 64 attempts and then panicked: the report showed no attempt and said
/// `ok` to `attempts: 101`. Before the fix the trace was empty and `attempts`, `outcome` and
/// `conforms_to` passed.
#[test]
fn a_client_that_panics_keeps_its_attempts_and_nothing_is_judged_ok() {
    let report = scenario(ALWAYS_503).run(|env| async move {
        for n in 1..=64 {
            let _ = attempt(&env).await;
            if n == 64 {
                panic!("attempt counter overflowed");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok::<(), String>(())
    });
    assert_eq!(report.end(), &RunEnd::Panicked);
    assert_eq!(report.trace().attempts.len(), 64, "{}", report.summary());
    for check in ["outcome", "attempts", "conforms_to"] {
        assert_eq!(judgement(&report, check), Judgement::NotJudged, "{check}");
    }
    assert!(
        report.verdicts().iter().all(|v| !v.passed()),
        "{}",
        report.summary()
    );
    let summary = report.summary();
    assert!(
        summary.contains("not judged attempts: the run ended in a panic"),
        "{summary}"
    );
    assert!(summary.contains("attempt counter overflowed"), "{summary}");
}

/// The closure itself may panic, before it returns a future: the run keeps the calls that
/// were made.
#[test]
fn a_panic_in_the_second_call_keeps_the_first() {
    let yaml = r#"
version: 1
name: two calls
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api, calls: 2 }
expect: { outcome: success }
"#;
    let report = scenario(yaml).run(|env| {
        assert!(env.call_index() == 0, "no second call");
        async move { attempt(&env).await }
    });
    assert_eq!(report.end(), &RunEnd::Panicked);
    assert_eq!(report.trace().attempts.len(), 1);
    assert_eq!(report.trace().calls.len(), 2);
    assert_eq!(judgement(&report, "outcome"), Judgement::NotJudged);
}

/// Before the fix a run abandoned at the wall limit reported an empty trace.
#[test]
fn a_run_abandoned_at_the_wall_limit_keeps_its_attempts() {
    let yaml = r#"
version: 1
name: blocks after three attempts
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api }
expect: { attempts: 3 }
limits: { wall: 1s }
"#;
    let report = scenario(yaml).run(|env| async move {
        for _ in 0..3 {
            let _ = attempt(&env).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        // A blocking wait, bounded so the abandoned thread ends soon after the test.
        std::thread::sleep(Duration::from_secs(3));
        Ok::<(), String>(())
    });
    assert_eq!(report.end(), &RunEnd::WallLimit);
    assert_eq!(report.trace().attempts.len(), 3, "{}", report.summary());
    assert_eq!(report.trace().end_ms, 3000);
    assert_eq!(judgement(&report, "attempts"), Judgement::NotJudged);
}

/// With zero requests `conforms_to` said `ok: 0 attempts conform` and
/// `same_idempotency_key` said every call's requests carried one key.
#[test]
fn checks_that_need_requests_are_not_judged_without_any() {
    let yaml = r#"
version: 1
name: no request
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api, idempotency_key: { header: Idempotency-Key } }
expect:
  conforms_to: { fixed: { delay: 1s, max_attempts: 3 } }
  same_idempotency_key: true
  same_body: true
  gaps_each: { at_most: 1s }
  retry_after: { honour: max }
  not_retried_on: [ 400 ]
  max_rate: { window: 1s, at_most: 5 }
"#;
    let report = scenario(yaml).run(|_env| async { Ok::<(), String>(()) });
    for check in [
        "conforms_to",
        "same_idempotency_key",
        "same_body",
        "gaps_each",
        "retry_after",
        "not_retried_on",
        "max_rate",
    ] {
        assert_eq!(
            judgement(&report, check),
            Judgement::NotJudged,
            "{check}: {}",
            report.summary()
        );
    }
    assert!(!report.passed());
}

/// `must_fail` is satisfied by a real failure only: a check that was not judged caught
/// nothing.
#[test]
fn must_fail_is_not_satisfied_by_a_check_that_was_not_judged() {
    let yaml = r#"
version: 1
name: must fail on nothing
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
expect: { retry_after: { honour: max } }
must_fail: [ retry_after ]
"#;
    let report = scenario(yaml).run_builtin();
    assert_eq!(judgement(&report, "retry_after"), Judgement::NotJudged);
    assert_eq!(judgement(&report, "must_fail"), Judgement::Failed);
}

/// Three calls with concurrency 3 against a 1 s latency ran one after another and ended
/// at 3.008 s before the fix.
#[test]
fn concurrent_calls_overlap_and_keep_their_attempts() {
    let yaml = r#"
version: 1
name: three at once
endpoints: { api: { script: [ { status: 200, latency: 1s } ] } }
network: { latency: 1ms }
operation: { endpoint: api, calls: 3, concurrency: 3 }
expect: { outcome: success, attempts: 1, total_time: { at_most: 1100ms } }
"#;
    let report = scenario(yaml).run(|env| async move { attempt(&env).await });
    assert!(report.passed(), "{}", report.summary());
    let trace = report.trace();
    assert_eq!(trace.calls.len(), 3);
    assert!(trace.end_ms < 1100, "{}", report.summary());
    let mut calls: Vec<u32> = trace.attempts.iter().map(|a| a.call_id).collect();
    calls.sort_unstable();
    assert_eq!(calls, [0, 1, 2]);
    // Each call is attributed its own attempt, on its own connection.
    let mut conns: Vec<u64> = trace.attempts.iter().filter_map(|a| a.conn_id).collect();
    conns.dedup();
    assert_eq!(conns.len(), 3, "{}", report.summary());
}

/// Concurrency caps the calls in flight: 4 calls, 2 at a time, 1 s each, end at ~2 s.
#[test]
fn concurrency_caps_the_calls_in_flight() {
    let yaml = r#"
version: 1
name: two at a time
endpoints: { api: { script: [ { status: 200, latency: 1s } ] } }
network: { latency: 1ms }
operation: { endpoint: api, calls: 4, concurrency: 2 }
"#;
    let report = scenario(yaml).run(|env| async move { attempt(&env).await });
    assert!(report.passed(), "{}", report.summary());
    let starts: Vec<u64> = report.trace().calls.iter().map(|c| c.start_ms).collect();
    assert_eq!(starts[..2], [0, 0]);
    assert!(starts[2] >= 1000 && starts[3] >= 1000, "{starts:?}");
    assert!(report.trace().end_ms < 2100, "{}", report.summary());
}

/// A `before_response` commit behind a 3 s latency, after a 1 s attempt timeout: the last
/// call's commit was still scheduled when it returned, and without `drain` the run judged a
/// ledger one effect short (before the fix: 100 attempts, 99 effects, and `exactly_once`
/// failed for the wrong reason).
#[test]
fn commits_still_scheduled_when_the_calls_return_reach_the_ledger() {
    let yaml = r#"
version: 1
name: slow commits
endpoints:
  api:
    script: [ { status: 200, latency: 3s, commit: before_response } ]
operation: { endpoint: api, method: POST, calls: 100 }
client: { fixed: { delay: 1s, max_attempts: 1, attempt_timeout: 1s } }
expect: { effects: at_least_once }
"#;
    let report = scenario(yaml).run_builtin();
    assert_eq!(report.trace().attempts.len(), 100);
    assert_eq!(report.trace().effects.len(), 100, "{}", report.summary());
    assert_eq!(judgement(&report, "effects"), Judgement::Passed);
    // The run ends when the last commit lands: call 99 started at 99 s.
    assert_eq!(report.trace().end_ms, 99_000 + 3_000);
}

/// When the run cannot settle within `limits.max_virtual_time`, effects are not judged
/// and the verdict says why.
#[test]
fn effects_are_not_judged_when_the_run_cannot_settle() {
    let yaml = r#"
version: 1
name: a commit two days away
endpoints:
  api:
    script: [ { status: 200, latency: 2d, commit: before_response } ]
operation: { endpoint: api, method: POST }
client: { fixed: { delay: 1s, max_attempts: 1, attempt_timeout: 1s } }
expect: { effects: at_most_once, late_requests: 0 }
limits: { max_virtual_time: 1d }
"#;
    let report = scenario(yaml).run_builtin();
    assert_eq!(report.end(), &RunEnd::Completed);
    for check in ["effects", "late_requests"] {
        let verdict = report.verdicts().iter().find(|v| v.check == check).unwrap();
        assert_eq!(
            verdict.judgement,
            Judgement::NotJudged,
            "{}",
            report.summary()
        );
        assert!(
            verdict.message.contains("still being processed"),
            "{}",
            verdict.message
        );
    }
}

/// What endpoints receive while the run cannot settle may still be on its way: a request
/// held by a partition for days passed `requests_received: { max: 2 }` on the two that had
/// arrived.
#[test]
fn requests_received_is_not_judged_when_the_run_cannot_settle() {
    let yaml = r#"
version: 1
name: a request held for days
endpoints: { api: { script: [ { status: 503 }, { status: 503 }, { status: 200 } ] } }
network: { faults: [ { at: 10ms, partition: api, for: 3000d } ] }
operation: { endpoint: api }
client: { fixed: { delay: 1s, max_attempts: 3, attempt_timeout: 1s } }
expect: { requests_received: { max: 2 } }
limits: { max_virtual_time: 1d }
"#;
    let report = scenario(yaml).run_builtin();
    assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
    assert_eq!(
        judgement(&report, "requests_received"),
        Judgement::NotJudged,
        "{}",
        report.summary()
    );
}

/// A client with a `SystemTime` deadline ended after 7,655 attempts on a loaded machine and
/// hit the 10,000-attempt limit on an idle one: a run that hits a virtual limit names the
/// real clock as the likely cause and how to check.
#[test]
fn a_limit_verdict_suspects_a_real_clock_deadline() {
    let yaml = r#"
version: 1
name: a deadline on the real clock
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api }
limits: { max_client_attempts: 50 }
"#;
    let report = scenario(yaml).run(|env| async move {
        let deadline = std::time::SystemTime::now() + Duration::from_secs(30);
        while std::time::SystemTime::now() < deadline {
            if attempt(&env).await.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Err("deadline passed")
    });
    assert_eq!(report.end(), &RunEnd::AttemptLimit);
    let limit = report
        .failures()
        .find(|v| v.check == "attempt_limit")
        .expect("an attempt_limit verdict");
    assert!(
        limit.message.contains("reads the real clock"),
        "{}",
        limit.message
    );
    assert!(
        limit.message.contains("env.std_clock()"),
        "{}",
        limit.message
    );
}

/// A built-in client that was sleeping towards its next attempt when the virtual time
/// limit came is said to, with the instant it was due, rather than suspected of reading
/// the real clock.
#[test]
fn a_limit_verdict_names_the_built_in_clients_next_attempt() {
    let yaml = r#"
version: 1
name: a Retry-After past the limit
endpoints: { api: { script: [ { status: 503, retry_after: 7200 } ] } }
operation: { endpoint: api }
client: { fixed: { delay: 1s, max_attempts: 3 } }
limits: { max_virtual_time: 1h }
"#;
    let report = scenario(yaml).run_builtin();
    assert_eq!(report.end(), &RunEnd::VirtualTimeLimit);
    let limit = report
        .failures()
        .find(|v| v.check == "virtual_time_limit")
        .expect("a virtual_time_limit verdict");
    assert!(
        limit
            .message
            .contains("The built-in client's next attempt was due at 7200.000s, after the limit"),
        "{}",
        limit.message
    );
    assert!(!limit.message.contains("real clock"), "{}", limit.message);
}

/// The built-in client on `yaml`, and the verdict of `check`.
fn builtin(yaml: &str, check: &str) -> (Report, Judgement) {
    let report = scenario(yaml).run_builtin();
    let judged = judgement(&report, check);
    (report, judged)
}

/// `status: known_failure` counted any verdict that did not pass as the known failure: a
/// scenario whose only expectation went unjudged passed "fails as known (`retry_after`)".
#[test]
fn a_known_failure_is_not_shown_by_a_check_that_was_not_judged() {
    let (report, judged) = builtin(
        "version: 1\nname: x\nstatus: known_failure\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { retry_after: { honour: max } }\n",
        "known_failure",
    );
    assert_eq!(judged, Judgement::NotJudged, "{}", report.summary());
    assert!(!report.passed(), "{}", report.summary());
    // A check that really fails still shows it.
    let (report, judged) = builtin(
        "version: 1\nname: x\nstatus: known_failure\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { attempts: 3 }\n",
        "known_failure",
    );
    assert_eq!(judged, Judgement::Passed, "{}", report.summary());
}

/// `retry_after` counted a value before knowing whether it bounded anything: an invalid one
/// under `invalid: ignore`, or one after which the call stopped, passed "all 1 Retry-After
/// values were honoured" with no bound applied.
#[test]
fn retry_after_needs_a_value_it_could_bound() {
    for (script, client) in [
        (
            "[ { status: 503, retry_after: { raw: soon } }, { status: 200 } ]",
            "{ fixed: { delay: 10ms } }",
        ),
        (
            "[ { status: 429, retry_after: 2 }, { status: 200 } ]",
            "no_retry",
        ),
    ] {
        let (report, judged) = builtin(
            &format!(
                "version: 1\nname: x\nendpoints: {{ api: {{ script: {script} }} }}\n\
                 operation: {{ endpoint: api }}\nclient: {client}\n\
                 expect: {{ retry_after: {{ honour: max }} }}\n"
            ),
            "retry_after",
        );
        assert_eq!(judged, Judgement::NotJudged, "{}", report.summary());
    }
    // An invalid value under `give_up` is judged: stopping is what it asks.
    let (report, judged) = builtin(
        "version: 1\nname: x\n\
         endpoints: { api: { script: [ { status: 503, retry_after: { raw: soon } } ] } }\n\
         operation: { endpoint: api }\nclient: no_retry\n\
         expect: { retry_after: { honour: max, invalid: give_up } }\n",
        "retry_after",
    );
    assert_eq!(judged, Judgement::Passed, "{}", report.summary());
}

/// `attempts: { max: 3 }` allows 0, and that turned the bypass diagnosis off: a client with
/// its own HTTP stack passed on zero attempts. Only an expectation that requires zero does.
#[test]
fn an_expectation_that_allows_zero_attempts_keeps_the_bypass_diagnosis() {
    let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                operation: { endpoint: api }\nexpect: { attempts: { max: 3 } }\n";
    // The client "calls" without the harness: nothing reaches the endpoint.
    let report = scenario(yaml).run(|_env| async move { Ok::<_, String>(200) });
    assert_eq!(judgement(&report, "bypass"), Judgement::Failed);
    assert!(!report.passed(), "{}", report.summary());
    let zero = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                expect: { attempts: { max: 0 } }\n";
    let report = scenario(zero).run(|_env| async move { Ok::<_, String>(200) });
    assert!(report.passed(), "{}", report.summary());
}

/// `effects: exactly_once` passed "0 effects over 1 calls" when every connection was refused
/// and no request reached the endpoint.
#[test]
fn effects_are_not_judged_when_no_request_arrived() {
    let (report, judged) = builtin(
        "version: 1\nname: x\nendpoints: { api: { connect: [ { action: refuse } ] } }\n\
         operation: { endpoint: api }\nclient: { fixed: { max_attempts: 2 } }\n\
         expect: { effects: exactly_once }\n",
        "effects",
    );
    assert_eq!(judged, Judgement::NotJudged, "{}", report.summary());
}

/// `header` compared only the requests a call made, so two values passed on one request;
/// `same_body` passed on calls of one request, where nothing can differ.
#[test]
fn request_checks_need_the_requests_they_compare() {
    let (report, judged) = builtin(
        "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api, headers: { X-Try: \"1\" } }\nclient: no_retry\n\
         expect: { header: { name: X-Try, values: [\"1\", \"2\"] } }\n",
        "header",
    );
    assert_eq!(judged, Judgement::Failed, "{}", report.summary());
    let (report, judged) = builtin(
        "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api, method: POST, body: abc }\nclient: no_retry\n\
         expect: { same_body: true }\n",
        "same_body",
    );
    assert_eq!(judged, Judgement::NotJudged, "{}", report.summary());
}

/// An AWS client's idempotency token meets dedupe: the in-flight answer is a throttling
/// error, and the last attempt gets the replay of a step that answered after the attempt
/// timeout. `conforms_to` judged the 400s as bare statuses (not retried by the policy) and
/// the replay without its step, and the scenario was warned that no call could succeed.
const AWS_IN_FLIGHT: &str = r#"
version: 1
name: an in-flight throttle, then a replay
endpoints:
  api:
    dedupe:
      header: x-amz-client-token
      in_flight:
        status: 400
        headers: { x-amzn-ErrorType: ThrottlingException }
        body: '{"__type":"ThrottlingException","message":"in progress"}'
    script:
      - { status: 200, latency: 2s }
network: { latency: 1ms }
operation:
  endpoint: api
  method: POST
  body: '{}'
  idempotency_key: { header: x-amz-client-token }
client:
  aws_standard: { attempt_timeout: 1s, max_attempts: 5 }
expect:
  outcome: success
  conforms_to: { aws_standard: { max_attempts: 5 } }
drain: 5s
"#;

#[test]
fn dedupe_answers_are_judged_as_they_were_sent() {
    let (report, conforms) = builtin(AWS_IN_FLIGHT, "conforms_to");
    let lines = report.trace().compact_timeline();
    assert!(
        lines.iter().any(|l| l.contains("-> 400 (in flight: #1)"))
            && lines
                .last()
                .is_some_and(|l| l.contains("-> 200 (replay of #1)")),
        "{}",
        report.summary()
    );
    assert_eq!(conforms, Judgement::Passed, "{}", report.summary());
    assert!(
        report
            .warnings()
            .iter()
            .all(|w| !w.contains("no call can end in success")),
        "{:?}",
        report.warnings()
    );
}

/// The key committed with a request that was reset before it answered; the rerun after it
/// answered a throttling error, and that is what dedupe replays from then on. The replays
/// name the rerun and are judged as its step (a throttle the AWS policy retries), not as
/// the reset of the request that committed.
const RERUN_THEN_REPLAY: &str = r#"
version: 1
name: a replay of a rerun
endpoints:
  api:
    dedupe: { header: x-amz-client-token }
    script:
      - { fail: reset, commit: before_response }
      - status: 400
        headers: { x-amzn-ErrorType: ThrottlingException }
        body: '{"__type":"ThrottlingException","message":"slow down"}'
      - { status: 200 }
operation:
  endpoint: api
  method: POST
  body: '{}'
  idempotency_key: { header: x-amz-client-token }
client:
  aws_standard: { max_attempts: 4 }
expect:
  conforms_to: { aws_standard: { max_attempts: 4 } }
"#;

#[test]
fn a_replay_names_the_request_whose_response_it_repeats() {
    let (report, conforms) = builtin(RERUN_THEN_REPLAY, "conforms_to");
    let lines = report.trace().compact_timeline();
    let labelled: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_once("-> ").map(|(_, rest)| rest))
        .collect();
    assert!(
        labelled.len() == 4
            && labelled[1].starts_with("400 (rerun of #1)")
            && labelled[2].starts_with("400 (replay of #2)")
            && labelled[3].starts_with("400 (replay of #2)"),
        "{}",
        report.summary()
    );
    assert_eq!(conforms, Judgement::Passed, "{}", report.summary());
}
