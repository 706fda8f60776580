//! The reference decision stays inside the envelope, and the reference client's own
//! timelines conform, over many seeds, scripts and configurations.

use std::io;
use std::time::Duration;

use super::support::{Reply, Sim, failure, st, with_ra};
use crate::policy::rocketmq::RocketmqConfig;
use crate::policy::servicenow::{ServicenowExponentialConfig, ServicenowHeaderConfig};
use crate::policy::{
    ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig, NoRetryConfig, Observed,
    Policy, RetryAfterRule, conforms,
};

fn policies() -> Vec<Box<dyn Policy>> {
    let mut out = Vec::new();
    for jitter in [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ] {
        for retry_after in [RetryAfterRule::Honour, RetryAfterRule::Ignore] {
            out.push(
                ExponentialConfig {
                    max_attempts: 8,
                    initial: Duration::from_millis(100),
                    max_delay: Duration::from_millis(1500),
                    jitter,
                    retry_after,
                    ..Default::default()
                }
                .into_policy(),
            );
            out.push(
                ExponentialConfig {
                    max_attempts: 6,
                    initial: Duration::from_micros(1700),
                    multiplier: 1.6,
                    max_delay: Duration::from_millis(77),
                    jitter,
                    retry_after,
                    ..Default::default()
                }
                .into_policy(),
            );
        }
    }
    for jitter in [Jitter::None, Jitter::Full, Jitter::Equal] {
        out.push(
            LinearConfig {
                max_attempts: 6,
                initial: Duration::from_millis(30),
                step: Duration::from_micros(45_500),
                max_delay: Duration::from_millis(200),
                jitter,
                ..Default::default()
            }
            .into_policy(),
        );
        out.push(
            FibonacciConfig {
                max_attempts: 7,
                initial: Duration::from_micros(20_300),
                step: Duration::from_micros(33_700),
                max_delay: Duration::from_millis(150),
                jitter,
                ..Default::default()
            }
            .into_policy(),
        );
    }
    out.push(
        FixedConfig {
            max_attempts: 4,
            delay: Duration::from_millis(250),
            ..Default::default()
        }
        .into_policy(),
    );
    out.push(NoRetryConfig::default().into_policy());
    // The vendor policies whose delays do not depend on their own earlier draws.
    out.push(
        ServicenowExponentialConfig {
            max_retries: 5,
            response_codes: vec![429, 500, 503],
            base_delay: Duration::from_micros(40_300),
            max_delay: Duration::from_millis(500),
            additional_delay_window: Duration::from_millis(150),
        }
        .into_policy(),
    );
    out.push(
        ServicenowHeaderConfig {
            max_retries: 5,
            response_codes: vec![429, 503],
            additional_delay_window: Duration::from_millis(300),
            ..Default::default()
        }
        .into_policy(),
    );
    out.push(RocketmqConfig::default().into_policy());
    out
}

fn scripts() -> Vec<Vec<Reply>> {
    let slow_body = Reply {
        body_ms: 700,
        ..with_ra(503, "1")
    };
    vec![
        vec![st(503)],
        vec![st(500), st(502), st(200)],
        vec![with_ra(429, "2"), st(503), with_ra(503, "0"), st(200)],
        vec![with_ra(429, "Thu, 01 Jan 2026 00:00:03 GMT"), st(503)],
        vec![
            with_ra(429, "Wed, 31 Dec 2025 00:00:00 GMT"),
            with_ra(503, "-1"),
        ],
        vec![with_ra(429, "1.5"), with_ra(429, "garbage"), st(404)],
        vec![
            failure(Observed::Timeout, 2000),
            failure(Observed::Refused, 1),
            failure(Observed::Transport(io::ErrorKind::ConnectionReset), 5),
            st(503),
        ],
        vec![slow_body, st(503)],
        vec![st(404)],
        vec![st(200)],
    ]
}

#[test]
fn decide_stays_inside_the_envelope_and_conforms() {
    let sim = Sim::calls(1).of_at_most(50);
    let mut checked = 0u32;
    for policy in policies() {
        for script in scripts() {
            for seed in 0..60 {
                let mut reference = policy.clone_box();
                // `run_reference` asserts envelope.admits(decision) at every step.
                let timeline = sim.reference_call(reference.as_mut(), &script, seed);
                let violations = conforms(policy.as_ref(), &timeline);
                assert!(
                    violations.is_empty(),
                    "{} seed {seed}: {violations:#?}\n{timeline:#?}",
                    policy.name()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000);
}

#[test]
fn the_reference_is_deterministic_per_seed() {
    let sim = Sim::calls(1).of_at_most(50);
    for policy in policies() {
        let script = vec![st(503)];
        let a = sim.reference_call(policy.clone_box().as_mut(), &script, 9);
        let b = sim.reference_call(policy.clone_box().as_mut(), &script, 9);
        assert_eq!(a, b, "{}", policy.name());
    }
    // And seeds matter where there is jitter.
    let full = ExponentialConfig {
        max_attempts: 6,
        ..Default::default()
    }
    .into_policy();
    let script = vec![st(503)];
    let a = sim.reference_call(full.clone_box().as_mut(), &script, 1);
    let b = sim.reference_call(full.clone_box().as_mut(), &script, 2);
    assert_ne!(a, b);
}

#[test]
fn full_jitter_spreads_over_its_window() {
    // The reference's delays cover the window: over 2000 seeds, the first retry of a full
    // jitter on 100 ms lands in every 10 ms bucket, and both bounds are reachable.
    let policy = ExponentialConfig::default().into_policy();
    let mut buckets = [0u32; 11];
    for seed in 0..2000 {
        let t = Sim::calls(1).of_at_most(2).reference_call(
            policy.clone_box().as_mut(),
            &[st(503)],
            seed,
        );
        let gap = t[1].start_ms - t[0].end_ms;
        buckets[(gap / 10) as usize] += 1;
    }
    assert!(buckets[..10].iter().all(|&c| c > 120), "{buckets:?}");
    assert!(buckets[10] > 0, "{buckets:?}");
}
