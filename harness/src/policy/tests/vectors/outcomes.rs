//! What an attempt's outcome leads to: the stop reasons by status, transport failure and
//! attempt count (with `retry_on` and under `no_retry` too), and a timeout's window counted
//! from its end.

use std::io;

use super::{exp, window};
use crate::policy::{
    AttemptView, CallHistory, Envelope, ExponentialConfig, Jitter, NoRetryConfig, Observed,
    RetryOn, StopReason,
};

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
