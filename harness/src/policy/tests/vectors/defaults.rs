//! The configurations' defaults against the design table, validation rejecting nonsense, and
//! unvalidated nonsense (NaN or negative growth) not panicking.

use std::time::Duration;

use super::{MS, windows};
use crate::policy::{
    ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig, RetryAfterRule,
};

#[test]
fn defaults_follow_the_design_table() {
    let e = ExponentialConfig::default();
    assert_eq!(
        (
            e.max_attempts,
            e.initial,
            e.multiplier,
            e.max_delay,
            e.jitter,
            e.retry_after
        ),
        (
            3,
            MS(100),
            2.0,
            Duration::from_secs(20),
            Jitter::Full,
            RetryAfterRule::Honour
        )
    );
    assert_eq!(e.retry_on.to_string(), "5xx, 429, transport, timeout");
    assert_eq!(FixedConfig::default().retry_after, RetryAfterRule::Honour);
    assert_eq!(FixedConfig::default().max_attempts, 3);
    assert_eq!(LinearConfig::default().max_attempts, 3);
    assert_eq!(FibonacciConfig::default().max_attempts, 3);
    assert!(
        ExponentialConfig {
            multiplier: f64::NAN,
            ..Default::default()
        }
        .validate()
        .is_err()
    );
    assert!(
        LinearConfig {
            jitter: Jitter::Decorrelated,
            ..Default::default()
        }
        .validate()
        .is_err()
    );
    assert!(
        FixedConfig {
            max_attempts: 0,
            ..Default::default()
        }
        .validate()
        .is_err()
    );
    // Unvalidated nonsense does not panic: NaN growth sits at the cap (from the second
    // retry: the first is `initial` whatever the multiplier, as x^0 = 1).
    let nan = ExponentialConfig {
        multiplier: f64::NAN,
        jitter: Jitter::None,
        max_attempts: 5,
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        windows(nan.as_ref(), 3),
        [(100, 100), (20_000, 20_000), (20_000, 20_000)]
    );
    let negative = ExponentialConfig {
        multiplier: -2.0,
        jitter: Jitter::None,
        max_attempts: 5,
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        windows(negative.as_ref(), 3),
        [(100, 100), (0, 0), (400, 400)]
    );
}
