//! Envelopes against hand-computed vectors: every expected number below is a literal worked
//! out by hand from the formulas in the policy docs, not computed by the code under test.
//!
//! One file per policy family or rule: exponential, linear and Fibonacci delays,
//! `Retry-After`, the outcomes that stop a call, and the defaults. This file holds the failed
//! attempts, the window readers and the exponential policy they share.

mod defaults;
mod exponential;
mod fibonacci;
mod linear;
mod outcomes;
mod retry_after;

use std::time::Duration;

use crate::policy::{
    Anchor, AttemptView, CallHistory, Envelope, ExponentialConfig, Jitter, Observed, Policy,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// Attempt `n`: a 503 whose head and end arrive 10 ms after its start at `n × 10 s`.
fn failed(n: u32) -> AttemptView {
    let start = u64::from(n) * 10_000;
    AttemptView::new(
        n,
        Observed::Status(503),
        start,
        Some(start + 10),
        start + 10,
    )
}

fn window(envelope: Envelope) -> (u64, u64) {
    match envelope {
        Envelope::Retry {
            min_ms,
            max_ms,
            from: Anchor::End,
            optional: false,
            ..
        } => (min_ms, max_ms),
        other => panic!("expected a mandatory retry window from the end, got {other:?}"),
    }
}

/// The windows after attempts 1..=count, each a 503, with no earlier attempts in the history.
fn windows(policy: &dyn Policy, count: u32) -> Vec<(u64, u64)> {
    (1..=count)
        .map(|n| window(policy.envelope(&failed(n), &CallHistory::empty())))
        .collect()
}

fn exp(jitter: Jitter) -> Box<dyn Policy> {
    ExponentialConfig {
        max_attempts: 10,
        initial: MS(100),
        multiplier: 2.0,
        max_delay: Duration::from_secs(1),
        jitter,
        ..Default::default()
    }
    .into_policy()
}
