//! Fibonacci clients: accepted, and caught with the sequence shifted either way, attempts off
//! by one, `Retry-After` ignored, or full jitter where equal jitter is due.

use std::time::Duration;

use super::{
    accepted, all_503, generic_client, instant_500, is, rejected, rejection_rate,
    throttled_then_503, too_many,
};
use crate::policy::{FibonacciConfig, Jitter, Policy, ViolationKind};

fn fibonacci(jitter: Jitter, max_attempts: u32) -> Box<dyn Policy> {
    FibonacciConfig {
        max_attempts,
        initial: Duration::from_millis(100),
        max_delay: Duration::from_millis(2000),
        jitter,
        ..Default::default()
    }
    .into_policy()
}

/// 100 × (1, 1, 2, 3, 5, 8, 13, 20 capped, ...)
fn fib_ms(n: u32) -> u64 {
    const TABLE: [u64; 8] = [100, 100, 200, 300, 500, 800, 1300, 2000];
    TABLE[(n as usize - 1).min(7)]
}

#[test]
fn fibonacci_clients() {
    let p = fibonacci(Jitter::None, 9);
    for script in [all_503(), instant_500(), throttled_then_503()] {
        accepted(p.as_ref(), &script, || {
            generic_client(9, true, |n, _, _| fib_ms(n))
        });
    }
    // The sequence without its repeated 1: 1, 2, 3, 5, ...
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, _| fib_ms(n + 1)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.200s after the end of attempt 2, a 503 (needed exactly 0.100s)"
    );
    // The sequence from 0: 0, 1, 1, 2, ...
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, _| if n == 1 { 0 } else { fib_ms(n - 1) }),
        is(ViolationKind::TooEarly),
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(10, true, |n, _, _| fib_ms(n)),
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |n, _, _| fib_ms(n)),
        is(ViolationKind::StoppedEarly),
    );
    rejected(
        p.as_ref(),
        &throttled_then_503(),
        || generic_client(9, false, |n, _, _| fib_ms(n)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    // Equal jitter: correct, and full instead of equal.
    let equal = fibonacci(Jitter::Equal, 9);
    accepted(equal.as_ref(), &all_503(), || {
        generic_client(9, true, |n, _, rng| {
            let base = fib_ms(n);
            base / 2 + rng.uniform_u64(0, base / 2)
        })
    });
    let (rate, _) = rejection_rate(
        equal.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, rng| rng.uniform_u64(0, fib_ms(n))),
        is(ViolationKind::TooEarly),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}
