//! What a report tells people: verdicts before snapshots, bounded failure output with what
//! each call returned, and snapshot names that are the same on every machine and from every
//! entry point.

use std::panic::{AssertUnwindSafe, catch_unwind};

use retrylab::Clients;
use retrylab::scenario::Scenario;

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// A real failure used to surface only as "snapshot assertion failed", buried in a diff
/// that invited accepting the regression (and left a `.snap.new` behind).
#[test]
fn assert_reports_failed_verdicts_before_comparing_the_snapshot() {
    let yaml = "version: 1\nname: verdicts first, no such snapshot\n\
                endpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nexpect: { outcome: success }\nsnapshot: true\n";
    let scenario = Scenario::from_yaml_str(yaml, "verdicts-first.yaml").unwrap();
    let report = scenario.run_builtin();
    let message = panic_message(catch_unwind(AssertUnwindSafe(|| report.assert())).unwrap_err());
    assert!(message.contains("FAIL outcome"), "{message}");
    assert!(!message.contains("snapshot assertion"), "{message}");
    let snapshots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    for stray in ["verdicts-first.snap.new", "verdicts-first.snap"] {
        assert!(!snapshots.join(stray).exists(), "{stray} was written");
    }
}

/// reqwest-retry 0.5.0's fatal "Source duration value is out of range" appeared only in the
/// trace, not in what a failing test printed.
#[test]
fn the_summary_says_what_each_call_returned() {
    let yaml = "version: 1\nname: a fatal error\n\
                endpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nexpect: { outcome: success }\n";
    let report = Scenario::from_yaml_str(yaml, "fatal.yaml")
        .unwrap()
        .run(|_env| async { Err::<(), _>("Source duration value is out of range") });
    let summary = report.summary();
    assert!(
        summary
            .contains("calls:\n  call 0: Err(\"Source duration value is out of range\") in 0.000s"),
        "{summary}"
    );
}

/// One client printed 15,494 lines: the summary of a huge failing run stays short, says how
/// much it left out and where to see all of it.
#[test]
fn failure_output_is_bounded() {
    let yaml = "version: 1\nname: many calls, many attempts\n\
                endpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api, calls: 200 }\n\
                client: { fixed: { delay: 1ms, max_attempts: 10 } }\n\
                expect: { outcome: success, attempts: 1 }\n";
    let report = Scenario::from_yaml_str(yaml, "big.yaml")
        .unwrap()
        .run_builtin();
    assert_eq!(report.trace().attempts.len(), 2_000);
    let summary = report.summary();
    let lines = summary.lines().count();
    assert!(lines < 120, "{lines} lines:\n{summary}");
    assert!(summary.contains("... 180 more calls"), "{summary}");
    assert!(
        summary.contains("more lines (the whole timeline"),
        "{summary}"
    );
    assert!(
        summary.contains("and 190 more like these (200 in all)"),
        "{summary}"
    );
    // `assert` prints the summary once, not the summary and the timeline again.
    let message = panic_message(catch_unwind(AssertUnwindSafe(|| report.assert())).unwrap_err());
    assert_eq!(message.matches("timeline (").count(), 1);
    assert!(message.len() < summary.len() + 200);
}

/// `concat!(env!("CARGO_MANIFEST_DIR"), ..)` produced a snapshot name holding the machine's
/// absolute path. The same file, loaded by an absolute path, by a relative one, or run by the
/// suite, is one snapshot: these compare against the suite's file for this scenario.
#[test]
fn a_scenario_has_one_snapshot_whatever_path_loads_it() {
    let absolute = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/http/429-retry-after.yaml"
    );
    let relative = "../scenarios/http/429-retry-after.yaml";
    for path in [absolute, relative] {
        let scenario = Scenario::load(path).unwrap_or_else(|e| panic!("{e}"));
        // Compared with tests/snapshots/scenarios__http__429-retry-after.snap, the file the
        // scenario suite (tests/scenarios.rs) asserts.
        scenario.run_builtin().assert();
    }
}

/// A client registered by name and the same closure given to `Scenario::run` write the
/// same trace: values were formatted twice through the registry (`Ok("200")`).
#[test]
fn a_registered_client_and_a_closure_format_values_alike() {
    let yaml = "version: 1\nname: values\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
                operation: { endpoint: api }\nclient: { custom: status }\n";
    let scenario = Scenario::from_yaml_str(yaml, "values.yaml").unwrap();
    async fn status(env: retrylab::Env) -> Result<u16, String> {
        let response = env.http_client().request(env.operation().request()).await;
        response
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
    }
    let registered = Clients::new()
        .register("status", status)
        .run(&scenario, scenario.seed)
        .unwrap();
    let direct = scenario.run(status);
    assert_eq!(registered.snapshot_text(), direct.snapshot_text());
    assert!(direct.snapshot_text().contains("call 0: Ok(200)"));
}

/// A verdict quotes what a client sent: idempotency keys `k x` and `k<tab>x` read the same in
/// a terminal, and the summary showed them alike for keys that differ.
#[test]
fn a_verdict_shows_the_invisible_characters_it_quotes() {
    let yaml = "version: 1\nname: keys that look alike\n\
                endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
                operation: { endpoint: api, method: POST, idempotency_key: { header: Idempotency-Key } }\n\
                expect: { same_idempotency_key: true }\n";
    let scenario = Scenario::from_yaml_str(yaml, "alike.yaml").unwrap();
    let report = scenario.run(|env| async move {
        let client = env.http_client();
        for key in ["k x", "k\tx"] {
            let mut request = env.operation().request();
            request
                .headers_mut()
                .insert("idempotency-key", http::HeaderValue::from_static(key));
            let response = client.request(request).await.map_err(|e| e.to_string())?;
            drop(response);
        }
        Ok::<_, String>(())
    });
    let summary = report.summary();
    assert!(!report.passed(), "{summary}");
    assert!(
        summary.contains("Idempotency-Key per request was [k x, k\\tx]"),
        "{summary}"
    );
}
