//! The AWS SDK for Rust (`retrylab_tests::clients::aws_sdk`: aws-sdk-sqs on retrylab's `aws`
//! adapter) against its scenarios in `scenarios/clients/aws-sdk-*.yaml`, with each verdict
//! pinned: which checks pass, which fail as the file's `must_fail` expects, and the instants
//! that make the point. In the style of `tests/clients.rs`, with its helpers
//! (`retrylab_tests::pinned`): `tests/scenarios.rs` runs the same files (and asserts their
//! snapshots) through the client registry.
//!
//! Needs feature `aws`: `cargo test -p retrylab-tests --features aws --test aws`.

use retrylab::Report;
use retrylab::prelude::*;
use retrylab::trace::{AttemptOutcome, CallResult};
use retrylab_tests::clients::aws_sdk;
use retrylab_tests::pinned::{caught, checks, client_scenario, gaps, message, starts};

/// How many attempts each call made, in call order.
fn attempts_per_call(report: &Report) -> Vec<usize> {
    let trace = report.trace();
    trace
        .calls
        .iter()
        .map(|c| {
            trace
                .attempts
                .iter()
                .filter(|a| a.call_id == c.call_id)
                .count()
        })
        .collect()
}

fn results(report: &Report) -> Vec<CallResult> {
    report
        .trace()
        .calls
        .iter()
        .map(|c| c.result.clone())
        .collect()
}

fn sent() -> CallResult {
    CallResult::Success(r#""sent""#.to_owned())
}

fn failure(text: &str) -> CallResult {
    CallResult::Failure(format!("{text:?}"))
}

#[test]
fn a_transient_503_and_a_throttle_are_retried_one_then_two_seconds_later() {
    let report =
        client_scenario("aws-sdk-sqs-throttling-vs-transient.yaml").run(aws_sdk::no_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(
        checks(&report),
        ["outcome", "attempts", "gaps", "conforms_to"]
    );
    // Latency 1ms each way: every attempt takes 2ms; b = 1 gives 1s, then 2s.
    assert_eq!(starts(&report), [0, 1004, 3006]);
    assert_eq!(gaps(&report), [1000, 2000]);
    assert_eq!(results(&report), [sent()]);
}

#[test]
fn a_bare_429_and_an_unknown_queue_are_not_retried() {
    let report = client_scenario("aws-sdk-sqs-not-retried.yaml").run(aws_sdk::standard);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(attempts_per_call(&report), [1, 1]);
    assert_eq!(
        results(&report),
        [
            failure("service error no code"),
            failure("service error QueueDoesNotExist")
        ]
    );
}

#[test]
fn the_retry_quota_runs_dry_after_25_calls_at_10_tokens_a_retry() {
    let report =
        client_scenario("aws-sdk-sqs-quota-exhausted-across-calls.yaml").run(aws_sdk::no_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    let mut expected = vec![3; 25];
    expected.extend([1, 1]);
    assert_eq!(attempts_per_call(&report), expected);
    assert_eq!(report.trace().attempts.len(), 77);
}

#[test]
fn judging_the_rust_sdk_by_botocore_costs_is_a_false_alarm() {
    let report =
        client_scenario("aws-sdk-sqs-quota-judged-as-botocore-caught.yaml").run(aws_sdk::no_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["conforms_to"], "{}", report.summary());
    // botocore's costs leave 250 tokens after 25 calls: it expects call 25 to retry.
    let judged = message(&report, "conforms_to");
    assert!(judged.contains("call 25"), "{judged}");
    // The same run conforms to the smithy-rs reading (the file above).
    assert_eq!(report.trace().attempts.len(), 77);
}

#[test]
fn the_quota_ends_a_hundred_attempt_call_after_51_attempts_in_every_run() {
    let scenario = client_scenario("aws-sdk-sqs-quota-stops-a-call.yaml");
    // Twice in one process: each run has a retry partition of its own.
    for run in 0..2 {
        let report = scenario.run(aws_sdk::hundred_attempts);
        assert!(report.passed(), "run {run}: {}", report.summary());
        assert_eq!(report.trace().attempts.len(), 51, "run {run}");
        let mut expected = vec![1000, 2000, 4000, 8000, 16000];
        expected.extend([20_000; 45]);
        assert_eq!(gaps(&report), expected, "run {run}");
        assert_eq!(report.trace().calls[0].end_ms, Some(931_000));
    }
}

/// [`aws_sdk::hundred_attempts`] on the SDK's default retry partition (`sqs-us-east-1`)
/// instead of the adapter's: the only client here that uses it.
async fn hundred_attempts_on_the_default_partition(env: Env) -> Result<&'static str, String> {
    let sqs = env.aws_sdk_client("sqs on the default partition", |aws| {
        let retry = aws_sdk_sqs::config::retry::RetryConfig::standard()
            .with_use_static_exponential_base(true)
            .with_max_attempts(100);
        let config = aws_sdk_sqs::config::Builder::from(&aws.sdk_config)
            .retry_config(retry)
            .build();
        aws_sdk_sqs::Client::from_conf(config)
    });
    sqs.send_message()
        .queue_url(aws_sdk::QUEUE_URL)
        .message_body("retrylab")
        .send()
        .await
        .map(|_| "sent")
        .map_err(|error| aws_sdk::describe(&error))
}

/// Without the adapter's partition the SDK keeps the quota in a process-wide static: the
/// second run starts where the first left it. This is the failure the adapter's partition
/// prevents.
#[test]
fn the_sdk_default_partition_carries_the_quota_from_run_to_run() {
    let scenario = client_scenario("aws-sdk-sqs-quota-stops-a-call.yaml");
    let first = scenario.run(hundred_attempts_on_the_default_partition);
    let second = scenario.run(hundred_attempts_on_the_default_partition);
    assert_eq!(first.trace().attempts.len(), 51, "{}", first.summary());
    // The first run's client holds its last retry's 10 tokens until it is dropped, with
    // its run's thread: the second run finds 0 or 10 tokens, and makes 1 or 2 attempts.
    let second_attempts = second.trace().attempts.len();
    assert!((1..=2).contains(&second_attempts), "{}", second.summary());
    assert!(!second.passed());
}

#[test]
fn x_amz_retry_after_is_waited_exactly_and_capped_at_20s() {
    let scenario = client_scenario("aws-sdk-sqs-x-amz-retry-after.yaml");
    for seed in 1..=5 {
        let report = scenario.run_with_seed(seed, aws_sdk::standard);
        assert!(report.passed(), "seed {seed}: {}", report.summary());
        // Whatever the jitter would have drawn: 1.5s after the 503, min(60s, 20s) after
        // the throttle.
        assert_eq!(gaps(&report), [1500, 20_000], "seed {seed}");
        assert_eq!(results(&report), [sent()]);
    }
}

#[test]
fn the_jitter_spans_the_window_and_each_seed_draws_its_own() {
    let scenario = client_scenario("aws-sdk-sqs-jitter.yaml");
    let mut drawn = Vec::new();
    for seed in 1..=5 {
        let report = scenario.run_with_seed(seed, aws_sdk::standard);
        assert!(report.passed(), "seed {seed}: {}", report.summary());
        let gaps = gaps(&report);
        assert!(gaps[0] <= 1000 && gaps[1] <= 2000, "seed {seed}: {gaps:?}");
        drawn.push(gaps);
    }
    drawn.sort();
    drawn.dedup();
    assert_eq!(drawn.len(), 5, "each seed draws other delays: {drawn:?}");
}

#[test]
fn two_runs_of_a_jittered_scenario_in_one_process_give_the_same_trace() {
    let scenario = client_scenario("aws-sdk-sqs-jitter.yaml");
    let first = scenario.run(aws_sdk::standard);
    let second = scenario.run(aws_sdk::standard);
    assert!(first.passed(), "{}", first.summary());
    assert_eq!(first.snapshot_text(), second.snapshot_text());
    assert_eq!(first.trace().to_json(), second.trace().to_json());
    // Random delays, not the window's bounds: the SDK's generator was drawn from.
    let gaps = gaps(&first);
    assert!(
        gaps.iter().all(|&g| g != 0) && gaps != [1000, 2000],
        "{gaps:?}"
    );
}

#[test]
fn a_black_holed_connect_is_given_up_after_3_1s_and_retried() {
    let report = client_scenario("aws-sdk-sqs-connect-timeout.yaml").run(aws_sdk::no_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(starts(&report), [0, 4100, 9200]);
    let outcomes: Vec<_> = report.trace().attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes,
        [
            AttemptOutcome::ConnectAbandoned,
            AttemptOutcome::ConnectAbandoned,
            AttemptOutcome::Status(200)
        ]
    );
    assert_eq!(report.trace().calls[0].end_ms, Some(9204));
}

#[test]
fn a_failed_calls_held_tokens_come_back_with_the_next_success() {
    let report =
        client_scenario("aws-sdk-sqs-held-tokens-refunded-caught.yaml").run(aws_sdk::no_jitter);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["conforms_to"], "{}", report.summary());
    let mut expected = vec![3; 25];
    expected.extend([1, 2]);
    assert_eq!(attempts_per_call(&report), expected);
    let judged = message(&report, "conforms_to");
    assert!(judged.contains("call 26"), "{judged}");
}
