//! The retry quota: what each retry costs and each success refunds in 2.0 and 2.1, an empty
//! quota stopping the call (checked after retryability and attempts), a quota of zero tokens,
//! long polling sleeping the backoff before failing, and the quota running out across calls.

use std::time::Duration;

use super::{coded, config, no_jitter, reference_sim, states};
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::tests::support::{reset, st, timeout, view};
use crate::policy::{CallHistory, Decision, Envelope, StopReason};
use crate::rng::Stream;

#[test]
fn quota_costs_and_refunds_2_0() {
    let mut p = config(AwsMode::Standard).into_policy();
    // A 503 costs 5, a timeout 10; the call fails after its third attempt.
    assert_eq!(
        states(p.as_mut(), &[st(503), timeout(2000), st(503)]),
        ["quota 495/500", "quota 485/500", "quota 485/500"]
    );
    // A first-attempt success adds 1.
    assert_eq!(states(p.as_mut(), &[st(200)]), ["quota 486/500"]);
    // A success refunds the last retry's cost: 10 after a timeout, not the 15 paid.
    assert_eq!(
        states(p.as_mut(), &[st(503), timeout(2000), st(200)]),
        ["quota 481/500", "quota 471/500", "quota 481/500"]
    );
    // An I/O error and a throttle cost 5.
    assert_eq!(
        states(p.as_mut(), &[reset(), coded(400, "SlowDown"), st(200)]),
        ["quota 476/500", "quota 471/500", "quota 476/500"]
    );
    // A bare 429 and a 404 are not retried and change nothing.
    assert_eq!(states(p.as_mut(), &[st(429)]), ["quota 476/500"]);
    assert_eq!(states(p.as_mut(), &[st(404)]), ["quota 476/500"]);
    // Never above the maximum.
    let mut full = config(AwsMode::Standard).into_policy();
    assert_eq!(states(full.as_mut(), &[st(200)]), ["quota 500/500"]);
}

#[test]
fn quota_costs_2_1() {
    let mut p = AwsConfig {
        max_attempts: Some(4),
        ..config(AwsMode::Standard21)
    }
    .into_policy();
    assert_eq!(
        states(
            p.as_mut(),
            &[
                st(503),
                timeout(2000),
                coded(400, "ThrottlingException"),
                st(200)
            ]
        ),
        [
            "quota 486/500",
            "quota 472/500",
            "quota 467/500",
            "quota 472/500"
        ]
    );
    assert_eq!(states(p.as_mut(), &[st(200)]), ["quota 473/500"]);
}

#[test]
fn an_empty_quota_stops_the_call() {
    let mut p = AwsConfig {
        initial_tokens: 12,
        ..config(AwsMode::Standard)
    }
    .into_policy();
    // 12 -> 7 -> 2, then a 503 cannot be paid for.
    let mut rng = Stream::new(3, "x");
    let calls = reference_sim(2).run_reference(p.as_mut(), &[st(503)], 3);
    assert_eq!(calls[0].len(), 3);
    assert_eq!(calls[1].len(), 1);
    assert_eq!(p.describe_state().as_deref(), Some("quota 2/12"));
    let v = view(1, 0, &st(503));
    assert_eq!(
        p.decide(&v, &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    // The order of the checks: not retryable, then attempts, then the quota.
    assert_eq!(
        p.decide(&view(1, 0, &st(400)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::NotRetryable)
    );
    assert_eq!(
        p.decide(&view(3, 0, &st(503)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::MaxAttemptsExceeded)
    );
}

#[test]
fn a_quota_of_zero_tokens_never_pays_for_a_retry() {
    // `initial_tokens: 0` is an empty bucket whose size is 0: every retryable failure
    // stops with retry_quota_exceeded, and successes cannot refill it (refunds stop at the
    // bucket's size), in every mode.
    for mode in [AwsMode::Standard, AwsMode::Standard21, AwsMode::Adaptive] {
        let empty = AwsConfig {
            initial_tokens: 0,
            ..config(mode)
        };
        assert_eq!(empty.validate(), Ok(()), "{mode:?}");
        let mut p = empty.into_policy();
        let calls = reference_sim(3).run_reference(p.as_mut(), &[st(200)], 1);
        assert!(calls.iter().all(|c| c.len() == 1), "{mode:?}");
        assert!(
            p.describe_state()
                .is_some_and(|s| s.starts_with("quota 0/0")),
            "{mode:?}: {:?}",
            p.describe_state()
        );
        let calls = reference_sim(2).run_reference(p.as_mut(), &[st(503), st(200)], 1);
        assert!(calls.iter().all(|c| c.len() == 1), "{mode:?}");
        let mut rng = Stream::new(1, "x");
        for reply in [st(503), timeout(2000), coded(400, "ThrottlingException")] {
            assert_eq!(
                p.decide(&view(1, 0, &reply), &CallHistory::empty(), &mut rng),
                Decision::Stop(StopReason::RetryQuotaExceeded),
                "{mode:?} {reply:?}"
            );
            assert_eq!(
                p.envelope(&view(1, 0, &reply), &CallHistory::empty()),
                Envelope::MustStop(StopReason::RetryQuotaExceeded),
                "{mode:?} {reply:?}"
            );
        }
    }
    // 2.1 with long polling still sleeps the backoff before failing, as with any empty quota.
    let mut p = AwsConfig {
        initial_tokens: 0,
        long_polling: true,
        ..no_jitter(AwsMode::Standard21)
    }
    .into_policy();
    let mut rng = Stream::new(1, "x");
    assert_eq!(
        p.decide(&view(1, 0, &st(503)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    assert_eq!(p.wait_after_stop(), Duration::from_millis(50));
}

#[test]
fn long_polling_sleeps_before_failing() {
    let mut p = AwsConfig {
        initial_tokens: 3,
        long_polling: true,
        ..no_jitter(AwsMode::Standard21)
    }
    .into_policy();
    let mut rng = Stream::new(1, "x");
    let throttled = view(1, 0, &coded(400, "ThrottlingException"));
    assert_eq!(
        p.decide(&throttled, &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    assert_eq!(p.wait_after_stop(), Duration::from_secs(1));
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 3/3, long-poll wait 1.000s")
    );
    p.decide(&view(1, 0, &st(503)), &CallHistory::empty(), &mut rng);
    assert_eq!(p.wait_after_stop(), Duration::from_millis(50));
    // Without long polling, or in 2.0, the call fails at once.
    let mut q = AwsConfig {
        initial_tokens: 3,
        long_polling: true,
        ..no_jitter(AwsMode::Standard)
    }
    .into_policy();
    q.decide(&throttled, &CallHistory::empty(), &mut rng);
    assert_eq!(q.wait_after_stop(), Duration::ZERO);
}

#[test]
fn the_quota_runs_out_across_calls() {
    // 500 tokens, 10 per failed call (two 503 retries): the 51st call stops after its
    // first attempt, with retry_quota_exceeded.
    let mut p = config(AwsMode::Standard).into_policy();
    let calls = reference_sim(52).run_reference(p.as_mut(), &[st(503)], 9);
    assert!(calls[..50].iter().all(|c| c.len() == 3));
    assert_eq!(calls[50].len(), 1);
    assert_eq!(p.describe_state().as_deref(), Some("quota 0/500"));
}
