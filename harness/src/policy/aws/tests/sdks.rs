//! Where the SDKs differ: botocore 1.44.18 is 2.1 with a bare 429 as a throttle in either
//! standard mode (its adaptive mode refused), the specification and smithy-rs retry no bare
//! 429, and smithy-rs charges 10 for a bare 500.

use super::{coded, config, no_jitter, states, windows};
use crate::policy::aws::{AwsConfig, AwsMode, AwsSdk};
use crate::policy::tests::support::{reset, st, view};
use crate::policy::{CallHistory, ClientHistory, Decision, StopReason};
use crate::rng::Stream;

/// botocore 1.44.18's default, as its source reads (botocore/retries/standard.py): a bare
/// 429 is a throttle (base 1 s, cost 5) in `aws_standard` and `aws_standard_2_1` alike, a
/// bare 503 a transient error (base 50 ms, cost 14), and `dynamodb-streams` gets `DynamoDB`'s
/// 25 ms and 4 attempts.
#[test]
fn botocore_1_44_is_2_1_with_a_bare_429_as_a_throttle() {
    for mode in [AwsMode::Standard, AwsMode::Standard21] {
        let botocore = AwsConfig {
            sdk: AwsSdk::Botocore1_44,
            ..no_jitter(mode)
        };
        assert!(botocore.validate().is_ok());
        assert_eq!(
            windows(botocore.clone(), &st(429), 2),
            [(1000, 1000), (2000, 2000)],
            "{mode:?}"
        );
        assert_eq!(
            windows(botocore.clone(), &st(503), 2),
            [(50, 50), (100, 100)],
            "{mode:?}"
        );
        let mut p = botocore.clone().into_policy();
        assert_eq!(
            states(p.as_mut(), &[st(429), st(503), st(200)]),
            ["quota 495/500", "quota 481/500", "quota 495/500"]
        );
        let streams = AwsConfig {
            service: Some("dynamodb-streams".into()),
            ..botocore
        };
        assert_eq!(streams.effective_max_attempts(), 4);
        assert_eq!(windows(streams, &st(503), 1), [(25, 25)]);
    }
    // The specification's 2.1, and smithy-rs, retry no bare 429.
    for sdk in [AwsSdk::Botocore, AwsSdk::SmithyRs] {
        let spec = AwsConfig {
            sdk,
            ..no_jitter(AwsMode::Standard21)
        };
        let mut p = spec.into_policy();
        assert_eq!(states(p.as_mut(), &[st(429)]), ["quota 500/500"]);
        let d = p.decide(
            &view(1, 0, &st(429)),
            &CallHistory::new(&[], &ClientHistory::default()),
            &mut Stream::new(1, "x"),
        );
        assert_eq!(d, Decision::Stop(StopReason::NotRetryable), "{sdk:?}");
    }
    // The limiter is 2.0's: botocore 1.44.18's adaptive mode is refused, saying why.
    let adaptive = AwsConfig {
        sdk: AwsSdk::Botocore1_44,
        ..config(AwsMode::Adaptive)
    };
    let error = adaptive.validate().unwrap_err();
    assert_eq!(error.field, "sdk");
    assert!(error.message.contains("2.1"), "{}", error.message);
}

#[test]
fn smithy_rs_charges_10_for_a_bare_500() {
    let smithy = AwsConfig {
        sdk: AwsSdk::SmithyRs,
        ..config(AwsMode::Standard)
    };
    let mut p = smithy.clone().into_policy();
    assert_eq!(
        states(p.as_mut(), &[st(500), st(200)]),
        ["quota 490/500", "quota 500/500"]
    );
    let mut p = smithy.into_policy();
    assert_eq!(
        states(p.as_mut(), &[reset(), coded(503, "SlowDown"), st(503)]),
        ["quota 490/500", "quota 485/500", "quota 485/500"]
    );
    let mut botocore = config(AwsMode::Standard).into_policy();
    assert_eq!(states(botocore.as_mut(), &[st(500)]), ["quota 495/500"]);
}
