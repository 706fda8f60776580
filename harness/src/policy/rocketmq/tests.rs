//! The `RocketMQ` producer policy against the numbers of
//! docs/retry-behaviours.md#4-rocketmq-producers (20 ms, then 40 ms after a throttle), the
//! reference decision inside its envelope, and wrong producers (written here from scratch,
//! with literal formulas and no call into the policy code) rejected by [`Conformance`].

use std::time::Duration;

use super::{RocketmqConfig, broker_code};
use crate::policy::tests::support::{
    self, Client, Reply, Sim, failure, recorded_view, reply, reset, timeout,
};
use crate::policy::{
    Anchor, AttemptView, CallHistory, Conformance, Envelope, NO_CLIENT_HISTORY, Observed, Policy,
    StopReason, Violation, ViolationKind,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// What the broker answers: `status` after 5 ms (the shared `st` takes 10).
fn st(status: u16) -> Reply {
    Reply {
        latency_ms: 5,
        ..support::st(status)
    }
}

/// A failed send after 5 ms whose JSON error body carries a code.
fn coded(status: u16, body: &'static str) -> Reply {
    Reply { body, ..st(status) }
}

const THROTTLED_530: &str = r#"{"code": 530, "message": "TOO_MANY_REQUESTS"}"#;
const THROTTLED_42900: &str = r#"{"code": 42900, "message": "too many requests"}"#;
const FLOW_CONTROL_215: &str = r#"{"code": 215, "message": "flow control"}"#;
const INTERNAL_500: &str = r#"{"code": 50001, "message": "internal error"}"#;

/// One send of at most 10 attempts, the recorder reading the error code from the body with
/// `policy`, a producer under test drawing on its own stream.
fn sim(policy: &dyn Policy) -> Sim {
    Sim::calls(1)
        .of_at_most(10)
        .codes_read_by(policy)
        .clients_drawing_on("test/rocketmq/client")
}

fn check(policy: &dyn Policy, call: &[AttemptView]) -> Vec<Violation> {
    Conformance::new(policy.clone_box()).check_call(call)
}

/// The envelope after attempt `n` answered `r`: `Ok(exact delay)` or `Err(stop reason)`.
fn after(policy: &dyn Policy, n: u32, r: Reply) -> Result<u64, StopReason> {
    match policy.envelope(&recorded_view(policy, n, 0, &r), &CallHistory::empty()) {
        Envelope::Retry {
            min_ms,
            max_ms,
            from: Anchor::End,
            optional: false,
            uniform: false,
            ..
        } if min_ms == max_ms => Ok(min_ms),
        Envelope::MustStop(reason) => Err(reason),
        other => panic!("unexpected envelope {other:?}"),
    }
}

fn policy() -> Box<dyn Policy> {
    RocketmqConfig::default().into_policy()
}

// ---------------------------------------------------------------- published numbers

#[test]
fn throttle_backoff_20_then_40_ms() {
    let config = RocketmqConfig::default();
    let schedule: Vec<Duration> = (1..=8).map(|n| config.throttle_backoff(n)).collect();
    assert_eq!(
        schedule,
        [20, 40, 80, 160, 320, 640, 1000, 1000].map(MS),
        "min(10ms x 2^n, 1s)"
    );
    let p = policy();
    assert_eq!(after(p.as_ref(), 1, st(429)), Ok(20));
    assert_eq!(after(p.as_ref(), 2, coded(503, THROTTLED_530)), Ok(40));
    assert_eq!(
        after(p.as_ref(), 3, st(429)),
        Err(StopReason::MaxAttemptsExceeded)
    );
    assert_eq!(p.max_attempts(), Some(3));
    // A huge retry number reaches the cap instead of overflowing.
    assert_eq!(config.throttle_backoff(5000), MS(1000));
}

#[test]
fn worst_case_blocking_time() {
    let config = RocketmqConfig::default();
    // 3 x 2s + 20ms + 40ms.
    assert_eq!(config.worst_case_blocking_time(MS(2000)), MS(6060));
    let five = RocketmqConfig {
        max_attempts: 5,
        ..config
    };
    // 5 x 1s + 20 + 40 + 80 + 160 ms.
    assert_eq!(five.worst_case_blocking_time(MS(1000)), MS(5300));
}

#[test]
fn what_is_throttled_and_what_is_retried_at_once() {
    let p = policy();
    for r in [
        st(429),
        coded(503, THROTTLED_530),
        coded(400, THROTTLED_42900),
        coded(503, FLOW_CONTROL_215),
        coded(429, INTERNAL_500),
    ] {
        assert_eq!(after(p.as_ref(), 1, r.clone()), Ok(20), "{r:?}");
    }
    for r in [
        st(503),
        st(500),
        coded(500, INTERNAL_500),
        coded(503, r#"{"code": "Throttling"}"#),
        st(404),
        timeout(2000),
        reset(),
    ] {
        assert_eq!(after(p.as_ref(), 1, r.clone()), Ok(0), "{r:?}");
    }
    // A refused connect is retried at once as well, but a producer whose channel waits for
    // gRPC's reconnect deadline (1 s from the connect's start, here 5 ms long) is not late.
    let refused = recorded_view(p.as_ref(), 1, 0, &failure(Observed::Refused, 5));
    match p.envelope(&refused, &CallHistory::empty()) {
        Envelope::Retry { min_ms, max_ms, .. } => {
            assert_eq!((min_ms, max_ms), (0, 1000 - refused.end_ms))
        }
        other => panic!("unexpected envelope {other:?}"),
    }
    // The third refusal in a row (of five attempts): 2.56 s x 1.2 from its start.
    let five = RocketmqConfig {
        max_attempts: 5,
        ..Default::default()
    }
    .into_policy();
    let history = [refused.clone(), refused.clone()];
    let third = recorded_view(five.as_ref(), 3, 0, &failure(Observed::Refused, 5));
    match five.envelope(&third, &CallHistory::new(&history, &NO_CLIENT_HISTORY)) {
        Envelope::Retry { min_ms, max_ms, .. } => {
            assert_eq!((min_ms, max_ms), (0, 3072 - third.end_ms))
        }
        other => panic!("unexpected envelope {other:?}"),
    }
    assert_eq!(after(p.as_ref(), 1, st(200)), Err(StopReason::Success));
    // A 2xx carries no error code: the body of an acknowledgement is not read.
    assert_eq!(p.error_code(200, &[], THROTTLED_530.as_bytes()), None);
    assert_eq!(
        p.error_code(503, &[], THROTTLED_530.as_bytes()).as_deref(),
        Some("530")
    );
    // Throttle codes are configurable: without 530, a 530 is retried at once.
    let only_42900 = RocketmqConfig {
        throttle_codes: vec![42900],
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        after(only_42900.as_ref(), 1, coded(503, THROTTLED_530)),
        Ok(0)
    );
    assert_eq!(broker_code(br#"{"code": 1.5}"#), None);
    assert_eq!(broker_code(b"[530]"), None);
}

#[test]
fn validation() {
    let ok = RocketmqConfig::default();
    assert!(ok.validate().is_ok());
    for (bad, field) in [
        (
            RocketmqConfig {
                max_attempts: 0,
                ..ok.clone()
            },
            "max_attempts",
        ),
        (
            RocketmqConfig {
                multiplier: 0.5,
                ..ok.clone()
            },
            "multiplier",
        ),
        (
            RocketmqConfig {
                multiplier: f64::NAN,
                ..ok.clone()
            },
            "multiplier",
        ),
        (
            RocketmqConfig {
                initial_backoff: MS(2000),
                ..ok.clone()
            },
            "initial_backoff",
        ),
    ] {
        assert_eq!(bad.validate().unwrap_err().field, field);
    }
}

#[test]
fn reference_conforms() {
    for script in [
        vec![st(429)],
        vec![coded(503, THROTTLED_530), st(503), st(200)],
        vec![timeout(2000), coded(503, FLOW_CONTROL_215)],
        vec![st(503), st(200)],
    ] {
        let mut p = policy();
        let call = sim(p.as_ref()).reference_call(p.as_mut(), &script, 1);
        assert!(check(policy().as_ref(), &call).is_empty(), "{call:#?}");
    }
    let mut p = policy();
    let call = sim(p.as_ref()).reference_call(p.as_mut(), &[st(429)], 1);
    let gaps: Vec<u64> = call
        .windows(2)
        .map(|w| w[1].start_ms - w[0].end_ms)
        .collect();
    assert_eq!(gaps, [20, 40]);
}

// ---------------------------------------------------------------- wrong producers

/// A producer written from the documented rules, with its defect.
#[derive(Clone, Copy, PartialEq)]
enum Defect {
    None,
    /// Reads HTTP 429 only, not the codes of the error body.
    IgnoresBodyCodes,
    /// Backs off after every failure, not only after throttles.
    BacksOffEverything,
    /// Counts the exponent from 0: 10 ms, then 20 ms.
    ExponentFromZero,
    /// Adds full jitter to the throttle backoff.
    Jittered,
    /// Makes 4 attempts.
    OneMoreAttempt,
}

/// The producer reads the error body of each reply itself, from `script` (an attempt view
/// carries no body): the reply to attempt `n` is `reply(script, n)`, as in the runs.
fn producer<'a>(script: &'a [Reply], defect: Defect) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        if matches!(v.outcome, Observed::Status(200..=299)) {
            return None;
        }
        let attempts = if defect == Defect::OneMoreAttempt {
            4
        } else {
            3
        };
        if v.n >= attempts {
            return None;
        }
        let body = reply(script, v.n).body;
        let code: Option<i64> = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|b| b.get("code").and_then(serde_json::Value::as_i64));
        let by_code = defect != Defect::IgnoresBodyCodes
            && code.is_some_and(|c| [530, 42900, 215].contains(&c));
        let throttled = v.outcome == Observed::Status(429) || by_code;
        let exponent = if defect == Defect::ExponentFromZero {
            v.n - 1
        } else {
            v.n
        };
        let backoff = (10u64 << exponent).min(1000);
        Some(match defect {
            Defect::BacksOffEverything => backoff,
            Defect::Jittered if throttled => rng.uniform_u64(0, backoff),
            _ if throttled => backoff,
            _ => 0,
        })
    })
}

fn rejected(script: &[Reply], defect: Defect, kind: ViolationKind) -> String {
    let p = policy();
    let mut first = String::new();
    for seed in 0..50 {
        let call = sim(p.as_ref()).client_call(script, seed, producer(script, defect).as_mut());
        let v = check(p.as_ref(), &call);
        let hit = v
            .iter()
            .find(|v| v.kind == kind)
            .unwrap_or_else(|| panic!("seed {seed}: {v:#?}"));
        if first.is_empty() {
            first = hit.message.clone();
        }
    }
    first
}

#[test]
fn correct_producer_is_accepted() {
    let p = policy();
    for script in [
        vec![st(429)],
        vec![coded(503, THROTTLED_530), coded(503, THROTTLED_42900)],
        vec![timeout(2000), coded(400, FLOW_CONTROL_215), st(200)],
        vec![st(503)],
    ] {
        for seed in 0..50 {
            let call = sim(p.as_ref()).client_call(
                &script,
                seed,
                producer(&script, Defect::None).as_mut(),
            );
            let v = check(p.as_ref(), &call);
            assert!(v.is_empty(), "seed {seed}: {v:#?}");
        }
    }
}

#[test]
fn wrong_producers_are_caught() {
    let throttled = [coded(503, THROTTLED_530)];
    assert_eq!(
        rejected(
            &throttled,
            Defect::IgnoresBodyCodes,
            ViolationKind::TooEarly
        ),
        "attempt 2 started 0.000s after the end of attempt 1, a 503 (needed exactly 0.020s)"
    );
    assert_eq!(
        rejected(
            &[st(503)],
            Defect::BacksOffEverything,
            ViolationKind::TooLate
        ),
        "attempt 2 started 0.020s after the end of attempt 1, a 503 (needed exactly 0.000s)"
    );
    assert_eq!(
        rejected(
            &[st(429)],
            Defect::ExponentFromZero,
            ViolationKind::TooEarly
        ),
        "attempt 2 started 0.010s after the end of attempt 1, a 429 (needed exactly 0.020s)"
    );
    // Full jitter over [0, 20] and [0, 40] ms: exactly on both is 1 in 861.
    let p = policy();
    let throttles = [st(429)];
    let caught = (0..50)
        .filter(|seed| {
            let call = sim(p.as_ref()).client_call(
                &throttles,
                *seed,
                producer(&throttles, Defect::Jittered).as_mut(),
            );
            check(p.as_ref(), &call)
                .iter()
                .any(|v| v.kind == ViolationKind::TooEarly)
        })
        .count();
    assert!(caught >= 48, "caught on {caught} of 50");
    assert_eq!(
        rejected(
            &[st(503)],
            Defect::OneMoreAttempt,
            ViolationKind::RetriedAfterStop(StopReason::MaxAttemptsExceeded)
        ),
        "attempt 4 was made but the policy allows at most 3 attempts"
    );
}

/// The producer retries on throttling the codes the fake broker answers 429, no other list.
#[test]
fn default_throttle_codes_are_the_brokers() {
    let codes = RocketmqConfig::default().throttle_codes;
    let brokers: Vec<i64> = retrylab_endpoints::THROTTLING_CODES
        .iter()
        .map(|&c| i64::from(c))
        .collect();
    assert_eq!(codes, brokers);
}
