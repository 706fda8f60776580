//! The backoff bases: Retry Behavior 2.0's 1 s doubling, capped at 20 s before the jitter
//! (`b` uniform in [0, 1)), for every retryable error alike; 2.1's 50 ms for transient errors
//! and 1 s for throttles, and `DynamoDB`'s 25 ms and 4 attempts.

use super::{coded, config, no_jitter, windows};
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::tests::support::{st, timeout, view};
use crate::policy::{CallHistory, Envelope, StopReason};

#[test]
fn standard_2_0_backoff_is_1_2_4_8_seconds_capped_at_20() {
    let c = AwsConfig {
        max_attempts: Some(8),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(
        windows(c, &st(503), 7),
        [
            (1000, 1000),
            (2000, 2000),
            (4000, 4000),
            (8000, 8000),
            (16_000, 16_000),
            (20_000, 20_000),
            (20_000, 20_000)
        ]
    );
    // b uniform in [0, 1): the cap applies before the jitter.
    let c = AwsConfig {
        max_attempts: Some(7),
        ..config(AwsMode::Standard)
    };
    assert_eq!(
        windows(c, &st(503), 6),
        [
            (0, 1000),
            (0, 2000),
            (0, 4000),
            (0, 8000),
            (0, 16_000),
            (0, 20_000)
        ]
    );
    // A throttle or a timeout backs off the same in 2.0.
    let c = AwsConfig {
        max_attempts: Some(4),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(
        windows(c.clone(), &coded(400, "ThrottlingException"), 3),
        [(1000, 1000), (2000, 2000), (4000, 4000)]
    );
    assert_eq!(windows(c, &timeout(2000), 2), [(1000, 1000), (2000, 2000)]);
}

#[test]
fn standard_2_1_bases() {
    let c = AwsConfig {
        max_attempts: Some(6),
        ..no_jitter(AwsMode::Standard21)
    };
    assert_eq!(
        windows(c.clone(), &st(503), 5),
        [(50, 50), (100, 100), (200, 200), (400, 400), (800, 800)]
    );
    assert_eq!(
        windows(c.clone(), &coded(400, "Throttling"), 5),
        [
            (1000, 1000),
            (2000, 2000),
            (4000, 4000),
            (8000, 8000),
            (16_000, 16_000)
        ]
    );
    let dynamo = AwsConfig {
        service: Some("DynamoDB".into()),
        ..no_jitter(AwsMode::Standard21)
    };
    assert_eq!(dynamo.effective_max_attempts(), 4);
    assert_eq!(
        windows(dynamo.clone(), &st(500), 3),
        [(25, 25), (50, 50), (100, 100)]
    );
    assert_eq!(
        windows(
            dynamo.clone(),
            &coded(400, "ProvisionedThroughputExceededException"),
            3
        ),
        [(1000, 1000), (2000, 2000), (4000, 4000)]
    );
    // The fourth attempt is the last.
    let p = dynamo.into_policy();
    let v = view(4, 0, &st(500));
    assert_eq!(
        p.envelope(&v, &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    // DynamoDB's rule is 2.1's only.
    let v2_0 = AwsConfig {
        service: Some("dynamodb".into()),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(v2_0.effective_max_attempts(), 3);
    assert_eq!(windows(v2_0, &st(500), 1), [(1000, 1000)]);
}
