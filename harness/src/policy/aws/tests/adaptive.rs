//! Adaptive mode's client-side rate limiter: a throttle enables it and it holds the next send
//! (its state described); a plain 503 gets the backoff alone.

use std::time::Duration;

use super::{coded, no_jitter, window};
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::tests::support::{st, view};
use crate::policy::{Anchor, CallHistory, Decision};
use crate::rng::Stream;

#[test]
fn adaptive_limiter_delays_after_a_throttle() {
    // A throttle ending at 10 ms enables the limiter: measured rate 0 (its first half-second
    // bucket has not closed), so the rate is 0 -> fill 0.5 token/s, capacity 1; the bucket
    // filled 0.01 token at 1/s since 0, so the next token is (1 - 0.01) / 0.5 = 1.98 s away.
    let mut p = AwsConfig {
        max_attempts: Some(5),
        ..no_jitter(AwsMode::Adaptive)
    }
    .into_policy();
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 500/500, limiter off")
    );
    let throttle = coded(400, "ThrottlingException");
    let v = view(1, 0, &throttle);
    assert_eq!(window(p.envelope(&v, &CallHistory::empty())), (1980, 1980));
    let mut rng = Stream::new(1, "x");
    assert_eq!(
        p.decide(&v, &CallHistory::empty(), &mut rng),
        Decision::Retry {
            delay: Duration::from_millis(1980),
            measured_from: Anchor::End
        }
    );
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 495/500, send rate 0.500/s (measured 0.000/s)")
    );
    // Not enabled by a plain 503: the backoff alone.
    let q = no_jitter(AwsMode::Adaptive).into_policy();
    assert_eq!(
        window(q.envelope(&view(1, 0, &st(503)), &CallHistory::empty())),
        (1000, 1000)
    );
    assert_eq!(q.wait_before_call(5000), Duration::ZERO);
}
