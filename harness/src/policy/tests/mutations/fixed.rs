//! Fixed-delay clients: accepted (a `Retry-After` waited from a slow body's end included), and
//! caught with a delay too short or too long, `Retry-After` ignored (seconds or a date) or
//! waited from the attempt's start, and attempts off by one.

use std::time::Duration;

use super::{
    accepted, all_503, generic_client, instant_500, is, rejected, throttled_by_date,
    throttled_then_503, too_many,
};
use crate::policy::tests::support::{Reply, st, with_ra};
use crate::policy::{FixedConfig, RetryAfterRule, ViolationKind};
use crate::rng::Stream;

#[test]
fn fixed_clients() {
    let p = FixedConfig {
        max_attempts: 4,
        delay: Duration::from_millis(500),
        retry_after: RetryAfterRule::Honour,
        ..Default::default()
    }
    .into_policy();
    for script in [
        all_503(),
        instant_500(),
        throttled_then_503(),
        throttled_by_date(),
    ] {
        accepted(p.as_ref(), &script, || {
            generic_client(4, true, |_, _, _| 500)
        });
    }
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(4, true, |_, _, _| 400),
        is(ViolationKind::TooEarly),
    );
    assert_eq!(
        message,
        "attempt 2 started 0.400s after the end of attempt 1, a 503 (needed exactly 0.500s)"
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(4, true, |_, _, _| 600),
        is(ViolationKind::TooLate),
    );
    rejected(
        p.as_ref(),
        &throttled_then_503(),
        || generic_client(4, false, |_, _, _| 500),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    rejected(
        p.as_ref(),
        &throttled_by_date(),
        || generic_client(4, false, |_, _, _| 500),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(5, true, |_, _, _| 500),
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(3, true, |_, _, _| 500),
        is(ViolationKind::StoppedEarly),
    );
    // Honouring the RA but waiting it from the end of a slow body instead of the head is
    // fine (later); waiting it from the start of the attempt is too early.
    let slow = vec![
        Reply {
            body_ms: 300,
            ..with_ra(429, "2")
        },
        st(200),
    ];
    accepted(p.as_ref(), &slow, || generic_client(4, true, |_, _, _| 500));
    rejected(
        p.as_ref(),
        &slow,
        || {
            Box::new(|v: &crate::policy::AttemptView, _: &[_], _: &mut Stream| {
                // 2 s from the start of the attempt = 1.690 s after its end.
                (v.n == 1).then(|| 2000 + v.start_ms - v.end_ms)
            })
        },
        is(ViolationKind::RetryAfterNotHonoured),
    );
}
