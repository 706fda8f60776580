//! A run that hits a limit says what it was waiting on: the client's own clock is blamed only
//! when the client was what the run waited on, never for a drawn latency, a fleet's start or
//! the built-in client's schedule.

use retrylab::scenario::Scenario;
use retrylab::{Judgement, Report, RunEnd};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "limits.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// The message of the run's `virtual_time_limit` verdict.
fn limit_message(report: &Report) -> String {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == "virtual_time_limit")
        .unwrap_or_else(|| panic!("no limit verdict:\n{}", report.summary()))
        .message
        .clone()
}

/// Clients that start two days in get two days more than the default room for their calls
/// (before, the default limit added `start` only for a client whose worst case was known,
/// and the run ended at 86,400 s with no attempt, blaming the client's clock).
#[test]
fn a_fleet_starting_past_the_default_limit_runs() {
    let yaml = "version: 1\nname: late fleet\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 2, start: 2d }\n";
    let report = scenario(yaml).run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.end(), &RunEnd::Completed);
    assert_eq!(report.trace().attempts.len(), 2);
    assert!(
        report
            .trace()
            .attempts
            .iter()
            .all(|a| a.start_ms == 172_800_000)
    );
}

/// A start past a limit the file set is named as such.
#[test]
fn a_start_past_the_limit_is_named() {
    let yaml = "version: 1\nname: late fleet\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 3, start: 2d }\n\
                limits: { max_virtual_time: 1d }\n";
    let report = scenario(yaml).run_builtin();
    let message = limit_message(&report);
    assert!(
        message.contains("Client 0 (and 2 other clients) starts at 172800.000s (operation.start), after the limit"),
        "{message}"
    );
    assert!(!message.contains("real clock"), "{message}");
}

/// Long latencies drawn from a distribution, on a step or on the network, hold an attempt
/// past the limit: the verdict names the attempt, never the client's clock.
#[test]
fn a_long_drawn_latency_is_not_blamed_on_the_client() {
    let latencies = [
        "endpoints: { api: { script: [ { status: 200, latency: { lognormal: { median: 10h, sigma: 3 } } } ] } }",
        "endpoints: { api: { script: [ { status: 200, latency: { exponential: { mean: 30h } } } ] } }",
        "endpoints: { api: { script: [ { status: 200, latency: { uniform: [20h, 40h] } } ] } }",
        "endpoints: { api: { script: [ { status: 200, latency: 2d } ] } }",
        "endpoints: { api: { script: [ { fail: hang } ] } }",
        "endpoints: { api: {} }\nnetwork: { latency: { uniform: [13h, 20h] } }",
    ];
    for endpoints in latencies {
        let yaml = format!(
            "version: 1\nname: slow\n{endpoints}\noperation: {{ endpoint: api, calls: 3 }}\n"
        );
        let report = scenario(&yaml).run_builtin();
        assert_eq!(
            report.end(),
            &RunEnd::VirtualTimeLimit,
            "{endpoints}\n{}",
            report.summary()
        );
        let message = limit_message(&report);
        assert!(
            message.contains("was still waiting for its response"),
            "{endpoints}: {message}"
        );
        assert!(!message.contains("real clock"), "{endpoints}: {message}");
    }
}

/// A client that retries on a clock of its own until the limit stops it is still told that
/// its clock is the likely cause.
#[test]
fn a_client_on_its_own_clock_is_still_told() {
    let yaml = "version: 1\nname: forever\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api }\nlimits: { max_virtual_time: 1m }\n";
    let report = scenario(yaml).run(|env| async move {
        loop {
            let _ = retrylab::attempt(&env).await;
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        #[allow(unreachable_code)]
        Ok::<(), ()>(())
    });
    let message = limit_message(&report);
    assert!(
        message.contains("Likely cause: the client reads the real clock"),
        "{message}"
    );
    assert_eq!(
        report
            .verdicts()
            .iter()
            .find(|v| v.check == "virtual_time_limit")
            .map(|v| v.judgement),
        Some(Judgement::Failed)
    );
}
