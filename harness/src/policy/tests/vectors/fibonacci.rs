//! Fibonacci windows: the sequence capped, with no and equal jitter, far attempts at the cap,
//! and `step` as the second delay (zero steps included).

use std::time::Duration;

use super::{MS, failed, window, windows};
use crate::policy::{AttemptView, CallHistory, FibonacciConfig, Jitter, Observed};

#[test]
fn fibonacci_vectors() {
    let config = FibonacciConfig {
        max_attempts: 10,
        initial: MS(100),
        max_delay: Duration::from_secs(1),
        jitter: Jitter::None,
        ..Default::default()
    };
    // 100 × (1, 1, 2, 3, 5, 8, 13, 21) capped at 1000.
    assert_eq!(
        windows(config.clone().into_policy().as_ref(), 8),
        [
            (100, 100),
            (100, 100),
            (200, 200),
            (300, 300),
            (500, 500),
            (800, 800),
            (1000, 1000),
            (1000, 1000)
        ]
    );
    let equal = FibonacciConfig {
        jitter: Jitter::Equal,
        ..config
    };
    assert_eq!(
        windows(equal.into_policy().as_ref(), 6),
        [
            (50, 100),
            (50, 100),
            (100, 200),
            (150, 300),
            (250, 500),
            (400, 800)
        ]
    );
    // Far attempts stay at the cap (and the computation stops at the cap).
    let far = FibonacciConfig::default().into_policy();
    let view = AttemptView::new(1, Observed::Status(503), 0, Some(1), 1);
    let far_view = AttemptView {
        n: 4_000_000_000,
        ..view
    };
    let far_policy = FibonacciConfig {
        max_attempts: u32::MAX,
        jitter: Jitter::None,
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        window(far_policy.envelope(&far_view, &CallHistory::empty())),
        (20_000, 20_000)
    );
    assert_eq!(far.max_attempts(), Some(3));
}

#[test]
fn fibonacci_step_is_the_second_delay() {
    // initial, step, then each the sum of the two before: 100, 300, 400, 700, 1100, capped.
    let config = FibonacciConfig {
        max_attempts: 10,
        initial: MS(100),
        step: MS(300),
        max_delay: MS(1500),
        jitter: Jitter::None,
        ..Default::default()
    };
    assert_eq!(
        windows(config.clone().into_policy().as_ref(), 7),
        [
            (100, 100),
            (300, 300),
            (400, 400),
            (700, 700),
            (1100, 1100),
            (1500, 1500),
            (1500, 1500)
        ]
    );
    // A first delay above the second, and a zero step: 500, 0, 500, 500, 1000.
    let down = FibonacciConfig {
        initial: MS(500),
        step: MS(0),
        ..config.clone()
    };
    assert_eq!(
        windows(down.into_policy().as_ref(), 5),
        [(500, 500), (0, 0), (500, 500), (500, 500), (1000, 1000)]
    );
    // Both zero stays zero, however far (and the walk stops at once).
    let zero = FibonacciConfig {
        initial: MS(0),
        step: MS(0),
        max_attempts: u32::MAX,
        ..config
    }
    .into_policy();
    let far = AttemptView {
        n: 4_000_000_000,
        ..failed(1)
    };
    assert_eq!(window(zero.envelope(&far, &CallHistory::empty())), (0, 0));
}
