//! Warnings (docs/scenario-format.md#warnings): contradictions found from the scenario alone
//! (`Scenario::warnings()`, copied into every report), and script steps no request consumed
//! (found after a run). Warnings fail nothing.

use retrylab::{Report, Scenario};

/// A scenario from its YAML, as file `w.yaml`.
fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "w.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// One endpoint `api` with `script`, an operation `extra` (YAML flow entries), the client
/// and the expectations (flow entries), one call.
fn with(script: &str, operation: &str, client: &str, expect: &str) -> Scenario {
    scenario(&format!(
        "version: 1\nname: w\nendpoints:\n  api:\n    script: {script}\n\
         operation: {{ endpoint: api{operation} }}\nclient: {client}\nexpect: {{ {expect} }}\n"
    ))
}

/// The static warnings, as text.
fn warnings(s: &Scenario) -> Vec<String> {
    s.warnings().iter().map(ToString::to_string).collect()
}

const EXP3: &str = "{ exponential: { initial: 10ms, jitter: none, max_attempts: 3 } }";

// ---- the wall clock -------------------------------------------------------------------------

#[test]
fn an_epoch_on_real_sockets_is_explained_not_refused() {
    let real = scenario(
        "version: 1\nname: w\nbackend: real\nepoch: 2026-01-01T00:00:00Z\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\noperation: { endpoint: api }\n",
    );
    assert_eq!(
        warnings(&real),
        [
            "w.yaml:4:8 epoch: `epoch` is not used on `backend: real`: the wall clock there is \
          the real one, read once as the run starts, and every `Date` and HTTP-date \
          `Retry-After` is written from it"
        ]
    );
    // On the sim network the epoch is the wall clock, and says nothing wrong.
    let sim = scenario(
        "version: 1\nname: w\nepoch: 2026-01-01T00:00:00Z\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\noperation: { endpoint: api }\n",
    );
    assert!(warnings(&sim).is_empty(), "{:?}", warnings(&sim));
}

// ---- contradictions: attempt counts -------------------------------------------------------

#[test]
fn attempts_above_the_built_in_clients_max_attempts() {
    let s = with("[ { status: 503 } ]", "", EXP3, "attempts: 4");
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:21 expect.attempts: every call must make at least 4 attempts, but the \
          built-in client (`exponential`) makes at most 3 per call"
        ]
    );
    // The minimum of a range counts; a range that reaches 3 is fine.
    let s = with("[ { status: 503 } ]", "", EXP3, "attempts: { min: 5 }");
    assert_eq!(warnings(&s).len(), 1);
    let s = with(
        "[ { status: 503 } ]",
        "",
        EXP3,
        "attempts: { min: 2, max: 4 }",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn attempts_use_the_policys_own_count_and_defaults() {
    // The default max_attempts of a generic policy is 3.
    let s = with(
        "[ { status: 503 } ]",
        "",
        "{ fixed: { delay: 1s } }",
        "attempts: 4",
    );
    assert!(warnings(&s)[0].contains("makes at most 3 per call"));
    // SNS counts retries natively: 3 retries are 4 attempts.
    let s = with(
        "[ { status: 503 } ]",
        "",
        "{ sns_delivery: {} }",
        "attempts: 4",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
    let s = with(
        "[ { status: 503 } ]",
        "",
        "{ sns_delivery: {} }",
        "attempts: 5",
    );
    assert!(warnings(&s)[0].contains("(`sns_delivery`) makes at most 4 per call"));
}

#[test]
fn no_attempt_at_all_contradicts_a_built_in_client() {
    let s = with("[ { status: 200 } ]", "", EXP3, "attempts: 0");
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:21 expect.attempts: no call may make an attempt, but the built-in client \
          (`exponential`) makes at least one per call"
        ]
    );
}

#[test]
fn total_attempts_against_calls_and_max_attempts() {
    let s = with(
        "[ { status: 503 } ]",
        ", calls: 2",
        EXP3,
        "total_attempts: 7",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:27 expect.total_attempts: the run must make at least 7 attempts, but the \
          built-in client (`exponential`) makes at most 3 per call, 6 in 2 calls"
        ]
    );
    let s = with(
        "[ { status: 200 } ]",
        ", calls: 3",
        EXP3,
        "total_attempts: { max: 2 }",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:27 expect.total_attempts: the run may make at most 2 attempts, but the \
          built-in client (`exponential`) makes at least one in each of its 3 calls"
        ]
    );
    let s = with(
        "[ { status: 503 } ]",
        ", calls: 2",
        EXP3,
        "total_attempts: 6",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn more_gaps_than_retries_point_at_the_first_gap_that_never_comes() {
    let s = with(
        "[ { status: 503 } ]",
        "",
        EXP3,
        "gaps: [ { at_least: 0s }, { at_least: 0s }, { at_least: 0s } ]",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:55 expect.gaps[2]: 3 gaps need 4 attempts per call, but the built-in \
          client (`exponential`) makes at most 3, so this gap never comes"
        ]
    );
    let s = with(
        "[ { status: 503 } ]",
        "",
        EXP3,
        "gaps: [ { at_least: 0s }, { at_least: 0s } ]",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn limits_stop_the_run_before_the_attempts_expected_of_any_client() {
    let yaml = "version: 1\nname: w\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nclient: { custom: mine }\n\
                limits: { max_client_attempts: 2 }\n\
                expect: { attempts: 3, total_attempts: { min: 2 } }\n";
    assert_eq!(
        warnings(&scenario(yaml)),
        [
            "w.yaml:7:21 expect.attempts: every call must make at least 3 attempts, but \
          `limits.max_client_attempts: 2` stops the run at attempt 3"
        ]
    );
}

// ---- contradictions: how a call ends ------------------------------------------------------

#[test]
fn stop_reason_and_outcome_must_agree() {
    // A 200 is within reach: only the stop reason contradicts the outcome.
    let s = with(
        "[ { status: 503 }, { status: 200 } ]",
        "",
        EXP3,
        "outcome: success, stop_reason: max_attempts_exceeded",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:20 expect.outcome: no call can end in success: the built-in client returns \
          `Err` when it stops with `max_attempts_exceeded`"
        ]
    );
    let s = with(
        "[ { status: 200 } ]",
        ", calls: 2",
        EXP3,
        "outcomes: [ success, failure ], stop_reason: success",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:32 expect.outcomes[1]: call 1 cannot end in failure: the built-in client \
          returns `Ok` when it stops with `success`"
        ]
    );
}

#[test]
fn max_attempts_exceeded_means_every_attempt_was_made() {
    let s = with(
        "[ { status: 503 } ]",
        "",
        EXP3,
        "attempts: 2, stop_reason: max_attempts_exceeded",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:21 expect.attempts: `stop_reason: max_attempts_exceeded` means every call \
          made all 3 attempts of the built-in client (`exponential`), which this count excludes"
        ]
    );
    let s = with(
        "[ { status: 503 } ]",
        "",
        EXP3,
        "attempts: 3, stop_reason: max_attempts_exceeded",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn success_that_no_step_can_give() {
    // Every step is an error: no call can succeed, whatever the attempt count.
    let s = with(
        "[ { status: 503, times: 2 }, { fail: reset } ]",
        "",
        EXP3,
        "outcome: success",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:20 expect.outcome: no call can end in success: no step of \
          `endpoints.api.script` answers with a 2xx before the client's attempt timeout"
        ]
    );
    // The 200 comes after more 503s than the client has attempts.
    let s = with(
        "[ { status: 503, times: 3 }, { status: 200 } ]",
        "",
        EXP3,
        "outcome: success",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:8:20 expect.outcome: no call can end in success: the built-in client makes \
          at most 3 attempts per call, so the first call's requests reach only steps 1 to 1 of \
          `endpoints.api.script`, and none of them answers with a 2xx before the client's \
          attempt timeout"
        ]
    );
    // Within reach: no warning.
    let s = with(
        "[ { status: 503, times: 2 }, { status: 200 } ]",
        "",
        EXP3,
        "outcome: success",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn later_and_concurrent_calls_may_reach_any_step() {
    // Call 1 continues the endpoint's counter, so it may reach the 200.
    let s = with(
        "[ { status: 503, times: 3 }, { status: 200 } ]",
        ", calls: 2",
        EXP3,
        "outcomes: [ failure, success ]",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
    // Concurrent calls share the counter: the first call is not known to come first.
    let s = with(
        "[ { status: 503, times: 3 }, { status: 200 } ]",
        ", calls: 2, concurrency: 2, idempotency_key: { header: Idempotency-Key }",
        EXP3,
        "outcome: success",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
    // But a call 1 expected to succeed against a script that never does is warned of.
    let s = with(
        "[ { status: 503 } ]",
        ", calls: 2",
        EXP3,
        "outcomes: [ failure, success ]",
    );
    assert_eq!(warnings(&s).len(), 1);
    assert!(
        warnings(&s)[0].starts_with("w.yaml:8:32 expect.outcomes[1]: call 1 cannot"),
        "{:?}",
        warnings(&s)
    );
}

/// A warning per entry of `outcomes`, one per call, printed every one of them: at most 50
/// are reported now, then a line counting the rest.
#[test]
fn warnings_are_reported_up_to_a_limit_then_counted() {
    let outcomes = vec!["success"; 100].join(", ");
    let s = with(
        "[ { status: 503 } ]",
        ", calls: 100",
        EXP3,
        &format!("outcomes: [ {outcomes} ]"),
    );
    let warnings = warnings(&s);
    assert_eq!(warnings.len(), retrylab::internals::MAX_REPORTED_ERRORS + 1);
    assert!(
        warnings[49].starts_with("w.yaml:8:") && warnings[49].contains("call 49 cannot"),
        "{}",
        warnings[49]
    );
    assert_eq!(
        warnings[50],
        format!(
            "{} 50 more warnings from here on are not shown (at most 50 warnings are \
             reported, the first by position)",
            warnings[50].split(' ').next().unwrap_or_default()
        )
    );
}

#[test]
fn success_against_steps_that_fail_time_out_or_cut() {
    let timeout = "{ exponential: { max_attempts: 2, attempt_timeout: 1s } }";
    // A 200 after the attempt timeout is a timeout.
    let s = with(
        "[ { status: 200, latency: 2s } ]",
        "",
        timeout,
        "outcome: success",
    );
    assert_eq!(warnings(&s).len(), 1);
    let s = with(
        "[ { status: 200, latency: 1s } ]",
        "",
        timeout,
        "outcome: success",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
    // hang and close never answer; a cut 200 may still carry the whole response.
    let s = with(
        "[ { fail: hang }, { fail: close } ]",
        "",
        timeout,
        "outcome: success",
    );
    assert_eq!(warnings(&s).len(), 1);
    let s = with(
        "[ { status: 200, fail: { close: { after_bytes: 1000 } } } ]",
        "",
        timeout,
        "outcome: success",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
}

#[test]
fn success_against_connects_and_routes() {
    let yaml = |endpoint: &str| {
        scenario(&format!(
            "version: 1\nname: w\nendpoints:\n  api: {endpoint}\n\
             operation: {{ endpoint: api, method: POST, path: /orders?x=1, headers: {{ X-T: a }} }}\n\
             client: {EXP3}\nexpect: {{ outcome: success }}\n"
        ))
    };
    let refused = yaml(
        "{ connect: [ { action: refuse, times: 2 }, { action: blackhole } ], script: [ { status: 200 } ] }",
    );
    assert_eq!(
        warnings(&refused),
        [
            "w.yaml:7:20 expect.outcome: no call can end in success: endpoint `api` never \
          accepts a connection (its `connect:` schedule only refuses or black-holes)"
        ]
    );
    // No script and no routes: every request gets 200, so success is no contradiction.
    let nothing = yaml("{}");
    assert_eq!(warnings(&nothing), Vec::<String>::new());
    let other_route = yaml(
        "{ routes: [ { match: { method: GET, path: /orders }, script: [ { status: 200 } ] } ] }",
    );
    assert!(
        warnings(&other_route)[0].ends_with(
            "no route of endpoint `api` matches `POST /orders`, so every request gets 404"
        )
    );
    // The first route that matches (the query is not part of the path) answers 503 only.
    let first = yaml(
        "{ routes: [ { match: { path: /orders, headers: { X-T: a } }, script: [ { status: 503 } ] }, \
           { match: {}, script: [ { status: 200 } ] } ] }",
    );
    assert!(warnings(&first)[0].ends_with(
        "no step of `endpoints.api.routes[0].script` answers with a 2xx before the client's \
         attempt timeout"
    ));
    // A header the operation does not set may come from elsewhere: nothing is certain.
    let unknown = yaml(
        "{ routes: [ { match: { headers: { X-Other: b } }, script: [ { status: 503 } ] }, \
           { match: {}, script: [ { status: 200 } ] } ] }",
    );
    assert_eq!(warnings(&unknown), Vec::<String>::new());
    // A dedupe answer that is a 2xx could be the success.
    let dedupe = yaml("{ dedupe: { header: X-T, in_flight: 200 }, script: [ { status: 503 } ] }");
    assert_eq!(warnings(&dedupe), Vec::<String>::new());
}

#[test]
fn an_operation_the_broker_always_refuses() {
    let yaml = |operation: &str| {
        scenario(&format!(
            "version: 1\nname: w\nendpoints:\n  broker: {{ kind: broker, topics: [orders] }}\n\
             operation: {{ endpoint: broker{operation} }}\n\
             client: {EXP3}\nexpect: {{ duplicates: {{ at_most: 0 }} }}\n"
        ))
    };
    let post = ", method: POST, path: /topics/orders/messages";
    assert_eq!(
        warnings(&yaml(&format!("{post}, body: 'not json'"))),
        [
            "w.yaml:5:83 operation.body: broker `broker` refuses every request of the operation: \
             the body is not a JSON object with a string `key` (or none), so every request gets \
             400 and reaches no step"
        ]
    );
    assert_eq!(
        warnings(&yaml(post)),
        [
            "w.yaml:5:12 operation: broker `broker` refuses every request of the operation: the \
             operation sends no body, and a send's body must be a JSON object, so every request \
             gets 400 and reaches no step"
        ]
    );
    assert_eq!(
        warnings(&yaml(
            ", method: POST, path: /topics/payments/messages, body: '{}'"
        )),
        [
            "w.yaml:5:52 operation.path: broker `broker` refuses every request of the operation: \
             `/topics/payments/messages` names a topic that is not one of its `topics`, so every \
             request gets 404 and reaches no step"
        ]
    );
    assert_eq!(
        warnings(&yaml(", path: /topics/orders/messages, body: '{}'")),
        [
            "w.yaml:5:38 operation.path: broker `broker` refuses every request of the operation: \
             `GET /topics/orders/messages` is not a send (`POST /topics/{topic}/messages`), so \
             every request gets 404 and reaches no step"
        ]
    );
    // A send it takes, a query included, draws nothing.
    let fine =
        yaml(", method: POST, path: '/topics/orders/messages?x=1', body: '{\"key\": \"o-1\"}'");
    assert_eq!(warnings(&fine), Vec::<String>::new());
}

// ---- contradictions: which client, and must_fail ------------------------------------------

#[test]
fn a_client_written_in_rust_is_not_judged_by_the_built_in_rules() {
    // No `client:`: the scenario is meant for a Rust client, which may retry as it likes.
    let yaml = "version: 1\nname: w\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nexpect: { attempts: 4, outcome: success }\n";
    assert_eq!(warnings(&scenario(yaml)), Vec::<String>::new());
    let custom = yaml.replace("expect:", "client: { custom: mine }\nexpect:");
    assert_eq!(warnings(&scenario(&custom)), Vec::<String>::new());
    // `client: no_retry` written out is the built-in client: one attempt.
    let no_retry = yaml.replace("expect:", "client: no_retry\nexpect:");
    assert_eq!(warnings(&scenario(&no_retry)).len(), 2);
}

#[test]
fn a_check_that_must_fail_gets_no_warning() {
    let yaml = "version: 1\nname: w\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\n\
                client: { exponential: { max_attempts: 3 } }\n\
                expect: { attempts: 4, outcome: failure }\nmust_fail: [attempts]\n";
    assert_eq!(warnings(&scenario(yaml)), Vec::<String>::new());
}

#[test]
fn the_scenario_library_has_no_contradiction() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
    let files = retrylab::suite::scenario_files(std::path::Path::new(root)).expect("the library");
    assert!(files.len() > 50, "{} files", files.len());
    for file in files {
        let s = match Scenario::load(&file.path) {
            Ok(s) => s,
            // Checked by the build that has the feature it needs.
            Err(e) if e.lacking_feature().is_some() => continue,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(warnings(&s), Vec::<String>::new(), "{}", file.display);
    }
}

#[test]
fn a_run_carries_the_static_warnings() {
    let s = with(
        "[ { status: 503 } ]",
        "",
        "{ exponential: { initial: 10ms, max_attempts: 2 } }",
        "outcome: failure, gaps: [ { at_least: 0s }, { at_least: 0s } ]",
    );
    let report = s.run_builtin();
    // The run fails on its own account (the second gap never comes); the warning says why
    // before anything runs.
    assert_eq!(report.warnings().len(), 1);
    assert!(
        report.warnings()[0].starts_with("w.yaml:8:55 expect.gaps[1]: 2 gaps need 3"),
        "{:?}",
        report.warnings()
    );
    assert!(
        report
            .summary()
            .contains("  warning: w.yaml:8:55 expect.gaps[1]")
    );
}

// ---- dead steps ---------------------------------------------------------------------------

/// The dead-step warnings of a run of the built-in client (the scenario has no other).
fn dead(report: &Report) -> Vec<String> {
    report.warnings().to_vec()
}

#[test]
fn a_step_after_the_client_gave_up_is_dead() {
    let s = with(
        "[ { status: 503, times: 3 }, { status: 200 } ]",
        "",
        "{ exponential: { initial: 10ms, max_attempts: 2 } }",
        "outcome: failure",
    );
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    // The 503 step answered 2 of its 3 requests: partly consumed, not reported. The 200
    // after it never answered.
    assert_eq!(
        dead(&report),
        [
            "w.yaml:5:42 endpoints.api.script[1]: no request consumed this step (endpoint `api`, \
          step 2 of 2)"
        ]
    );
    assert!(report.snapshot_text().contains(
        "warnings:\n  w.yaml:5:42 endpoints.api.script[1]: no request consumed this step"
    ));
}

#[test]
fn a_script_consumed_to_its_repeating_last_step_has_no_dead_step() {
    let s = with(
        "[ { status: 503 }, { status: 429 }, { status: 200 } ]",
        ", calls: 3",
        "{ exponential: { initial: 10ms, max_attempts: 3 } }",
        "outcome: success",
    );
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(dead(&report), Vec::<String>::new());
    assert!(!report.snapshot_text().contains("warnings:"));
}

#[test]
fn routes_that_no_request_reached() {
    let s = scenario(
        "version: 1\nname: w\nendpoints:\n  api:\n    routes:\n\
         \x20     - match: { path: /a }\n        script: [ { status: 200 } ]\n\
         \x20     - match: { path: /b }\n        script: [ { status: 200 } ]\n\
         \x20     - match: { path: /c }\n        script: [ { status: 503 }, { status: 200 } ]\n\
         operation: { endpoint: api, path: /a }\nclient: no_retry\nexpect: { outcome: success }\n",
    );
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        dead(&report),
        [
            "w.yaml:9:19 endpoints.api.routes[1].script[0]: no request consumed this step \
             (endpoint `api`, route 2, step 1 of 1)",
            "w.yaml:11:17 endpoints.api.routes[2].script: no request consumed any of the 2 \
             steps of this script (endpoint `api`, route 3)",
        ]
    );
}

#[test]
fn a_scoped_script_counts_a_step_consumed_in_any_scope() {
    // One request per connection: with `scope: connection` every request is a connection's
    // first, so the 200 is never consumed; with the endpoint's counter it is.
    let run = |scope: &str| {
        let s = scenario(&format!(
            "version: 1\nname: w\nendpoints:\n  api:\n    keep_alive: {{ max_requests: 1 }}\n\
             \x20   scope: {scope}\n    script: [ {{ status: 503 }}, {{ status: 200 }} ]\n\
             operation: {{ endpoint: api }}\n\
             client: {{ exponential: {{ initial: 10ms, max_attempts: 3 }} }}\n"
        ));
        s.run_builtin()
    };
    let per_connection = run("connection");
    assert_eq!(per_connection.trace().attempts.len(), 3);
    assert_eq!(
        dead(&per_connection),
        [
            "w.yaml:7:32 endpoints.api.script[1]: no request consumed this step (endpoint `api`, \
          step 2 of 2)"
        ]
    );
    let endpoint = run("endpoint");
    assert_eq!(endpoint.trace().attempts.len(), 2);
    assert_eq!(dead(&endpoint), Vec::<String>::new());
}

#[test]
fn a_run_that_did_not_complete_reports_no_dead_step() {
    // The attempt limit stops the run before the 200: that says nothing about the script.
    let yaml = "version: 1\nname: w\nendpoints: { api: { script: [ { status: 503, times: 5 }, \
                { status: 200 } ] } }\noperation: { endpoint: api }\n\
                client: { fixed: { delay: 10ms, max_attempts: 6 } }\n\
                limits: { max_client_attempts: 2 }\n";
    let report = scenario(yaml).run_builtin();
    assert_eq!(report.end(), &retrylab::RunEnd::AttemptLimit);
    assert_eq!(dead(&report), Vec::<String>::new());
}

#[test]
fn a_scenario_without_problems_has_no_warnings() {
    let s = with(
        "[ { status: 503, times: 2 }, { status: 200 } ]",
        "",
        EXP3,
        "outcome: success, attempts: 3, stop_reason: success, gaps: [ { at_least: 0s }, { at_least: 0s } ]",
    );
    assert_eq!(warnings(&s), Vec::<String>::new());
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.warnings(), &[] as &[String]);
    assert!(!report.summary().contains("warning"));
}

// ---- timelines and random steps ----------------------------------------------------------

#[test]
fn branches_without_chance_and_windows_after_the_run_are_unreachable() {
    let s = scenario(
        "version: 1\nname: w\nendpoints:\n  api:\n    timeline:\n\
         \x20     - { during: [0s, 1s], p: 0, then: { status: 503 }, else: { p: 1, then: { status: 200 }, else: { status: 201 } } }\n\
         \x20     - { during: [5m, 10m], status: 503 }\n\
         operation: { endpoint: api }\nlimits: { max_virtual_time: 1m }\n",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:6:41 endpoints.api.timeline[0].then: `p: 0` never takes this branch: \
             write the other step without `p`",
            "w.yaml:6:101 endpoints.api.timeline[0].else.else: `p: 1` never takes this \
             branch: write the other step without `p`",
            "w.yaml:7:19 endpoints.api.timeline[1].during: this window opens at 5m but the \
             run stops at 1m (limits.max_virtual_time): no request can arrive in it",
        ]
    );
    // Inside a script too; a probability strictly between the ends is fine.
    let s = with(
        "[ { p: 1, then: { status: 200 }, else: { status: 503 } }, { p: 0.5, then: { status: 200 }, else: { status: 503 } } ]",
        "",
        EXP3,
        "outcome: success",
    );
    assert_eq!(
        warnings(&s),
        [
            "w.yaml:5:52 endpoints.api.script[0].else: `p: 1` never takes this branch: write \
             the other step without `p`"
        ]
    );
}

#[test]
fn windows_no_request_arrived_in_and_branches_no_draw_took() {
    let s = scenario(
        "version: 1\nname: w\nendpoints:\n  api:\n    timeline:\n\
         \x20     - { during: [0s, 1s], p: 0.001, then: { status: 503 }, else: { p: 0.5, then: { status: 200 }, else: { status: 201 } } }\n\
         \x20     - { during: [5s, 10s], status: 503 }\n\
         operation: { endpoint: api, calls: 3 }\n\
         client: { fixed: { delay: 100ms, max_attempts: 2 } }\n",
    );
    let report = s.run_builtin();
    // Seed 0 takes `else` then `then` three times: 0.001 is too rare for three draws, and
    // the inner coin never came up `else`. Nothing arrives after the first second.
    assert_eq!(
        dead(&report),
        [
            "w.yaml:6:45 endpoints.api.timeline[0].then: no draw took this branch (p 0.001, \
             3 draws): this seed never exercised it",
            "w.yaml:6:107 endpoints.api.timeline[0].else.else: no draw took this branch \
             (p 0.5, 3 draws): this seed never exercised it",
            "w.yaml:7:9 endpoints.api.timeline[1]: no request arrived in this window \
             (endpoint `api`, window 2 of 2)",
        ]
    );
    // Another seed exercises the inner coin both ways.
    let mut other = s.clone();
    other.seed = 3;
    let report = other.run_builtin();
    assert!(
        !dead(&report).iter().any(|w| w.contains("else.else")),
        "{:?}",
        dead(&report)
    );
}

/// A broker's script is judged like an `http` endpoint's: a step no send reached is
/// reported.
#[test]
fn a_broker_step_no_send_reached() {
    let s = scenario(
        "version: 1\nname: w\nendpoints:\n  broker:\n    kind: broker\n    topics: [orders]\n\
         \x20   script: [ { status: 200 }, { error_code: 530 } ]\n\
         operation: { endpoint: broker, method: POST, path: /topics/orders/messages, \
         body: '{}' }\nclient: no_retry\nexpect: { outcome: success }\n",
    );
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        dead(&report),
        [
            "w.yaml:7:32 endpoints.broker.script[1]: no request consumed this step (endpoint \
          `broker`, step 2 of 2)"
        ]
    );
}
