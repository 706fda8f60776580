//! The gRPC policies against literal numbers from docs/retry-behaviours.md#3-grpc, the
//! reference decision inside its envelope, and wrong clients (written here from scratch,
//! with literal constants and no call into the policy code) rejected by [`Conformance`].
//!
//! One file per part of gRPC's retry behaviour: the connection backoff, the A6 retry policy,
//! retry throttling, pushback and the `grpc-previous-rpc-attempts` header. This file holds
//! what they share: the timelines and checks, the A6 service config and the A6 client
//! written from scratch, and the throttled config with its token trail.

mod connection_backoff;
mod previous_rpc_attempts;
mod pushback;
mod retry_policy;
mod throttling;

use std::time::Duration;

use super::{A6Jitter, GrpcRetryConfig, RetryThrottling};
use crate::policy::tests::support::{
    Answer, Client, Reply, Sim, refused, reset, st, timeout, view, violations as check, with,
};
use crate::policy::{
    AttemptView, CallHistory, ClientHistory, Decision, Observed, Policy, ViolationKind,
};
use crate::rng::Stream;

// ---------------------------------------------------------------- timelines

/// An HTTP 200 carrying `grpc-status: code`, after 10 ms.
fn grpc(code: &'static str) -> Reply {
    with(st(200), "grpc-status", code)
}

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream and answering the start of its next attempt.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls)
        .clients_drawing_on("test/grpc/client")
        .clients_answering(Answer::StartOfNext)
}

/// `calls` calls of at most 40 attempts, 1 s apart, numbered (the connection backoff draws
/// a deadline per call).
fn reference_sim(calls: u32) -> Sim {
    Sim::calls(calls).numbered()
}

const SEEDS: u64 = 100;

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

// ---------------------------------------------------------------- retry policy (A6)

/// The service config of docs/scenario-format.md's example: 0.1s doubling to 1s, retrying
/// `UNAVAILABLE`.
fn a6(max_attempts: u32, jitter: A6Jitter) -> GrpcRetryConfig {
    GrpcRetryConfig {
        max_attempts,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(1),
        backoff_multiplier: 2.0,
        retryable_status_codes: vec![14],
        jitter,
        throttling: None,
    }
}

fn retry_scripts() -> Vec<Vec<Reply>> {
    vec![
        vec![grpc("14")],
        vec![st(503), grpc("14"), grpc("0")],
        vec![grpc("8"), timeout(2000), grpc("3")],
        vec![reset(), refused(2), grpc("14")],
    ]
}

/// What an A6 client written from scratch gets wrong.
#[derive(Debug, Clone, Copy, Default)]
struct A6Mistakes {
    /// Honours `maxAttempts` above 5 literally.
    no_cap: bool,
    /// Draws `uniform(0, b)` (the legacy rule) where `b × uniform(0.8, 1.2)` is due.
    legacy_jitter: bool,
    /// Reads only the HTTP status: a 200 is a success whatever its `grpc-status`.
    http_status_only: bool,
    /// Never reads `grpc-retry-pushback-ms`.
    ignore_pushback: bool,
    /// Keeps counting the backoff's exponent through a pushback retry.
    no_reset: bool,
    /// Reads a negative pushback as "retry now" instead of "do not retry".
    negative_as_zero: bool,
}

/// A pushback as the A6 client under test reads it: `Some(Some(ms))` to wait `ms`,
/// `Some(None)` to stop, `None` without one.
fn client_pushback(v: &AttemptView, m: A6Mistakes) -> Option<Option<u64>> {
    if m.ignore_pushback {
        return None;
    }
    let values: Vec<&str> = v
        .headers
        .iter()
        .filter(|(n, _)| n == "grpc-retry-pushback-ms")
        .map(|(_, value)| value.as_str())
        .collect();
    match values.as_slice() {
        [] => None,
        [one] => match one.parse::<i64>() {
            Ok(ms) if ms >= 0 => Some(Some(ms as u64)),
            Ok(_) if m.negative_as_zero => Some(Some(0)),
            _ => Some(None),
        },
        _ => Some(None),
    }
}

/// An A6 client for 0.1s doubling to 1s, retrying UNAVAILABLE (14), in integer ms.
fn a6_client<'a>(max_attempts: u32, m: A6Mistakes) -> Box<Client<'a>> {
    Box::new(move |v, previous, rng| {
        let code = match (v.outcome, v.header("grpc-status")) {
            (Observed::Status(200), _) if m.http_status_only => 0,
            (Observed::Status(_), Some(code)) => code.parse().unwrap_or(13),
            (Observed::Status(s), None) if (200..300).contains(&s) => 0,
            (Observed::Status(429 | 502 | 503 | 504), None) => 14,
            (Observed::Status(_), None) => 2,
            (Observed::Refused | Observed::Transport(_), _) => 14,
            (Observed::Timeout, _) => 4,
        };
        if code == 0 {
            return None;
        }
        let pushback = client_pushback(v, m);
        if pushback == Some(None) {
            return None;
        }
        let cap = if m.no_cap {
            max_attempts
        } else {
            max_attempts.min(5)
        };
        if code != 14 || v.n >= cap {
            return None;
        }
        if let Some(Some(ms)) = pushback {
            return Some(v.end_ms + ms);
        }
        // Retries since the last pushback retry.
        let k = if m.no_reset {
            v.n - 1
        } else {
            previous
                .iter()
                .rev()
                .take_while(|a| !matches!(client_pushback(a, m), Some(Some(_))))
                .count() as u32
        };
        let b = (100u64 << k).min(1000);
        let d = if m.legacy_jitter {
            rng.uniform_u64(0, b)
        } else {
            rng.uniform_u64(b * 8 / 10, b * 12 / 10)
        };
        Some(v.end_ms + d)
    })
}

// ---------------------------------------------------------------- retry throttling

/// `a6(5)` with grpc-go's example throttle: `maxTokens` 10, `tokenRatio` 0.5.
fn throttled() -> GrpcRetryConfig {
    GrpcRetryConfig {
        throttling: Some(RetryThrottling {
            max_tokens: 10.0,
            token_ratio: 0.5,
        }),
        ..a6(5, A6Jitter::Current)
    }
}

/// Runs the reference over one call per script, 1 s apart; per attempt the state it
/// describes after deciding and whether it retried.
fn throttle_trail(policy: &mut dyn Policy, calls: &[Vec<Reply>]) -> Vec<Vec<String>> {
    let mut rng = Stream::new(5, "client/0/jitter");
    let mut out = Vec::new();
    let mut start = 0;
    for (i, script) in calls.iter().enumerate() {
        let client = ClientHistory {
            call_index: i as u32,
            ..Default::default()
        };
        let mut call: Vec<AttemptView> = Vec::new();
        let mut trail = Vec::new();
        for (n, reply) in script.iter().enumerate() {
            let v = view(n as u32 + 1, start, reply);
            let d = policy.decide(&v, &CallHistory::new(&call, &client), &mut rng);
            let state = policy.describe_state().unwrap_or_default();
            let end = v.end_ms;
            call.push(v);
            match d {
                Decision::Retry { delay, .. } => {
                    trail.push(format!("{state} -> retry"));
                    start = end + delay.as_millis() as u64;
                }
                Decision::Stop(reason) => {
                    trail.push(format!("{state} -> {reason}"));
                    start = end + 1000;
                    break;
                }
            }
        }
        out.push(trail);
    }
    out
}
