//! `Retry-After`: seconds counted from the head, HTTP dates against the wall clock (and a
//! skewed one), invalid values ignored, `Ignore` by configuration, and the combination with a
//! jittered window.

use super::{MS, window};
use crate::policy::{
    AttemptView, CallHistory, DEFAULT_EPOCH_UNIX_MS, Envelope, ExponentialConfig, FixedConfig,
    Observed, Policy, RetryAfterRule, RetryAfterValue,
};

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
