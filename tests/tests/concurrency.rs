//! Calls of one built-in client in flight at once (`operation.concurrency`): they overlap,
//! each on a connection of its own, and share the client's policy state (a retry quota) in
//! the order their decisions are made, as an SDK's calls sharing one client do.

use std::collections::BTreeSet;

use retrylab::scenario::Scenario;
use retrylab::trace::Trace;
use retrylab::{Judgement, Report};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "concurrency.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn judgement(report: &Report, check: &str) -> Judgement {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
        .judgement
}

/// Attempts per call, by call id.
fn attempts_per_call(trace: &Trace) -> Vec<usize> {
    let mut out = vec![0; trace.calls.len()];
    for a in &trace.attempts {
        out[a.call_id as usize] += 1;
    }
    out
}

/// Three calls of a one-second request, three at once: with every built-in policy they
/// run side by side on three connections and the run ends just after the first second
/// (before calls overlapped, it ended at 3.008 s, each call on the one connection in turn).
#[test]
fn three_calls_at_once_overlap_with_every_policy() {
    let clients = [
        "no_retry",
        "{ exponential: { initial: 10ms, max_attempts: 2 } }",
        "{ aws_standard: {} }",
        "{ grpc_retry: { service_config: { retryPolicy: { maxAttempts: 2, initialBackoff: 0.1s, \
         maxBackoff: 1s, backoffMultiplier: 2, retryableStatusCodes: [UNAVAILABLE] } } } }",
    ];
    for client in clients {
        let yaml = format!(
            "version: 1
name: three calls at once
endpoints: {{ api: {{ script: [ {{ status: 200, latency: 1s }} ] }} }}
network: {{ latency: 1ms }}
operation: {{ endpoint: api, path: /, calls: 3, concurrency: 3 }}
client: {client}
"
        );
        let report = scenario(&yaml).run_builtin();
        let trace = report.trace();
        assert!(report.passed(), "{client}:\n{}", report.summary());
        assert!(
            trace.end_ms < 1_100,
            "{client}: ended at {} ms",
            trace.end_ms
        );
        assert_eq!(trace.attempts.len(), 3, "{client}");
        let conns: BTreeSet<Option<u64>> = trace.attempts.iter().map(|a| a.conn_id).collect();
        assert_eq!(conns.len(), 3, "{client}: connections {conns:?}");
        assert!(conns.iter().all(Option::is_some), "{client}: {conns:?}");
        // Every pair of calls is in flight at the same time.
        for a in &trace.attempts {
            for b in &trace.attempts {
                let (Some(a_end), Some(b_end)) = (a.end_ms, b.end_ms) else {
                    panic!("{client}: an attempt did not end");
                };
                assert!(
                    a.start_ms < b_end && b.start_ms < a_end,
                    "{client}: {a:?} {b:?}"
                );
            }
        }
    }
}

/// Five calls at once against a 500 that never ends, with an AWS retry quota of 12 tokens:
/// a retry costs 5, so the quota pays for two retries, drawn by the two calls whose first
/// attempts are decided first. The model: 5 first attempts, 2 retries, then every call
/// stops on the empty quota, 7 attempts in all, calls of 2, 2, 1, 1 and 1 attempts. A
/// client that ran its calls one after another would make 3, 1, 1, 1, 1 (its first call
/// retrying twice): the same quota, another order.
#[test]
fn concurrent_calls_share_one_aws_retry_quota() {
    let yaml = r#"
version: 1
name: five calls share a quota
endpoints: { api: { script: [ { status: 500 } ] } }
network: { latency: 1ms }
operation: { endpoint: api, calls: 5, concurrency: 5 }
client: { aws_standard: { initial_tokens: 12, jitter: none } }
expect:
  outcome: failure
  stop_reason: retry_quota_exceeded
  total_attempts: 7
  conforms_to: { aws_standard: { initial_tokens: 12, jitter: none } }
"#;
    let report = scenario(yaml).run_builtin();
    assert!(report.passed(), "{}", report.summary());
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 7, "{}", report.summary());
    let mut per_call = attempts_per_call(trace);
    per_call.sort_unstable();
    assert_eq!(per_call, [1, 1, 1, 2, 2], "{}", report.summary());
    // The five first attempts were all in flight at once.
    let firsts: Vec<_> = trace.attempts.iter().filter(|a| a.n == 1).collect();
    let last_start = firsts.iter().map(|a| a.start_ms).max();
    let first_end = firsts.iter().filter_map(|a| a.end_ms).min();
    assert!(last_start < first_end, "{}", report.summary());
    assert_eq!(judgement(&report, "conforms_to"), Judgement::Passed);
    // The same run again gives the same bytes.
    assert_eq!(
        report.snapshot_text(),
        scenario(yaml).run_builtin().snapshot_text()
    );
}

/// `conforms_to` replays the shared quota in the order the decisions were made: judged call
/// by call, the first call would have had quota left for its third attempt, and its stop
/// would read as giving up early.
#[test]
fn conformance_replays_interleaved_decisions() {
    let yaml = r#"
version: 1
name: five calls share a quota, judged
endpoints: { api: { script: [ { status: 500 } ] } }
network: { latency: 1ms }
operation: { endpoint: api, calls: 5, concurrency: 5 }
client: { aws_standard: { initial_tokens: 25, jitter: none } }
expect:
  conforms_to: { aws_standard: { initial_tokens: 25, jitter: none } }
"#;
    let report = scenario(yaml).run_builtin();
    // 25 tokens pay one retry of each call; the second retries find the quota empty.
    assert_eq!(attempts_per_call(report.trace()), [2, 2, 2, 2, 2]);
    assert_eq!(
        judgement(&report, "conforms_to"),
        Judgement::Passed,
        "{}",
        report.summary()
    );
    // The same calls run one after another would have been 3, 3, 2, 1, 1: the policy that
    // judges them must see the order, so a client that ran them so fails here.
    let sequential = scenario(&yaml.replace("concurrency: 5", "concurrency: 1")).run_builtin();
    assert_eq!(attempts_per_call(sequential.trace()), [3, 3, 2, 1, 1]);
    assert_eq!(judgement(&sequential, "conforms_to"), Judgement::Passed);
}

/// Five calls of a jittered exponential client at once, twice: the same bytes, and the calls
/// overlap.
#[test]
fn concurrent_calls_are_deterministic() {
    let yaml = r#"
version: 1
name: five at once
endpoints: { api: { script: [ { status: 503, times: 3 }, { status: 200, latency: 20ms } ] } }
network: { latency: 1ms }
operation: { endpoint: api, calls: 5, concurrency: 5 }
client: { exponential: { initial: 10ms, max_attempts: 5, jitter: full } }
"#;
    let first = scenario(yaml).run_builtin();
    let second = scenario(yaml).run_builtin();
    assert_eq!(first.snapshot_text(), second.snapshot_text());
    let calls = &first.trace().calls;
    assert_eq!(calls.len(), 5);
    let last_start = calls.iter().map(|c| c.start_ms).max();
    let first_end = calls.iter().filter_map(|c| c.end_ms).min();
    assert!(last_start < first_end, "{}", first.summary());
}

/// A fleet whose clients each make two calls at a time: every client's calls overlap, the
/// clients keep their quotas apart, and the run passes.
#[test]
fn a_fleet_with_concurrency_two_passes() {
    let yaml = r#"
version: 1
name: a fleet, two calls at a time each
endpoints: { api: { script: [ { status: 503 }, { status: 200, latency: 100ms } ] } }
network: { latency: 1ms }
operation: { endpoint: api, clients: 3, calls: 4, concurrency: 2 }
client: { aws_standard: { initial_tokens: 5, jitter: none } }
expect:
  outcome: success
  total_attempts: 13
  conforms_to: { aws_standard: { initial_tokens: 5, jitter: none } }
"#;
    let report = scenario(yaml).run_builtin();
    assert!(report.passed(), "{}", report.summary());
    let trace = report.trace();
    for client in 0..3 {
        let calls: Vec<_> = trace
            .calls
            .iter()
            .filter(|c| c.client_id == client)
            .collect();
        assert_eq!(calls.len(), 4);
        // Calls 0 and 1 of the client run side by side.
        let (a, b) = (calls[0], calls[1]);
        let (Some(a_end), Some(b_end)) = (a.end_ms, b.end_ms) else {
            panic!("a call did not end:\n{}", report.summary());
        };
        assert!(
            a.start_ms < b_end && b.start_ms < a_end,
            "{}",
            report.summary()
        );
    }
}

/// SNS's `throttlePolicy` spans the subscription's deliveries: three messages delivered at
/// once under `maxReceivesPerSecond: 2` start 500 ms apart, each reserving its turn as it
/// begins (read one at a time, all three would have seen no delivery before them and started
/// at 0).
#[test]
fn a_throttle_spaces_calls_that_begin_together() {
    let yaml = r#"
version: 1
name: three messages at once, throttled
endpoints: { subscriber: { script: [ { status: 200 } ] } }
operation: { endpoint: subscriber, method: POST, calls: 3, concurrency: 3 }
client:
  sns_delivery:
    jitter: 0
    delivery_policy:
      healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 20, numRetries: 3 }
      throttlePolicy: { maxReceivesPerSecond: 2 }
expect:
  outcome: success
  max_rate: { window: 1s, at_most: 2 }
"#;
    let report = scenario(yaml).run_builtin();
    assert!(report.passed(), "{}", report.summary());
    let starts: Vec<u64> = report.trace().attempts.iter().map(|a| a.start_ms).collect();
    assert_eq!(starts, [0, 500, 1000], "{}", report.summary());
}
