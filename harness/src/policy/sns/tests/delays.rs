//! The delays of a delivery policy: linear 20 s, 30 s, 40 s with and without jitter (and
//! SNS's default of 3 retries at 20 s), the four backoff models at two points, and the phases
//! (immediate, at the minimum, backoff, at the maximum) in order.

use super::{S, linear_20_40, windows};
use crate::policy::sns::{SnsBackoff, SnsConfig};
use crate::policy::tests::support::{st, view};
use crate::policy::{CallHistory, Envelope, StopReason};

#[test]
fn linear_20_30_40() {
    assert_eq!(
        windows(linear_20_40(0.0), 3),
        [(20_000, 20_000), (30_000, 30_000), (40_000, 40_000)]
    );
    // ±10 % by default, inclusive.
    assert_eq!(
        windows(linear_20_40(0.1), 3),
        [(18_000, 22_000), (27_000, 33_000), (36_000, 44_000)]
    );
    let p = linear_20_40(0.1).into_policy();
    assert_eq!(p.max_attempts(), Some(4));
    assert_eq!(
        p.envelope(&view(4, 0, &st(503)), &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    // SNS's default policy: 3 retries at 20 s.
    assert_eq!(
        windows(
            SnsConfig {
                jitter: 0.0,
                ..Default::default()
            },
            3
        ),
        [(20_000, 20_000); 3]
    );
}

#[test]
fn backoff_models_at_two_points() {
    // min 10 s, max 100 s, 4 backoff retries: i = 2 and 3 (the ends are 10 s and 100 s).
    let at = |f: SnsBackoff, i| f.delay(S(10), S(100), i, 4).as_nanos() as u64;
    assert_eq!(
        (at(SnsBackoff::Linear, 2), at(SnsBackoff::Linear, 3)),
        (40_000_000_000, 70_000_000_000)
    );
    // 10 + 90 × (1/3)², 10 + 90 × (2/3)²
    assert_eq!(
        (at(SnsBackoff::Arithmetic, 2), at(SnsBackoff::Arithmetic, 3)),
        (20_000_000_000, 50_000_000_000)
    );
    // 10 × 10^(1/3), 10 × 10^(2/3)
    assert_eq!(
        (at(SnsBackoff::Geometric, 2), at(SnsBackoff::Geometric, 3)),
        (21_544_346_900, 46_415_888_336)
    );
    // 10 + 90 × (e - 1)/(e³ - 1), 10 + 90 × (e² - 1)/(e³ - 1)
    assert_eq!(
        (
            at(SnsBackoff::Exponential, 2),
            at(SnsBackoff::Exponential, 3)
        ),
        (18_102_751_585, 40_128_313_980)
    );
    for f in [
        SnsBackoff::Linear,
        SnsBackoff::Arithmetic,
        SnsBackoff::Geometric,
        SnsBackoff::Exponential,
    ] {
        assert_eq!(at(f, 1), 10_000_000_000, "{f:?}");
        assert_eq!(at(f, 4), 100_000_000_000, "{f:?}");
        // N = 1: the single delay is min.
        assert_eq!(f.delay(S(10), S(100), 1, 1), S(10), "{f:?}");
    }
}

#[test]
fn phases_in_order() {
    // 2 immediate, 1 at min, 3 backoff (linear 2 s -> 8 s), 2 at max.
    let c = SnsConfig {
        min_delay: S(2),
        max_delay: S(8),
        num_retries: 8,
        num_no_delay_retries: 2,
        num_min_delay_retries: 1,
        num_max_delay_retries: 2,
        jitter: 0.0,
        ..Default::default()
    };
    let w: Vec<u64> = windows(c, 8).into_iter().map(|(lo, _)| lo).collect();
    assert_eq!(w, [0, 0, 2000, 2000, 5000, 8000, 8000, 8000]);
}
