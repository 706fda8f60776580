//! The throttle policy (`maxReceivesPerSecond`): attempt starts spaced by its interval,
//! within a delivery and across deliveries.

use std::time::Duration;

use super::{reference_sim, windows};
use crate::policy::sns::SnsConfig;
use crate::policy::tests::support::st;

#[test]
fn throttle_policy_spaces_attempt_starts() {
    // 3 per second: starts at least 334 ms apart. Immediate retries of 10 ms attempts wait
    // 324 ms after the end.
    let c = SnsConfig {
        num_retries: 4,
        num_no_delay_retries: 3,
        max_receives_per_second: Some(3),
        ..Default::default()
    };
    assert_eq!(c.spacing_ms(), Some(334));
    assert_eq!(windows(c.clone(), 4)[..3], [(324, 324); 3]);
    // A 20 s delay is far above the spacing.
    assert_eq!(windows(c.clone(), 4)[3], (18_000, 22_000));
    // Across calls: the reference waits before a first attempt.
    let mut p = c.into_policy();
    let calls = reference_sim(3, 10).run_reference(p.as_mut(), &[st(503), st(200)], 1);
    for pair in calls.concat().windows(2) {
        assert!(pair[1].start_ms - pair[0].start_ms >= 334, "{pair:?}");
    }
    assert_eq!(
        p.wait_before_call(calls[2][1].start_ms + 100),
        Duration::from_millis(234)
    );
}
