//! Linear clients: accepted, and caught with a wrong step, the step counted from the first
//! attempt, attempts off by one, `Retry-After` ignored, or (under full jitter) the cap applied
//! after the jitter.

use std::time::Duration;

use super::{
    accepted, all_503, generic_client, instant_500, is, rejected, rejection_rate,
    throttled_then_503, too_many,
};
use crate::policy::{Jitter, LinearConfig, Policy, ViolationKind};

fn linear(jitter: Jitter) -> Box<dyn Policy> {
    LinearConfig {
        max_attempts: 6,
        initial: Duration::from_millis(200),
        step: Duration::from_millis(300),
        max_delay: Duration::from_millis(1000),
        jitter,
        ..Default::default()
    }
    .into_policy()
}

/// 200 + 300 × (n-1), capped at 1000.
fn linear_base(n: u32) -> u64 {
    (200 + 300 * u64::from(n - 1)).min(1000)
}

#[test]
fn linear_clients() {
    let p = linear(Jitter::None);
    for script in [all_503(), instant_500(), throttled_then_503()] {
        accepted(p.as_ref(), &script, || {
            generic_client(6, true, |n, _, _| linear_base(n))
        });
    }
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| (200 + 310 * u64::from(n - 1)).min(1000)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.510s after the end of attempt 2, a 503 (needed exactly 0.500s)"
    );
    // The step counted from the first attempt instead of the first retry.
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| (200 + 300 * u64::from(n)).min(1000)),
        is(ViolationKind::TooLate),
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(7, true, |n, _, _| linear_base(n)),
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(5, true, |n, _, _| linear_base(n)),
        is(ViolationKind::StoppedEarly),
    );
    rejected(
        p.as_ref(),
        &throttled_then_503(),
        || generic_client(6, false, |n, _, _| linear_base(n)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    // Full jitter: correct, and with the cap applied after the jitter on a long call (a
    // low cap, so that the uncapped base soon dwarfs it and most delays pin at the cap).
    let full_p = LinearConfig {
        max_attempts: 20,
        initial: Duration::from_millis(200),
        step: Duration::from_millis(300),
        max_delay: Duration::from_millis(500),
        jitter: Jitter::Full,
        ..Default::default()
    }
    .into_policy();
    accepted(full_p.as_ref(), &all_503(), || {
        generic_client(20, true, |n, _, rng| {
            rng.uniform_u64(0, linear_base(n).min(500))
        })
    });
    let (rate, _) = rejection_rate(
        full_p.as_ref(),
        &all_503(),
        || {
            generic_client(20, true, |n, _, rng| {
                rng.uniform_u64(0, 200 + 300 * u64::from(n - 1)).min(500)
            })
        },
        is(ViolationKind::PinnedAtBound),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}
