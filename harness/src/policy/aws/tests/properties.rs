//! Over every mode, jitter and SDK and many seeds: the reference decision stays inside its
//! envelope, its timelines conform, and replaying them with `record` reaches the state
//! `decide` reached.

use std::time::Duration;

use super::{check, coded, reference_sim, with_ra};
use crate::policy::Conformance;
use crate::policy::aws::{AwsConfig, AwsJitter, AwsMode, AwsSdk};
use crate::policy::tests::support::{Reply, reset, st, timeout};

fn all_configs() -> Vec<AwsConfig> {
    let mut out = Vec::new();
    for mode in [AwsMode::Standard, AwsMode::Standard21, AwsMode::Adaptive] {
        for jitter in [AwsJitter::Random, AwsJitter::None] {
            for sdk in [AwsSdk::Botocore, AwsSdk::SmithyRs, AwsSdk::Botocore1_44] {
                // Refused by validation: the limiter over 2.1 is not modelled.
                if mode == AwsMode::Adaptive && sdk == AwsSdk::Botocore1_44 {
                    continue;
                }
                out.push(AwsConfig {
                    mode,
                    jitter,
                    sdk,
                    max_attempts: Some(5),
                    initial_tokens: 60,
                    max_backoff: Duration::from_millis(3500),
                    long_polling: mode == AwsMode::Standard21,
                    service: (sdk == AwsSdk::SmithyRs).then(|| "dynamodb".to_string()),
                });
            }
        }
    }
    out
}

fn scripts() -> Vec<Vec<Reply>> {
    let fast_throttle = Reply {
        latency_ms: 1,
        ..coded(400, "ThrottlingException")
    };
    vec![
        vec![st(503)],
        vec![st(500), st(502), st(200)],
        vec![timeout(2000), reset(), st(504), st(200)],
        vec![
            with_ra(st(503), "2500"),
            with_ra(coded(400, "Throttling"), "9000"),
            st(200),
        ],
        vec![fast_throttle.clone(), fast_throttle.clone(), st(200)],
        vec![fast_throttle, st(200)],
        vec![st(429)],
        vec![coded(400, "RequestTimeoutException"), st(404)],
        vec![st(200)],
    ]
}

#[test]
fn decide_stays_inside_the_envelope_and_conforms() {
    let mut checked = 0;
    for c in all_configs() {
        let policy = c.clone().into_policy();
        for script in scripts() {
            for seed in 0..25 {
                let mut reference = policy.clone_box();
                // 14 calls: the 60-token quota runs out on the failing scripts.
                let calls = reference_sim(14).run_reference(reference.as_mut(), &script, seed);
                let violations = check(policy.as_ref(), &calls);
                assert!(violations.is_empty(), "{c:?} seed {seed}: {violations:#?}");
                // Replaying with `record` reaches the state `decide` reached.
                let mut replay = Conformance::new(policy.clone_box());
                for call in &calls {
                    replay.check_call(call);
                }
                assert_eq!(
                    replay
                        .policy()
                        .describe_state()
                        .map(|s| s.replace(", long-poll", "")),
                    reference.describe_state().map(|s| s
                        .split(", long-poll")
                        .next()
                        .unwrap()
                        .to_string()),
                    "{c:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 2000);
}
