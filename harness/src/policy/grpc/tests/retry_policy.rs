//! The A6 retry policy of a service config: the 2024 backoff (the capped exponential times
//! 0.8 to 1.2) and the legacy one (uniform from zero), maxAttempts above 5 treated as 5, the
//! status read from `grpc-status` else from the HTTP status, the reference inside its
//! envelope, and A6 clients that get the cap, the jitter or the status wrong caught.

use std::time::Duration;

use super::{
    A6Mistakes, a6, a6_client, accepted, check, grpc, reference_sim, rejection, retry_scripts,
};
use crate::policy::grpc::{A6Jitter, GrpcRetryConfig};
use crate::policy::tests::support::{
    Reply, refused, reset, retry_window as window, st, timeout, view, with,
};
use crate::policy::{
    Anchor, CallHistory, ClientHistory, Envelope, Policy, StopReason, ViolationKind,
};

/// The windows after attempts 1..=count of one call, each answered `reply` (state
/// replayed, the client retrying at the top of each window).
fn retry_windows(policy: &mut dyn Policy, reply: &Reply, count: u32) -> Vec<Envelope> {
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for n in 1..=count {
        let v = view(n, start, reply);
        let h = CallHistory::new(&call, &client);
        let e = policy.envelope(&v, &h);
        start = match &e {
            Envelope::Retry { max_ms, .. } => v.end_ms + max_ms,
            Envelope::MustStop(_) => v.end_ms + 1000,
        };
        policy.record(&v, &h, crate::policy::Next::Retried { start_ms: start });
        out.push(e);
        call.push(v);
    }
    out
}

#[test]
fn a6_2024_backoff_is_the_capped_exponential_times_0_8_to_1_2() {
    let mut p = a6(5, A6Jitter::Current).into_policy();
    let w: Vec<_> = retry_windows(p.as_mut(), &grpc("14"), 5)
        .into_iter()
        .take(4)
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (80, 120, Anchor::End),
            (160, 240, Anchor::End),
            (320, 480, Anchor::End),
            (640, 960, Anchor::End)
        ]
    );
    // 0.1s x 2^4 = 1.6s is capped at maxBackoff 1s before the jitter: [0.8s, 1.2s].
    let long = GrpcRetryConfig {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(200),
        backoff_multiplier: 3.0,
        ..a6(5, A6Jitter::Current)
    };
    let w: Vec<_> = retry_windows(long.into_policy().as_mut(), &grpc("14"), 4)
        .into_iter()
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (160, 240, Anchor::End),
            (480, 720, Anchor::End),
            (800, 1200, Anchor::End),
            (800, 1200, Anchor::End)
        ]
    );
}

#[test]
fn a6_legacy_backoff_is_uniform_from_zero() {
    let mut p = a6(5, A6Jitter::Legacy).into_policy();
    let w: Vec<_> = retry_windows(p.as_mut(), &st(503), 4)
        .into_iter()
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (0, 100, Anchor::End),
            (0, 200, Anchor::End),
            (0, 400, Anchor::End),
            (0, 800, Anchor::End)
        ]
    );
}

#[test]
fn max_attempts_above_5_is_treated_as_5() {
    let mut p = a6(9, A6Jitter::Current).into_policy();
    assert_eq!(p.max_attempts(), Some(5));
    let w = retry_windows(p.as_mut(), &grpc("14"), 6);
    assert!(matches!(w[3], Envelope::Retry { .. }));
    assert_eq!(w[4], Envelope::MustStop(StopReason::MaxAttemptsExceeded));
    let mut two = a6(2, A6Jitter::Current).into_policy();
    let w = retry_windows(two.as_mut(), &grpc("14"), 2);
    assert_eq!(w[1], Envelope::MustStop(StopReason::MaxAttemptsExceeded));
}

#[test]
fn the_status_comes_from_grpc_status_else_from_the_http_status() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let after = |reply: Reply| p.envelope(&view(1, 0, &reply), &CallHistory::empty());
    let retried = |e: Envelope| matches!(e, Envelope::Retry { .. });
    // grpc-status wins over the HTTP status.
    assert!(retried(after(grpc("14"))));
    assert!(retried(after(with(st(500), "grpc-status", "14"))));
    assert_eq!(
        after(with(st(503), "grpc-status", "0")),
        Envelope::MustStop(StopReason::Success)
    );
    assert_eq!(
        after(grpc("3")),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    // A malformed status is INTERNAL, not retried here.
    assert_eq!(
        after(grpc("fourteen")),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    // Without grpc-status: gRPC's HTTP mapping (503 and 429 are UNAVAILABLE), 2xx is OK.
    assert!(retried(after(st(503))));
    assert!(retried(after(st(429))));
    assert_eq!(after(st(500)), Envelope::MustStop(StopReason::NotRetryable));
    assert_eq!(after(st(200)), Envelope::MustStop(StopReason::Success));
    // A broken or refused connection is UNAVAILABLE; a timeout is DEADLINE_EXCEEDED.
    assert!(retried(after(reset())));
    assert!(retried(after(refused(3))));
    assert_eq!(
        after(timeout(2000)),
        Envelope::MustStop(StopReason::NotRetryable)
    );
}

fn retry_configs() -> Vec<GrpcRetryConfig> {
    vec![
        a6(5, A6Jitter::Current),
        a6(9, A6Jitter::Legacy),
        GrpcRetryConfig {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(7),
            max_backoff: Duration::from_millis(50),
            backoff_multiplier: 1.3,
            retryable_status_codes: vec![14, 4, 8],
            jitter: A6Jitter::Current,
            throttling: None,
        },
    ]
}

#[test]
fn retry_reference_stays_inside_its_envelope_and_conforms() {
    for config in retry_configs() {
        let policy = config.into_policy();
        for script in retry_scripts() {
            for seed in 0..60 {
                let timeline =
                    reference_sim(3).run_reference(policy.clone_box().as_mut(), &script, seed);
                let v = check(policy.as_ref(), &timeline);
                assert!(v.is_empty(), "seed {seed}: {v:#?}\n{timeline:#?}");
            }
        }
    }
}

#[test]
fn correct_a6_clients_are_accepted() {
    let p = a6(9, A6Jitter::Current).into_policy();
    for script in retry_scripts() {
        accepted(p.as_ref(), &script, 3, || {
            a6_client(9, A6Mistakes::default())
        });
    }
}

#[test]
fn max_attempts_9_honoured_literally_is_caught() {
    let p = a6(9, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        no_cap: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[grpc("14")],
        1,
        || a6_client(9, wrong),
        ViolationKind::RetriedAfterStop(StopReason::MaxAttemptsExceeded),
    );
    assert_eq!(rate, 1.0);
    assert!(message.starts_with("attempt 6 was made"), "{message}");
}

#[test]
fn legacy_jitter_judged_as_a6_2024_is_caught() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        legacy_jitter: true,
        ..Default::default()
    };
    // Each of the 4 retries falls below 0.8 b with probability 0.8.
    let (rate, _) = rejection(
        p.as_ref(),
        &[grpc("14")],
        1,
        || a6_client(5, wrong),
        ViolationKind::TooEarly,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    // And the legacy rule accepts it.
    accepted(
        a6(5, A6Jitter::Legacy).into_policy().as_ref(),
        &[grpc("14")],
        1,
        || a6_client(5, wrong),
    );
}

#[test]
fn a_client_reading_only_the_http_status_is_caught() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        http_status_only: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[grpc("14"), grpc("0")],
        1,
        || a6_client(5, wrong),
        ViolationKind::StoppedEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.starts_with("attempt 1: the call stopped"),
        "{message}"
    );
}
