//! Mutation tests: clients written here from scratch (plain integer-millisecond formulas, no
//! call into the policy code), correct ones and deliberately wrong ones, run against pure
//! timelines; `conforms` must accept the first and reject the second.
//!
//! Wrong clients whose every delay is wrong are rejected on every seed. Clients that are only
//! sometimes outside the envelope (a wrong multiplier under full jitter, a missing cap on
//! decorrelated jitter) or only wrong in distribution (a cap applied after the jitter) are
//! judged by their rejection rate over many seeds.

use std::time::Duration;

use super::support::{Client, Reply, Sim, failure, share_caught, st, with_ra};
use crate::policy::{
    AttemptView, ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig,
    NoRetryConfig, Observed, Policy, RetryAfterRule, RetryAfterValue, Violation, ViolationKind,
    conforms,
};
use crate::rng::Stream;

const SEEDS: u64 = 100;

fn violations(
    policy: &dyn Policy,
    script: &[Reply],
    seed: u64,
    mut client: Box<Client<'_>>,
) -> Vec<Violation> {
    let timeline = Sim::calls(1)
        .of_at_most(60)
        .client_call(script, seed, client.as_mut());
    conforms(policy, &timeline)
}

/// The client conforms on every seed.
fn accepted<'a>(policy: &dyn Policy, script: &[Reply], make: impl Fn() -> Box<Client<'a>>) {
    for seed in 0..SEEDS {
        let v = violations(policy, script, seed, make());
        assert!(v.is_empty(), "{} seed {seed}: {v:#?}", policy.name());
    }
}

/// The share of seeds on which a violation of the expected kind is reported; the first such
/// message is returned for assertions on the wording.
fn rejection_rate<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    make: impl Fn() -> Box<Client<'a>>,
    kind: impl Fn(ViolationKind) -> bool,
) -> (f64, String) {
    share_caught(SEEDS, |seed| violations(policy, script, seed, make()), kind)
}

/// The client is rejected, with the expected kind, on every seed.
fn rejected<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    make: impl Fn() -> Box<Client<'a>>,
    kind: impl Fn(ViolationKind) -> bool,
) -> String {
    let (rate, message) = rejection_rate(policy, script, make, kind);
    assert_eq!(
        rate,
        1.0,
        "{}: caught on {rate} of the seeds",
        policy.name()
    );
    message
}

fn is(kind: ViolationKind) -> impl Fn(ViolationKind) -> bool {
    move |k| k == kind
}

fn too_many(k: ViolationKind) -> bool {
    k == ViolationKind::RetriedAfterStop(crate::policy::StopReason::MaxAttemptsExceeded)
}

fn all_503() -> Vec<Reply> {
    vec![st(503)]
}

/// An instant server (0 ms latency) failing with 500 forever.
fn instant_500() -> Vec<Reply> {
    vec![Reply {
        latency_ms: 0,
        ..st(500)
    }]
}

fn throttled_then_503() -> Vec<Reply> {
    vec![with_ra(429, "2"), st(503)]
}

fn throttled_by_date() -> Vec<Reply> {
    // The date is 3 s after the epoch; the head arrives 10 ms after it: 2.990 s to wait.
    vec![
        with_ra(429, "Thu, 01 Jan 2026 00:00:03 GMT"),
        st(503),
        st(200),
    ]
}

/// Full jitter on `initial × 2^(n-1)` ms, capped at `cap` first.
fn full(n: u32, cap: u64, rng: &mut Stream) -> u64 {
    rng.uniform_u64(0, (100u64 << (n - 1)).min(cap))
}

/// A generic client written independently of the policy code: stops on 2xx, on 4xx other
/// than 429, and after `max_attempts`; otherwise sleeps `backoff(n, prev_delay, rng)` ms,
/// raised to the `Retry-After` when `honour` is set.
fn generic_client<'a>(
    max_attempts: u32,
    honour: bool,
    mut backoff: impl FnMut(u32, Option<u64>, &mut Stream) -> u64 + 'a,
) -> Box<Client<'a>> {
    Box::new(
        move |v: &AttemptView, prev: &[AttemptView], rng: &mut Stream| {
            if let Observed::Status(s) = v.outcome {
                if (200..300).contains(&s) || ((400..500).contains(&s) && s != 429) {
                    return None;
                }
            }
            if v.n >= max_attempts {
                return None;
            }
            let prev_delay = prev.last().map(|p| v.start_ms - p.end_ms);
            let mut delay = backoff(v.n, prev_delay, rng);
            if honour {
                let head = v.head_ms.unwrap_or(v.end_ms) as i64;
                let not_before = match &v.retry_after {
                    Some(RetryAfterValue::Seconds(s)) => head + *s as i64 * 1000,
                    Some(RetryAfterValue::Date(d)) => head + (d * 1000 - v.now_system_ms).max(0),
                    _ => 0,
                };
                delay = delay.max((not_before - v.end_ms as i64).max(0) as u64);
            }
            Some(delay)
        },
    )
}

// ---------------------------------------------------------------- exponential

fn exponential(jitter: Jitter, max_attempts: u32, cap_ms: u64) -> Box<dyn Policy> {
    ExponentialConfig {
        max_attempts,
        initial: Duration::from_millis(100),
        multiplier: 2.0,
        max_delay: Duration::from_millis(cap_ms),
        jitter,
        retry_after: RetryAfterRule::Honour,
        ..Default::default()
    }
    .into_policy()
}

#[test]
fn exponential_correct_clients_are_accepted() {
    let p = exponential(Jitter::Full, 15, 1000);
    for script in [
        all_503(),
        instant_500(),
        throttled_then_503(),
        throttled_by_date(),
    ] {
        accepted(p.as_ref(), &script, || {
            generic_client(15, true, |n, _, rng| full(n, 1000, rng))
        });
    }
    let none = exponential(Jitter::None, 8, 1000);
    accepted(none.as_ref(), &throttled_then_503(), || {
        generic_client(8, true, |n, _, _| (100u64 << (n - 1)).min(1000))
    });
    let equal = exponential(Jitter::Equal, 10, 1000);
    accepted(equal.as_ref(), &all_503(), || {
        generic_client(10, true, |n, _, rng| {
            let base = (100u64 << (n - 1)).min(1000);
            base / 2 + rng.uniform_u64(0, base / 2)
        })
    });
}

#[test]
fn exponential_cap_applied_after_jitter_is_caught() {
    // Jitter on the uncapped base, then the cap: every delay lies inside its window, but
    // from the fifth retry on most sit exactly at the cap.
    let p = exponential(Jitter::Full, 15, 1000);
    let (rate, message) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(15, true, |n, _, rng| {
                rng.uniform_u64(0, 100u64 << (n - 1)).min(1000)
            })
        },
        is(ViolationKind::PinnedAtBound),
    );
    assert!(rate >= 0.99, "caught on {rate}");
    assert!(message.contains("exactly at the maximum"), "{message}");
    assert!(
        message.contains(": 1.000s after the end of attempt "),
        "{message}"
    );
}

#[test]
fn exponential_missing_jitter_is_caught() {
    let p = exponential(Jitter::Full, 8, 20_000);
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |n, _, _| 100u64 << (n - 1)),
        is(ViolationKind::PinnedAtBound),
    );
    // A client that never sleeps sits on the minimum of every full-jitter window.
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |_, _, _| 0),
        is(ViolationKind::PinnedAtBound),
    );
}

#[test]
fn exponential_wrong_multiplier_is_caught() {
    let none = exponential(Jitter::None, 6, 20_000);
    let message = rejected(
        none.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| 100 * 3u64.pow(n - 1)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.300s after the end of attempt 2, a 503 (needed exactly 0.200s)"
    );
    // Under full jitter a ×3 client is only sometimes outside: over 7 retries, nearly always.
    let p = exponential(Jitter::Full, 8, 20_000);
    let (rate, _) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(8, true, |n, _, rng| {
                rng.uniform_u64(0, 100 * 3u64.pow(n - 1))
            })
        },
        is(ViolationKind::TooLate),
    );
    assert!(rate >= 0.97, "caught on {rate}");
    // Equal jitter whose lower half is missing (full instead of equal).
    let equal = exponential(Jitter::Equal, 10, 1000);
    let (rate, _) = rejection_rate(
        equal.as_ref(),
        &all_503(),
        || generic_client(10, true, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::TooEarly),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}

#[test]
fn exponential_off_by_one_attempts_are_caught() {
    let p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(5, true, |n, _, rng| full(n, 1000, rng)),
        too_many,
    );
    assert_eq!(
        message,
        "attempt 5 was made but the policy allows at most 4 attempts"
    );
    let message = rejected(
        p.as_ref(),
        &instant_500(),
        || generic_client(3, true, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(
        message,
        "attempt 3: the call stopped after a retryable 500 with attempts left (policy allows 4 \
         attempts)"
    );
}

#[test]
fn exponential_retry_after_ignored_is_caught() {
    let none = exponential(Jitter::None, 4, 1000);
    let message = rejected(
        none.as_ref(),
        &throttled_then_503(),
        || generic_client(4, false, |n, _, _| (100u64 << (n - 1)).min(1000)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    assert_eq!(
        message,
        "attempt 2 started 0.100s after the head of a 429 with Retry-After: 2 (needed >= 2.000s)"
    );
    let full_p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        full_p.as_ref(),
        &throttled_by_date(),
        || generic_client(4, false, |n, _, rng| full(n, 1000, rng)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    assert!(
        message.ends_with(
            "the head of a 429 with Retry-After: Thu, 01 Jan 2026 00:00:03 GMT (needed >= 2.990s)"
        ),
        "{message}"
    );
}

#[test]
fn exponential_retrying_a_404_is_caught() {
    let p = exponential(Jitter::Full, 4, 1000);
    let message = rejected(
        p.as_ref(),
        &[st(404)],
        || {
            Box::new(|v: &crate::policy::AttemptView, _: &[_], _: &mut Stream| {
                (v.n < 2).then_some(50)
            })
        },
        is(ViolationKind::RetriedAfterStop(
            crate::policy::StopReason::NotRetryable,
        )),
    );
    assert_eq!(
        message,
        "attempt 2 was made after a 404, which the policy does not retry"
    );
}

#[test]
fn decorrelated_clients() {
    let p = exponential(Jitter::Decorrelated, 15, 1000);
    // min(cap, uniform[initial, 3 × previous sleep]), previous = initial at first.
    let correct = || {
        generic_client(15, true, |_, prev: Option<u64>, rng: &mut Stream| {
            rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
        })
    };
    for script in [all_503(), throttled_then_503(), throttled_by_date()] {
        accepted(p.as_ref(), &script, correct);
    }
    // The cap forgotten: the chain outgrows it.
    let (rate, message) = rejection_rate(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(15, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100))
            })
        },
        is(ViolationKind::TooLate),
    );
    assert!(rate >= 0.95, "caught on {rate}");
    assert!(message.contains("(needed 0.100s to "), "{message}");
    // Off by one, both ways.
    rejected(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(16, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
            })
        },
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || {
            generic_client(14, true, |_, prev: Option<u64>, rng: &mut Stream| {
                rng.uniform_u64(100, 3 * prev.unwrap_or(100)).min(1000)
            })
        },
        is(ViolationKind::StoppedEarly),
    );
}

// ---------------------------------------------------------------- linear

fn linear(jitter: Jitter) -> Box<dyn Policy> {
    LinearConfig {
        max_attempts: 6,
        initial: Duration::from_millis(200),
        step: Duration::from_millis(300),
        max_delay: Duration::from_millis(1000),
        jitter,
        ..Default::default()
    }
    .into_policy()
}

/// 200 + 300 × (n-1), capped at 1000.
fn linear_base(n: u32) -> u64 {
    (200 + 300 * u64::from(n - 1)).min(1000)
}

#[test]
fn linear_clients() {
    let p = linear(Jitter::None);
    for script in [all_503(), instant_500(), throttled_then_503()] {
        accepted(p.as_ref(), &script, || {
            generic_client(6, true, |n, _, _| linear_base(n))
        });
    }
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| (200 + 310 * u64::from(n - 1)).min(1000)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.510s after the end of attempt 2, a 503 (needed exactly 0.500s)"
    );
    // The step counted from the first attempt instead of the first retry.
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(6, true, |n, _, _| (200 + 300 * u64::from(n)).min(1000)),
        is(ViolationKind::TooLate),
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(7, true, |n, _, _| linear_base(n)),
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(5, true, |n, _, _| linear_base(n)),
        is(ViolationKind::StoppedEarly),
    );
    rejected(
        p.as_ref(),
        &throttled_then_503(),
        || generic_client(6, false, |n, _, _| linear_base(n)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    // Full jitter: correct, and with the cap applied after the jitter on a long call (a
    // low cap, so that the uncapped base soon dwarfs it and most delays pin at the cap).
    let full_p = LinearConfig {
        max_attempts: 20,
        initial: Duration::from_millis(200),
        step: Duration::from_millis(300),
        max_delay: Duration::from_millis(500),
        jitter: Jitter::Full,
        ..Default::default()
    }
    .into_policy();
    accepted(full_p.as_ref(), &all_503(), || {
        generic_client(20, true, |n, _, rng| {
            rng.uniform_u64(0, linear_base(n).min(500))
        })
    });
    let (rate, _) = rejection_rate(
        full_p.as_ref(),
        &all_503(),
        || {
            generic_client(20, true, |n, _, rng| {
                rng.uniform_u64(0, 200 + 300 * u64::from(n - 1)).min(500)
            })
        },
        is(ViolationKind::PinnedAtBound),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}

// ---------------------------------------------------------------- fibonacci

fn fibonacci(jitter: Jitter, max_attempts: u32) -> Box<dyn Policy> {
    FibonacciConfig {
        max_attempts,
        initial: Duration::from_millis(100),
        max_delay: Duration::from_millis(2000),
        jitter,
        ..Default::default()
    }
    .into_policy()
}

/// 100 × (1, 1, 2, 3, 5, 8, 13, 20 capped, ...)
fn fib_ms(n: u32) -> u64 {
    const TABLE: [u64; 8] = [100, 100, 200, 300, 500, 800, 1300, 2000];
    TABLE[(n as usize - 1).min(7)]
}

#[test]
fn fibonacci_clients() {
    let p = fibonacci(Jitter::None, 9);
    for script in [all_503(), instant_500(), throttled_then_503()] {
        accepted(p.as_ref(), &script, || {
            generic_client(9, true, |n, _, _| fib_ms(n))
        });
    }
    // The sequence without its repeated 1: 1, 2, 3, 5, ...
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, _| fib_ms(n + 1)),
        is(ViolationKind::TooLate),
    );
    assert_eq!(
        message,
        "attempt 3 started 0.200s after the end of attempt 2, a 503 (needed exactly 0.100s)"
    );
    // The sequence from 0: 0, 1, 1, 2, ...
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, _| if n == 1 { 0 } else { fib_ms(n - 1) }),
        is(ViolationKind::TooEarly),
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(10, true, |n, _, _| fib_ms(n)),
        too_many,
    );
    rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(8, true, |n, _, _| fib_ms(n)),
        is(ViolationKind::StoppedEarly),
    );
    rejected(
        p.as_ref(),
        &throttled_then_503(),
        || generic_client(9, false, |n, _, _| fib_ms(n)),
        is(ViolationKind::RetryAfterNotHonoured),
    );
    // Equal jitter: correct, and full instead of equal.
    let equal = fibonacci(Jitter::Equal, 9);
    accepted(equal.as_ref(), &all_503(), || {
        generic_client(9, true, |n, _, rng| {
            let base = fib_ms(n);
            base / 2 + rng.uniform_u64(0, base / 2)
        })
    });
    let (rate, _) = rejection_rate(
        equal.as_ref(),
        &all_503(),
        || generic_client(9, true, |n, _, rng| rng.uniform_u64(0, fib_ms(n))),
        is(ViolationKind::TooEarly),
    );
    assert!(rate >= 0.99, "caught on {rate}");
}

// ---------------------------------------------------------------- fixed and no_retry

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

#[test]
fn no_retry_clients() {
    let p = NoRetryConfig::default().into_policy();
    accepted(p.as_ref(), &all_503(), || {
        generic_client(1, true, |_, _, _| 0)
    });
    accepted(p.as_ref(), &[st(200)], || {
        generic_client(1, true, |_, _, _| 0)
    });
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(2, true, |_, _, _| 100),
        too_many,
    );
    assert_eq!(
        message,
        "attempt 2 was made but the policy allows at most 1 attempt"
    );
    rejected(
        p.as_ref(),
        &[failure(Observed::Timeout, 1000)],
        || generic_client(3, true, |_, _, _| 100),
        too_many,
    );
}

// ---------------------------------------------------------------- messages

#[test]
fn messages_from_the_issue() {
    // A 503, then a 429 with Retry-After: 2 that the client ignores, waiting its 1.2 s.
    let p = FixedConfig {
        max_attempts: 5,
        delay: Duration::from_millis(1200),
        ..Default::default()
    }
    .into_policy();
    let script = [st(503), with_ra(429, "2"), st(200)];
    let v = violations(
        p.as_ref(),
        &script,
        0,
        generic_client(5, false, |_, _, _| 1200),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].attempt, 3);
    assert_eq!(
        v[0].message,
        "attempt 3 started 1.200s after the head of a 429 with Retry-After: 2 (needed >= 2.000s)"
    );
    // Stopping after the fourth of five allowed attempts.
    let v = violations(
        p.as_ref(),
        &all_503(),
        0,
        generic_client(4, true, |_, _, _| 1200),
    );
    assert_eq!(
        v[0].message,
        "attempt 4: the call stopped after a retryable 503 with attempts left (policy allows 5 \
         attempts)"
    );
    // A fourth attempt under a three-attempt policy.
    let three = FixedConfig {
        delay: Duration::from_millis(1200),
        ..Default::default()
    }
    .into_policy();
    let v = violations(
        three.as_ref(),
        &all_503(),
        0,
        generic_client(4, true, |_, _, _| 1200),
    );
    assert_eq!(
        v[0].message,
        "attempt 4 was made but the policy allows at most 3 attempts"
    );
    assert_eq!(v.len(), 1, "later attempts are not judged again: {v:#?}");
}
