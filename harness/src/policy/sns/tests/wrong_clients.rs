//! Mutation tests: a delivery client written from scratch, accepted when correct and caught
//! with each mistake: a 429 taken as permanent, phases or retries off by one, a linear curve
//! where the exponential is due, too much jitter, and the throttle policy ignored.

use super::{S, check};
use crate::policy::sns::{SnsBackoff, SnsConfig};
use crate::policy::tests::support::{Client, Reply, Sim, st, timeout};
use crate::policy::{AttemptView, Observed, Policy, StopReason, ViolationKind};
use crate::rng::Stream;

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls).clients_drawing_on("test/sns/client")
}

/// A delivery client written from scratch: 2 immediate, 1 at 2 s, 3 exponential backoff
/// retries 2 s -> 20 s, 2 at 20 s (8 retries), ±10 % jitter; each field of `Wrong` is one
/// mistake.
#[derive(Clone, Copy, Default)]
struct Wrong {
    permanent_429: bool,
    immediate: i32,
    retries: i32,
    linear_curve: bool,
    jitter: Option<f64>,
}

fn policy_under_test() -> Box<dyn Policy> {
    SnsConfig {
        min_delay: S(2),
        max_delay: S(20),
        num_retries: 8,
        num_no_delay_retries: 2,
        num_min_delay_retries: 1,
        num_max_delay_retries: 2,
        backoff: SnsBackoff::Exponential,
        jitter: 0.1,
        max_receives_per_second: None,
    }
    .into_policy()
}

fn sns_client<'a>(w: Wrong) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        match v.outcome {
            Observed::Status(200..=299) => return None,
            Observed::Status(429) if w.permanent_429 => return None,
            Observed::Status(s) if s != 429 && s < 500 => return None,
            _ => {}
        }
        let retries = 8 + w.retries;
        let r = v.n as i32;
        if r > retries {
            return None;
        }
        let a = 2 + w.immediate;
        let (min, max) = (2000.0f64, 20_000.0f64);
        let d = if r <= a {
            0.0
        } else if r <= a + 1 {
            min
        } else if r <= a + 1 + 3 {
            let i = f64::from(r - a - 1);
            if w.linear_curve {
                min + (max - min) * (i - 1.0) / 2.0
            } else {
                min + (max - min) * (libm::exp(i - 1.0) - 1.0) / (libm::exp(2.0) - 1.0)
            }
        } else {
            max
        };
        let j = w.jitter.unwrap_or(0.1);
        let u = rng.uniform_f64() * 2.0 - 1.0;
        Some(libm::round(d * (1.0 + j * u)) as u64)
    })
}

const SEEDS: u64 = 60;

fn rejection<'a>(
    script: &[Reply],
    make: impl Fn() -> Box<Client<'a>>,
    kind: impl Fn(ViolationKind) -> bool,
) -> (f64, String) {
    let policy = policy_under_test();
    client_sim(1).share_rejected(SEEDS, policy.as_ref(), script, make, kind)
}

fn is(kind: ViolationKind) -> impl Fn(ViolationKind) -> bool {
    move |k| k == kind
}

#[test]
fn correct_sns_client_is_accepted() {
    let policy = policy_under_test();
    for script in [
        vec![st(503)],
        vec![st(429)],
        vec![st(503), st(429), timeout(15_000), st(200)],
        vec![st(404)],
    ] {
        for seed in 0..SEEDS {
            let calls =
                client_sim(2).run_client(&script, seed, sns_client(Wrong::default()).as_mut());
            let v = check(policy.as_ref(), &calls);
            assert!(v.is_empty(), "seed {seed}: {v:#?}");
        }
    }
}

#[test]
fn permanent_429_is_caught() {
    let (rate, message) = rejection(
        &[st(429)],
        || {
            sns_client(Wrong {
                permanent_429: true,
                ..Default::default()
            })
        },
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 1: the call stopped after a retryable 429 with attempts left (policy allows 9 attempts)"
    );
}

#[test]
fn phases_off_by_one_are_caught() {
    // One immediate retry too many: retry 3 comes at once instead of after ~2 s.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                immediate: 1,
                ..Default::default()
            })
        },
        is(ViolationKind::TooEarly),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 4 started 0.000s after the end of attempt 3, a 503 (needed 1.800s to 2.200s)"
    );
    // One too few: retry 2 waits ~2 s instead of none.
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                immediate: -1,
                ..Default::default()
            })
        },
        is(ViolationKind::TooLate),
    );
    assert_eq!(rate, 1.0);
    // numRetries off by one, both ways.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                retries: 1,
                ..Default::default()
            })
        },
        is(ViolationKind::RetriedAfterStop(
            StopReason::MaxAttemptsExceeded,
        )),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 10 was made but the policy allows at most 9 attempts"
    );
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                retries: -1,
                ..Default::default()
            })
        },
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn wrong_curve_and_jitter_are_caught() {
    // Linear instead of exponential: the middle backoff retry is 11 s instead of 6.84 s.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                linear_curve: true,
                ..Default::default()
            })
        },
        is(ViolationKind::TooLate),
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.contains("after the end of attempt 5, a 503 (needed 6.157s to 7.525s)"),
        "{message}"
    );
    // ±30 % instead of ±10 %: over 6 delayed retries, nearly always outside.
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                jitter: Some(0.3),
                ..Default::default()
            })
        },
        |k| matches!(k, ViolationKind::TooEarly | ViolationKind::TooLate),
    );
    assert!(rate >= 0.95, "caught on {rate}");
}

#[test]
fn ignored_throttle_policy_is_caught() {
    let throttled = SnsConfig {
        num_retries: 3,
        num_no_delay_retries: 3,
        max_receives_per_second: Some(1),
        ..Default::default()
    }
    .into_policy();
    for seed in 0..SEEDS {
        // Immediate retries as fast as the server answers.
        let calls = client_sim(1).run_client(
            &[st(503)],
            seed,
            &mut |v: &AttemptView, _: &[AttemptView], _: &mut Stream| (v.n <= 3).then_some(0),
        );
        let v = check(throttled.as_ref(), &calls);
        // Every immediate retry is early.
        assert_eq!(v.len(), 3, "{v:#?}");
        assert_eq!(
            v[0].message,
            "attempt 2 started 0.000s after the end of attempt 1, a 503 (needed exactly 0.990s)"
        );
    }
}
