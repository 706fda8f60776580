//! Exponential clients, accepted with no, full and equal jitter, and caught with the cap
//! applied after the jitter, the jitter missing, a wrong multiplier, attempts off by one,
//! `Retry-After` ignored or a 404 retried; decorrelated jitter, right, uncapped and off by
//! one.

use std::time::Duration;

use super::{
    accepted, all_503, generic_client, instant_500, is, rejected, rejection_rate,
    throttled_by_date, throttled_then_503, too_many,
};
use crate::policy::tests::support::st;
use crate::policy::{ExponentialConfig, Jitter, Policy, RetryAfterRule, ViolationKind};
use crate::rng::Stream;

/// Full jitter on `initial × 2^(n-1)` ms, capped at `cap` first.
fn full(n: u32, cap: u64, rng: &mut Stream) -> u64 {
    rng.uniform_u64(0, (100u64 << (n - 1)).min(cap))
}

fn exponential(jitter: Jitter, max_attempts: u32, cap_ms: u64) -> Box<dyn Policy> {
    ExponentialConfig {
        max_attempts,
        initial: Duration::from_millis(100),
        multiplier: 2.0,
        max_delay: Duration::from_millis(cap_ms),
        jitter,
        retry_after: RetryAfterRule::Honour,
        ..Default::default()
    }
    .into_policy()
}

#[test]
fn exponential_correct_clients_are_accepted() {
    let p = exponential(Jitter::Full, 15, 1000);
    for script in [
        all_503(),
        instant_500(),
        throttled_then_503(),
        throttled_by_date(),
    ] {
        accepted(p.as_ref(), &script, || {
            generic_client(15, true, |n, _, rng| full(n, 1000, rng))
        });
    }
    let none = exponential(Jitter::None, 8, 1000);
    accepted(none.as_ref(), &throttled_then_503(), || {
        generic_client(8, true, |n, _, _| (100u64 << (n - 1)).min(1000))
    });
    let equal = exponential(Jitter::Equal, 10, 1000);
    accepted(equal.as_ref(), &all_503(), || {
        generic_client(10, true, |n, _, rng| {
            let base = (100u64 << (n - 1)).min(1000);
            base / 2 + rng.uniform_u64(0, base / 2)
        })
    });
}

#[test]
fn exponential_cap_applied_after_jitter_is_caught() {
    // Jitter on the uncapped base, then the cap: every delay lies inside its window, but
    // from the fifth retry on most sit exactly at the cap.
    let p = exponential(Jitter::Full, 15, 1000);
    let (rate, message) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(15, true, |n, _, rng| {
                rng.uniform_u64(0, 100u64 << (n - 1)).min(1000)
            })
        },
        is(ViolationKind::PinnedAtBound),
    );
    assert!(rate >= 0.99, "caught on {rate}");
    assert!(message.contains("exactly at the maximum"), "{message}");
    assert!(
        message.contains(": 1.000s after the end of attempt "),
        "{message}"
    );
}

#[test]
fn exponential_missing_jitter_is_caught() {
    let p = exponential(Jitter::Full, 8, 20_000);
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |n, _, _| 100u64 << (n - 1)),
        is(ViolationKind::PinnedAtBound),
    );
    // A client that never sleeps sits on the minimum of every full-jitter window.
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |_, _, _| 0),
        is(ViolationKind::PinnedAtBound),
    );
}

#[test]
fn exponential_wrong_multiplier_is_caught() {
    let none = exponential(Jitter::None, 6, 20_000);
    let message = rejected(
        none.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| 100 * 3u64.pow(n - 1)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.300s after the end of attempt 2, a 503 (needed exactly 0.200s)"
    );
    // Under full jitter a ×3 client is only sometimes outside: over 7 retries, nearly always.
    let p = exponential(Jitter::Full, 8, 20_000);
    let (rate, _) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(8, true, |n, _, rng| {
                rng.uniform_u64(0, 100 * 3u64.pow(n - 1))
            })
        },
        is(ViolationKind::TooLate),
    );
    assert!(rate >= 0.97, "caught on {rate}");
    // Equal jitter whose lower half is missing (full instead of equal).
    let equal = exponential(Jitter::Equal, 10, 1000);
    let (rate, _) = rejection_rate(
        equal.as_ref(),
        &all_503(),
        || generic_client(10, true, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::TooEarly),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}

#[test]
fn exponential_off_by_one_attempts_are_caught() {
    let p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(5, true, |n, _, rng| full(n, 1000, rng)),
        too_many,
    );
    assert_eq!(
        message,
        "attempt 5 was made but the policy allows at most 4 attempts"
    );
    let message = rejected(
        p.as_ref(),
        &instant_500(),
        || generic_client(3, true, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(
        message,
        "attempt 3: the call stopped after a retryable 500 with attempts left (policy allows 4 \
         attempts)"
    );
}

#[test]
fn exponential_retry_after_ignored_is_caught() {
    let none = exponential(Jitter::None, 4, 1000);
    let message = rejected(
        none.as_ref(),
        &throttled_then_503(),
        || generic_client(4, false, |n, _, _| (100u64 << (n - 1)).min(1000)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    assert_eq!(
        message,
        "attempt 2 started 0.100s after the head of a 429 with Retry-After: 2 (needed >= 2.000s)"
    );
    let full_p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        full_p.as_ref(),
        &throttled_by_date(),
        || generic_client(4, false, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    assert!(
        message.ends_with(
            "the head of a 429 with Retry-After: Thu, 01 Jan 2026 00:00:03 GMT (needed >= 2.990s)"
        ),
        "{message}"
    );
}

#[test]
fn exponential_retrying_a_404_is_caught() {
    let p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        p.as_ref(),
        &[st(404)],
        || {
            Box::new(|v: &crate::policy::AttemptView, _: &[_], _: &mut Stream| {
                (v.n < 2).then_some(50)
            })
        },
        is(ViolationKind::RetriedAfterStop(
            crate::policy::StopReason::NotRetryable,
        )),
    );
    assert_eq!(
        message,
        "attempt 2 was made after a 404, which the policy does not retry"
    );
}

#[test]
fn decorrelated_clients() {
    let p = exponential(Jitter::Decorrelated, 15, 1000);
    // min(cap, uniform[initial, 3 × previous sleep]), previous = initial at first.
    let correct = || {
        generic_client(15, true, |_, prev: Option<u64>, rng: &mut Stream| {
            rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
        })
    };
    for script in [all_503(), throttled_then_503(), throttled_by_date()] {
        accepted(p.as_ref(), &script, correct);
    }
    // The cap forgotten: the chain outgrows it.
    let (rate, message) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(15, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100))
            })
        },
        is(ViolationKind::TooLate),
    );
    assert!(rate >= 0.95, "caught on {rate}");
    assert!(message.contains("(needed 0.100s to "), "{message}");
    // Off by one, both ways.
    rejected(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(16, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
            })
        },
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(14, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
            })
        },
        is(ViolationKind::StoppedEarly),
    );
}
