//! Exponential windows: no, full and equal jitter, a fractional multiplier rounded once (and a
//! sub-millisecond initial delay), and decorrelated jitter from the observed previous delay.

use std::time::Duration;

use super::{exp, window, windows};
use crate::policy::{AttemptView, CallHistory, ClientHistory, ExponentialConfig, Jitter, Observed};

#[test]
fn exponential_no_jitter() {
    assert_eq!(
        windows(exp(Jitter::None).as_ref(), 6),
        [
            (100, 100),
            (200, 200),
            (400, 400),
            (800, 800),
            (1000, 1000),
            (1000, 1000)
        ]
    );
}

#[test]
fn exponential_full_jitter() {
    assert_eq!(
        windows(exp(Jitter::Full).as_ref(), 6),
        [(0, 100), (0, 200), (0, 400), (0, 800), (0, 1000), (0, 1000)]
    );
}

#[test]
fn exponential_equal_jitter() {
    assert_eq!(
        windows(exp(Jitter::Equal).as_ref(), 6),
        [
            (50, 100),
            (100, 200),
            (200, 400),
            (400, 800),
            (500, 1000),
            (500, 1000)
        ]
    );
}

#[test]
fn exponential_fractional_multiplier_rounds_once() {
    // 100 × 1.5^k = 100, 150, 225, 337.5, 506.25, 759.375, 1139.06 -> capped at 1000;
    // rounded to the nearest ms, halves up.
    let policy = ExponentialConfig {
        max_attempts: 10,
        multiplier: 1.5,
        max_delay: Duration::from_secs(1),
        jitter: Jitter::None,
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        windows(policy.as_ref(), 7),
        [
            (100, 100),
            (150, 150),
            (225, 225),
            (338, 338),
            (506, 506),
            (759, 759),
            (1000, 1000)
        ]
    );
    // Sub-millisecond initial: 0.3 ms × 2^k = 0.3, 0.6, 1.2, 2.4 ms -> 0, 1, 1, 2.
    let small = ExponentialConfig {
        max_attempts: 10,
        initial: Duration::from_micros(300),
        jitter: Jitter::Equal,
        ..Default::default()
    }
    .into_policy();
    // equal: [ceil(b/2), b] in ns, then rounded: b = 0.3 ms -> [0.15, 0.3] -> [0, 0];
    // 0.6 -> [0.3, 0.6] -> [0, 1]; 1.2 -> [0.6, 1.2] -> [1, 1]; 2.4 -> [1.2, 2.4] -> [1, 2].
    assert_eq!(windows(small.as_ref(), 4), [(0, 0), (0, 1), (1, 1), (1, 2)]);
}

#[test]
fn exponential_decorrelated_uses_the_observed_previous_delay() {
    let policy = exp(Jitter::Decorrelated);
    let client = ClientHistory::default();
    // Before the first retry: uniform[initial, 3 × initial] = [100, 300].
    let first = AttemptView::new(1, Observed::Status(503), 0, Some(10), 10);
    assert_eq!(
        window(policy.envelope(&first, &CallHistory::empty())),
        (100, 300)
    );
    // (previous observed delay, expected window): [100, min(1000, max(100, 3 × prev))].
    for (prev_delay, expected) in [
        (250, (100, 750)),
        (300, (100, 900)),
        (333, (100, 999)),
        (334, (100, 1000)),
        (500, (100, 1000)),
        (40, (100, 120)),
        (20, (100, 100)),
    ] {
        let second_start = 10 + prev_delay;
        let second = AttemptView::new(
            2,
            Observed::Status(503),
            second_start,
            Some(second_start + 10),
            second_start + 10,
        );
        let previous = [first.clone()];
        let history = CallHistory::new(&previous, &client);
        assert_eq!(
            window(policy.envelope(&second, &history)),
            expected,
            "previous delay {prev_delay}"
        );
    }
}
