//! Envelopes against hand-computed vectors: every expected number below is a literal worked
//! out by hand from the formulas in the policy docs, not computed by the code under test.

use std::io;
use std::time::Duration;

use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, DEFAULT_EPOCH_UNIX_MS, Envelope,
    ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig, NoRetryConfig, Observed,
    Policy, RetryAfterRule, RetryAfterValue, RetryOn, StopReason,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// Attempt `n`: a 503 whose head and end arrive 10 ms after its start at `n × 10 s`.
fn failed(n: u32) -> AttemptView {
    let start = u64::from(n) * 10_000;
    AttemptView::new(
        n,
        Observed::Status(503),
        start,
        Some(start + 10),
        start + 10,
    )
}

fn window(envelope: Envelope) -> (u64, u64) {
    match envelope {
        Envelope::Retry {
            min_ms,
            max_ms,
            from: Anchor::End,
            optional: false,
            ..
        } => (min_ms, max_ms),
        other => panic!("expected a mandatory retry window from the end, got {other:?}"),
    }
}

/// The windows after attempts 1..=count, each a 503, with no earlier attempts in the history.
fn windows(policy: &dyn Policy, count: u32) -> Vec<(u64, u64)> {
    (1..=count)
        .map(|n| window(policy.envelope(&failed(n), &CallHistory::empty())))
        .collect()
}

fn exp(jitter: Jitter) -> Box<dyn Policy> {
    ExponentialConfig {
        max_attempts: 10,
        initial: MS(100),
        multiplier: 2.0,
        max_delay: Duration::from_secs(1),
        jitter,
        ..Default::default()
    }
    .into_policy()
}

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

#[test]
fn linear_vectors() {
    let config = LinearConfig {
        max_attempts: 10,
        initial: MS(200),
        step: MS(300),
        max_delay: Duration::from_secs(1),
        jitter: Jitter::None,
        ..Default::default()
    };
    // 200 + 300 × (n-1) = 200, 500, 800, 1100 -> 1000.
    assert_eq!(
        windows(config.clone().into_policy().as_ref(), 5),
        [
            (200, 200),
            (500, 500),
            (800, 800),
            (1000, 1000),
            (1000, 1000)
        ]
    );
    let full = LinearConfig {
        jitter: Jitter::Full,
        ..config.clone()
    };
    assert_eq!(
        windows(full.into_policy().as_ref(), 4),
        [(0, 200), (0, 500), (0, 800), (0, 1000)]
    );
    let equal = LinearConfig {
        jitter: Jitter::Equal,
        ..config
    };
    assert_eq!(
        windows(equal.into_policy().as_ref(), 4),
        [(100, 200), (250, 500), (400, 800), (500, 1000)]
    );
}

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

fn fixed(delay_ms: u64, retry_after: RetryAfterRule) -> Box<dyn Policy> {
    FixedConfig {
        max_attempts: 5,
        delay: MS(delay_ms),
        retry_after,
        ..Default::default()
    }
    .into_policy()
}

/// A 429 started at 100 ms, head at 110 ms, body until 150 ms.
fn throttled(ra: RetryAfterValue) -> AttemptView {
    AttemptView::new(1, Observed::Status(429), 100, Some(110), 150).with_retry_after(ra)
}

#[test]
fn fixed_with_retry_after_seconds() {
    let policy = fixed(500, RetryAfterRule::Honour);
    let history = CallHistory::empty();
    // RA 2 s from the head (110) = instant 2110 = 1960 ms after the end (150).
    let env = policy.envelope(&throttled(RetryAfterValue::Seconds(2)), &history);
    assert_eq!(window(env.clone()), (1960, 1960));
    match env {
        Envelope::Retry {
            not_before: Some(nb),
            ..
        } => {
            assert_eq!(
                (nb.header, nb.value.as_str(), nb.at_ms),
                ("Retry-After", "2", 2110)
            );
        }
        other => panic!("{other:?}"),
    }
    // Head = end: exactly [2000, 2000].
    let at_end = AttemptView::new(1, Observed::Status(429), 0, Some(10), 10)
        .with_retry_after(RetryAfterValue::Seconds(2));
    assert_eq!(window(policy.envelope(&at_end, &history)), (2000, 2000));
    // A backoff longer than the RA wins: 3000 ms.
    let long = fixed(3000, RetryAfterRule::Honour);
    assert_eq!(window(long.envelope(&at_end, &history)), (3000, 3000));
    // RA 0 imposes nothing beyond the backoff.
    assert_eq!(
        window(policy.envelope(&throttled(RetryAfterValue::Seconds(0)), &history)),
        (500, 500)
    );
    // Ignored by configuration.
    let ignoring = fixed(500, RetryAfterRule::Ignore);
    let env = ignoring.envelope(&throttled(RetryAfterValue::Seconds(2)), &history);
    assert!(matches!(
        env,
        Envelope::Retry {
            min_ms: 500,
            max_ms: 500,
            not_before: None,
            ..
        }
    ));
}

#[test]
fn retry_after_http_dates() {
    let policy = fixed(500, RetryAfterRule::Honour);
    let history = CallHistory::empty();
    // The wall clock at the head (110 ms) is the epoch + 110 ms; the date is the epoch + 3 s,
    // reached at instant 3000, i.e. 2850 ms after the end (150).
    let epoch_s = (DEFAULT_EPOCH_UNIX_MS / 1000) as i64;
    for raw in [
        "Thu, 01 Jan 2026 00:00:03 GMT",
        "Thursday, 01-Jan-26 00:00:03 GMT",
        "Thu Jan  1 00:00:03 2026",
    ] {
        let ra = RetryAfterValue::parse(raw);
        assert_eq!(ra, RetryAfterValue::Date(epoch_s + 3), "{raw}");
        assert_eq!(
            window(policy.envelope(&throttled(ra), &history)),
            (2850, 2850),
            "{raw}"
        );
    }
    // A date in the past means no wait: the backoff alone.
    let past = RetryAfterValue::parse("Wed, 31 Dec 2025 23:59:00 GMT");
    assert_eq!(
        window(policy.envelope(&throttled(past), &history)),
        (500, 500)
    );
    // A clock skewed forward by 10 s: the date is already past.
    let skewed = throttled(RetryAfterValue::Date(epoch_s + 3))
        .with_system_ms((DEFAULT_EPOCH_UNIX_MS + 10_000) as i64);
    assert_eq!(window(policy.envelope(&skewed, &history)), (500, 500));
}

#[test]
fn invalid_retry_after_is_ignored() {
    let policy = fixed(500, RetryAfterRule::Honour);
    for raw in ["1.5", "-3", "soon", "", "2, 3"] {
        let env = policy.envelope(
            &throttled(RetryAfterValue::parse(raw)),
            &CallHistory::empty(),
        );
        assert!(
            matches!(
                env,
                Envelope::Retry {
                    min_ms: 500,
                    max_ms: 500,
                    not_before: None,
                    ..
                }
            ),
            "{raw:?}: {env:?}"
        );
    }
}

#[test]
fn retry_after_combines_with_jitter() {
    // Full jitter, initial 100, cap 20 s: attempt 5 has base 1600 -> [0, 1600].
    let policy = ExponentialConfig {
        max_attempts: 10,
        ..Default::default()
    }
    .into_policy();
    let a5 = |ra: u64| {
        AttemptView::new(5, Observed::Status(503), 0, Some(10), 10)
            .with_retry_after(RetryAfterValue::Seconds(ra))
    };
    let h = CallHistory::empty();
    // RA 1 s inside the window: [1000, 1600], and no longer uniform.
    assert!(matches!(
        policy.envelope(&a5(1), &h),
        Envelope::Retry {
            min_ms: 1000,
            max_ms: 1600,
            uniform: false,
            ..
        }
    ));
    // RA above the window: exactly the RA.
    assert_eq!(window(policy.envelope(&a5(7), &h)), (7000, 7000));
    // A huge RA saturates instead of overflowing.
    let huge = AttemptView::new(2, Observed::Status(503), 0, Some(10), 10)
        .with_retry_after(RetryAfterValue::Seconds(u64::MAX));
    assert_eq!(window(policy.envelope(&huge, &h)).0, u64::MAX - 10);
}

#[test]
fn stop_reasons() {
    let policy = exp(Jitter::Full); // max_attempts 10
    let h = CallHistory::empty();
    let at = |n: u32, outcome: Observed| AttemptView::new(n, outcome, 0, Some(10), 10);
    let must_stop = |n, outcome| match policy.envelope(&at(n, outcome), &h) {
        Envelope::MustStop(reason) => Some(reason),
        Envelope::Retry { .. } => None,
    };
    assert_eq!(
        must_stop(1, Observed::Status(200)),
        Some(StopReason::Success)
    );
    assert_eq!(
        must_stop(1, Observed::Status(204)),
        Some(StopReason::Success)
    );
    assert_eq!(
        must_stop(1, Observed::Status(404)),
        Some(StopReason::NotRetryable)
    );
    assert_eq!(
        must_stop(1, Observed::Status(400)),
        Some(StopReason::NotRetryable)
    );
    assert_eq!(
        must_stop(1, Observed::Status(301)),
        Some(StopReason::NotRetryable)
    );
    assert_eq!(
        must_stop(10, Observed::Status(503)),
        Some(StopReason::MaxAttemptsExceeded)
    );
    assert_eq!(
        must_stop(10, Observed::Status(404)),
        Some(StopReason::NotRetryable)
    );
    assert_eq!(must_stop(9, Observed::Status(503)), None);
    assert_eq!(must_stop(1, Observed::Status(429)), None);
    assert_eq!(must_stop(1, Observed::Status(500)), None);
    assert_eq!(must_stop(1, Observed::Timeout), None);
    assert_eq!(must_stop(1, Observed::Refused), None);
    assert_eq!(
        must_stop(1, Observed::Transport(io::ErrorKind::ConnectionReset)),
        None
    );

    let only_503 = ExponentialConfig {
        retry_on: "503".parse::<RetryOn>().unwrap(),
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        only_503.envelope(&at(1, Observed::Status(500)), &h),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    assert_eq!(
        only_503.envelope(&at(1, Observed::Timeout), &h),
        Envelope::MustStop(StopReason::NotRetryable)
    );

    let none = NoRetryConfig::default().into_policy();
    assert_eq!(
        none.envelope(&at(1, Observed::Status(503)), &h),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    assert_eq!(
        none.envelope(&at(1, Observed::Status(404)), &h),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    assert_eq!(
        none.envelope(&at(1, Observed::Status(200)), &h),
        Envelope::MustStop(StopReason::Success)
    );
}

#[test]
fn timeouts_measure_from_the_end() {
    // A timeout has no head: the window counts from the end, and a Retry-After cannot exist.
    let policy = exp(Jitter::None);
    let t = AttemptView::new(2, Observed::Timeout, 1000, None, 3000);
    assert_eq!(
        window(policy.envelope(&t, &CallHistory::empty())),
        (200, 200)
    );
}

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
