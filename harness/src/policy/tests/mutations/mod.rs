//! Mutation tests: clients written here from scratch (plain integer-millisecond formulas, no
//! call into the policy code), correct ones and deliberately wrong ones, run against pure
//! timelines; `conforms` must accept the first and reject the second.
//!
//! Wrong clients whose every delay is wrong are rejected on every seed. Clients that are only
//! sometimes outside the envelope (a wrong multiplier under full jitter, a missing cap on
//! decorrelated jitter) or only wrong in distribution (a cap applied after the jitter) are
//! judged by their rejection rate over many seeds.
//!
//! One file per policy family, and one for the wording of the violations. This file holds
//! what they share: the judges (accepted, rejected, rejection rate), the server scripts and
//! the generic client.

mod exponential;
mod fibonacci;
mod fixed;
mod linear;
mod messages;
mod no_retry;

use super::support::{Client, Reply, Sim, share_caught, st, with_ra};
use crate::policy::{
    AttemptView, Observed, Policy, RetryAfterValue, Violation, ViolationKind, conforms,
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
