//! The AWS retry modes against literal numbers from docs/retry-behaviours.md#2-aws-sdk-retry-modes, the reference
//! decision inside its envelope, and wrong clients (written here from scratch, with literal
//! constants and no call into the policy code) rejected by [`Conformance`].
//!
//! One file per part of the retry modes: the backoff bases, the retry quota, the SDKs'
//! differences, `x-amz-retry-after`, the adaptive limiter, the properties over every
//! configuration, the wrong clients and a scenario end to end. This file holds the
//! replies, configurations, windows and quota states they share.

mod adaptive;
mod backoff;
mod end_to_end;
mod properties;
mod quota;
mod retry_after;
mod sdks;
mod wrong_clients;

use super::{AwsConfig, AwsJitter, AwsMode};
use crate::policy::tests::support::{
    Reply, Sim, retry_window, st, view, violations as check, with,
};
use crate::policy::{Anchor, CallHistory, ClientHistory, Decision, Envelope, Policy};
use crate::rng::Stream;

// ---------------------------------------------------------------- timelines

/// A status whose response carries the service error `code`.
fn coded(status: u16, code: &'static str) -> Reply {
    Reply {
        error_code: Some(code),
        ..st(status)
    }
}

/// The same reply with an `x-amz-retry-after` of `ms`.
fn with_ra(reply: Reply, ms: &'static str) -> Reply {
    with(reply, "x-amz-retry-after", ms)
}

/// `calls` calls of at most 40 attempts, numbered, the reference waiting the policy's
/// `wait_before_call` before each and its `wait_after_stop` (then 1 s) after each.
fn reference_sim(calls: u32) -> Sim {
    Sim::calls(calls)
        .numbered()
        .waiting_before_each()
        .waiting_after_stop()
}

fn config(mode: AwsMode) -> AwsConfig {
    AwsConfig {
        mode,
        ..Default::default()
    }
}

fn no_jitter(mode: AwsMode) -> AwsConfig {
    AwsConfig {
        mode,
        jitter: AwsJitter::None,
        ..Default::default()
    }
}

fn window(e: Envelope) -> (u64, u64) {
    let (min_ms, max_ms, from) = retry_window(e);
    assert_eq!(
        from,
        Anchor::End,
        "AWS delays run from the end of an attempt"
    );
    (min_ms, max_ms)
}

/// The windows after attempts 1..=count of one call, each answered `reply` (state replayed).
fn windows(config: AwsConfig, reply: &Reply, count: u32) -> Vec<(u64, u64)> {
    let mut policy = config.into_policy();
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for n in 1..=count {
        let v = view(n, start, reply);
        let h = CallHistory::new(&call, &client);
        let (lo, hi) = window(policy.envelope(&v, &h));
        out.push((lo, hi));
        start = v.end_ms + hi;
        policy.record(&v, &h, crate::policy::Next::Retried { start_ms: start });
        call.push(v);
    }
    out
}

/// The `describe_state` after each decided attempt of one call.
fn states(policy: &mut dyn Policy, script: &[Reply]) -> Vec<String> {
    let mut rng = Stream::new(1, "x");
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, r) in script.iter().enumerate() {
        let v = view(i as u32 + 1, start, r);
        let d = policy.decide(&v, &CallHistory::new(&call, &client), &mut rng);
        out.push(policy.describe_state().unwrap_or_default());
        start = v.end_ms + 100;
        call.push(v);
        if matches!(d, Decision::Stop(_)) {
            break;
        }
    }
    out
}
