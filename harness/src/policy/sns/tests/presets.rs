//! The presets: the AWS-managed policy's 100,015 retries over about 23 days and the
//! customer-managed policy's 50 retries over about 6.6 hours, their phases and nominal delays,
//! each walked to its end.

use std::time::Duration;

use super::{check, reference_sim};
use crate::policy::sns::{SnsConfig, SnsPhase};
use crate::policy::tests::support::st;
use crate::policy::{CallHistory, Envelope, StopReason};

/// To the nearest ms, halves up (the policy's single rounding).
fn rounded_ms(d: Duration) -> u64 {
    (d.as_nanos() as u64 + 500_000) / 1_000_000
}

#[test]
fn aws_managed_preset_has_100_015_retries() {
    let c = SnsConfig::aws_managed();
    assert_eq!(c.num_retries, 100_015);
    assert_eq!(
        (
            c.num_no_delay_retries,
            c.num_min_delay_retries,
            c.backoff_retries(),
            c.num_max_delay_retries
        ),
        (3, 2, 10, 100_000)
    );
    assert_eq!(c.phase(3), Some(SnsPhase::Immediate));
    assert_eq!(c.phase(4), Some(SnsPhase::PreBackoff));
    assert_eq!(c.phase(5), Some(SnsPhase::PreBackoff));
    assert_eq!(c.phase(6), Some(SnsPhase::Backoff { i: 1, n: 10 }));
    assert_eq!(c.phase(15), Some(SnsPhase::Backoff { i: 10, n: 10 }));
    assert_eq!(c.phase(16), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(100_015), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(100_016), None);
    let nominal: Vec<u64> = (1..=17)
        .map(|r| rounded_ms(c.nominal_delay(r).unwrap()))
        .collect();
    // 1 s..20 s exponential: 1 + 19 × (e^(i-1) - 1) / (e^9 - 1), rounded to ms.
    assert_eq!(
        nominal,
        [
            0, 0, 0, 1000, 1000, 1000, 1004, 1015, 1045, 1126, 1346, 1944, 3569, 7988, 20_000,
            20_000, 20_000
        ]
    );
    // About 23 days: 2,000,042.036 s.
    assert_eq!(rounded_ms(c.total_retry_time()), 2_000_042_036);
    // The whole delivery: 100,016 attempts, then max_attempts_exceeded.
    let mut p = c.clone().into_policy();
    assert_eq!(p.max_attempts(), Some(100_016));
    let calls = reference_sim(1, 200_000).run_reference(p.as_mut(), &[st(503)], 5);
    assert_eq!(calls[0].len(), 100_016);
    let last = calls[0].last().unwrap();
    assert_eq!(
        p.envelope(last, &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    assert!(check(c.into_policy().as_ref(), &calls).is_empty());
    // Presets are exempt from the custom-policy limits.
    assert!(SnsConfig::aws_managed().validate().is_ok());
    assert!(SnsConfig::aws_managed().validate_custom_http().is_err());
}

#[test]
fn customer_managed_preset_has_50_retries() {
    let c = SnsConfig::customer_managed();
    assert_eq!(c.num_retries, 50);
    assert_eq!(
        (
            c.num_no_delay_retries,
            c.num_min_delay_retries,
            c.backoff_retries(),
            c.num_max_delay_retries
        ),
        (0, 2, 10, 38)
    );
    let nominal: Vec<u64> = (1..=13)
        .map(|r| rounded_ms(c.nominal_delay(r).unwrap()))
        .collect();
    assert_eq!(
        nominal,
        [
            10_000, 10_000, 10_000, 10_125, 10_465, 11_390, 13_903, 20_735, 39_305, 89_785,
            227_003, 600_000, 600_000
        ]
    );
    assert_eq!(c.phase(50), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(51), None);
    // About 6.6 hours.
    assert_eq!(rounded_ms(c.total_retry_time()), 23_852_711);
    let mut p = c.into_policy();
    assert_eq!(p.max_attempts(), Some(51));
    let calls = reference_sim(1, 100).run_reference(p.as_mut(), &[st(500)], 2);
    assert_eq!(calls[0].len(), 51);
}
