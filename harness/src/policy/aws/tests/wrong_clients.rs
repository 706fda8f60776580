//! Mutation tests: an AWS client written from scratch with literal constants, accepted when
//! correct and caught with each mistake: the cap applied after the jitter, refunds missing or
//! too large, the quota ignored or charged wrong, wrong bases or retryable classes, attempts
//! off by one, and no adaptive limiter.

use std::time::Duration;

use super::{coded, config, no_jitter};
use crate::policy::aws::{AwsConfig, AwsMode, AwsSdk};
use crate::policy::tests::support::{Client, Reply, Sim, st, timeout};
use crate::policy::{AttemptView, Observed, Policy, StopReason, ViolationKind};
use crate::rng::Stream;

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls).clients_drawing_on("test/aws/client")
}

/// An AWS client written from scratch with literal constants. Each flag is one mistake.
#[derive(Clone, Copy, Default)]
struct Mistakes {
    cap_after_jitter: bool,
    no_refund: bool,
    refund_all: bool,
    ignore_quota: bool,
    timeout_costs_5: bool,
    base_1s_in_2_1: bool,
    retry_bare_429: bool,
}

/// botocore 2.0 (`v2_1` false) or 2.1, max backoff `cap_ms`; `b` random unless `fixed_b`.
fn aws_client<'a>(
    v2_1: bool,
    max_attempts: u32,
    cap_ms: u64,
    fixed_b: bool,
    m: Mistakes,
) -> Box<Client<'a>> {
    let mut quota: i64 = 500;
    let mut paid: Vec<i64> = Vec::new();
    Box::new(
        move |v: &AttemptView, _prev: &[AttemptView], rng: &mut Stream| {
            if v.n == 1 {
                paid.clear();
            }
            let throttle = matches!(
                v.error_code.as_deref(),
                Some("ThrottlingException" | "Throttling" | "SlowDown")
            );
            let retryable = match v.outcome {
                Observed::Status(200..=299) => {
                    let refund = if m.no_refund {
                        0
                    } else if m.refund_all {
                        paid.iter().sum()
                    } else {
                        paid.last().copied().unwrap_or(1)
                    };
                    quota = (quota + refund).min(500);
                    return None;
                }
                Observed::Status(500 | 502 | 503 | 504) => true,
                Observed::Status(429) => throttle || m.retry_bare_429,
                Observed::Status(_) => throttle,
                _ => true,
            };
            if !retryable || v.n >= max_attempts {
                return None;
            }
            let timed_out = v.outcome == Observed::Timeout;
            let cost = match (v2_1, throttle, timed_out) {
                (true, true, _) => 5,
                (true, false, _) => 14,
                (false, _, true) if !m.timeout_costs_5 => 10,
                (false, _, _) => 5,
            };
            if cost > quota && !m.ignore_quota {
                return None;
            }
            quota -= cost;
            paid.push(cost);
            let base: u64 = if !v2_1 || throttle || m.base_1s_in_2_1 {
                1000
            } else {
                50
            };
            let raw = base << (v.n - 1);
            let b = if fixed_b { 1.0 } else { rng.uniform_f64() };
            let delay = if m.cap_after_jitter {
                ((b * raw as f64) as u64).min(cap_ms)
            } else {
                (b * raw.min(cap_ms) as f64) as u64
            };
            Some(delay)
        },
    )
}

const SEEDS: u64 = 60;

/// The share of seeds on which `kind` is reported, and the first such message.
fn rejection<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    calls: u32,
    make: impl FnMut() -> Box<Client<'a>>,
    kind: ViolationKind,
) -> (f64, String) {
    client_sim(calls).share_rejected(SEEDS, policy, script, make, |k| k == kind)
}

fn accepted<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    calls: u32,
    make: impl FnMut() -> Box<Client<'a>>,
) {
    client_sim(calls).assert_accepted(SEEDS, policy, script, make);
}

#[test]
fn correct_aws_clients_are_accepted() {
    let p = config(AwsMode::Standard).into_policy();
    for script in [
        vec![st(503)],
        vec![st(503), st(503), st(200)],
        vec![timeout(2000), st(200)],
        vec![st(503), timeout(2000), st(503)],
        vec![st(429)],
    ] {
        accepted(p.as_ref(), &script, 70, || {
            aws_client(false, 3, 20_000, false, Mistakes::default())
        });
    }
    let p21 = config(AwsMode::Standard21).into_policy();
    for script in [
        vec![st(503)],
        vec![coded(400, "ThrottlingException"), st(503), st(200)],
    ] {
        accepted(p21.as_ref(), &script, 50, || {
            aws_client(true, 3, 20_000, false, Mistakes::default())
        });
    }
}

#[test]
fn cap_applied_after_jitter_is_caught() {
    let p = AwsConfig {
        max_attempts: Some(10),
        max_backoff: Duration::from_secs(2),
        ..config(AwsMode::Standard)
    }
    .into_policy();
    let wrong = Mistakes {
        cap_after_jitter: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(503)],
        1,
        || aws_client(false, 10, 2000, false, wrong),
        ViolationKind::PinnedAtBound,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    assert!(message.contains("exactly at the maximum"), "{message}");
    // The right order passes on the same policy.
    accepted(p.as_ref(), &[st(503)], 1, || {
        aws_client(false, 10, 2000, false, Mistakes::default())
    });
}

#[test]
fn missing_refund_runs_out_too_early() {
    // [503, 503, 200]: 10 paid, 5 refunded, so 100 calls drain the quota; without refunds
    // 50 do, and the 51st call stops where the policy still has quota.
    let p = config(AwsMode::Standard).into_policy();
    let script = [st(503), st(503), st(200)];
    let (rate, message) = rejection(
        p.as_ref(),
        &script,
        60,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    no_refund: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::StoppedEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.starts_with("attempt 1: the call stopped after a retryable 503"),
        "{message}"
    );
    accepted(p.as_ref(), &script, 110, || {
        aws_client(false, 3, 20_000, false, Mistakes::default())
    });
}

#[test]
fn refunding_every_retry_runs_out_too_late() {
    // Refunding the whole call's 10 instead of the last retry's 5 never drains the quota;
    // the policy's drops 5 a call, so the 100th call pays its first retry with the last 5
    // tokens and must stop after its second attempt.
    let p = config(AwsMode::Standard).into_policy();
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(503), st(503), st(200)],
        105,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    refund_all: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 3 was made after a 503 but the retry quota could not pay for it (quota 0/500)"
    );
}

#[test]
fn ignored_quota_is_caught() {
    let p = config(AwsMode::Standard).into_policy();
    let ignore = Mistakes {
        ignore_quota: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &[st(503)],
        55,
        || aws_client(false, 3, 20_000, false, ignore),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    // A timeout charged 5 instead of 10 drains the quota half as fast.
    let cheap = Mistakes {
        timeout_costs_5: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &[timeout(2000)],
        30,
        || aws_client(false, 3, 20_000, false, cheap),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    // A botocore client judged as smithy-rs (10 for a bare 500) runs out too late as well.
    let smithy = AwsConfig {
        sdk: AwsSdk::SmithyRs,
        ..config(AwsMode::Standard)
    }
    .into_policy();
    let (rate, _) = rejection(
        smithy.as_ref(),
        &[st(500)],
        30,
        || aws_client(false, 3, 20_000, false, Mistakes::default()),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn wrong_bases_and_classes_are_caught() {
    // 2.1 with 2.0's 1 s base for a 503.
    let exact = no_jitter(AwsMode::Standard21).into_policy();
    let slow = Mistakes {
        base_1s_in_2_1: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        exact.as_ref(),
        &[st(503)],
        1,
        || aws_client(true, 3, 20_000, true, slow),
        ViolationKind::TooLate,
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 2 started 1.000s after the end of attempt 1, a 503 (needed exactly 0.050s)"
    );
    let random = config(AwsMode::Standard21).into_policy();
    let (rate, _) = rejection(
        random.as_ref(),
        &[st(503)],
        1,
        || aws_client(true, 3, 20_000, false, slow),
        ViolationKind::TooLate,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    // A bare 429 is not retryable.
    let p = config(AwsMode::Standard).into_policy();
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(429)],
        1,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    retry_bare_429: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::RetriedAfterStop(StopReason::NotRetryable),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 2 was made after a 429, which the policy does not retry"
    );
    // Off by one attempt.
    let (rate, _) = rejection(
        p.as_ref(),
        &[st(503)],
        1,
        || aws_client(false, 4, 20_000, false, Mistakes::default()),
        ViolationKind::RetriedAfterStop(StopReason::MaxAttemptsExceeded),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn adaptive_client_ignoring_the_limiter_is_caught() {
    // Throttles answered in 1 ms: the limiter holds the next send ~2 s, the backoff alone
    // is at most 1 s. `aws_client` has no limiter at all: it is a standard-mode client.
    let p = config(AwsMode::Adaptive).into_policy();
    let throttle = Reply {
        latency_ms: 1,
        ..coded(400, "ThrottlingException")
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[throttle],
        1,
        || aws_client(false, 3, 20_000, false, Mistakes::default()),
        ViolationKind::TooEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(message.contains("(needed exactly 1.998s)"), "{message}");
}
