//! The SNS delivery policy against literal numbers from docs/retry-behaviours.md#1-amazon-sns-delivery-policies, the reference
//! decision inside its envelope, and wrong clients (written here from scratch, with literal
//! formulas and no call into the policy code) rejected by [`Conformance`].
//!
//! One file per part of the delivery policy: its delays, the two presets, what is retried,
//! the throttle policy, the total retry time limit, the properties over every configuration,
//! the wrong clients and a scenario end to end. This file holds the timelines, checks and
//! windows they share.

mod delays;
mod end_to_end;
mod presets;
mod properties;
mod retryable_outcomes;
mod throttle_policy;
mod total_retry_time;
mod wrong_clients;

use std::time::Duration;

use super::SnsConfig;
use crate::policy::tests::support::{Sim, retry_window, st, view, violations as check};
use crate::policy::{Anchor, CallHistory, Envelope};

const S: fn(u64) -> Duration = Duration::from_secs;

// ---------------------------------------------------------------- timelines

/// `calls` calls of at most `limit` attempts, 1 ms apart, the reference waiting the
/// policy's `wait_before_call` before each.
fn reference_sim(calls: u32, limit: u32) -> Sim {
    Sim::calls(calls)
        .of_at_most(limit)
        .ms_apart(1)
        .waiting_before_each()
}

fn window(e: Envelope) -> (u64, u64) {
    let (min_ms, max_ms, from) = retry_window(e);
    assert_eq!(
        from,
        Anchor::End,
        "SNS delays run from the end of an attempt"
    );
    (min_ms, max_ms)
}

/// The windows after attempts 1..=count, each a 503 10 ms long.
fn windows(config: SnsConfig, count: u32) -> Vec<(u64, u64)> {
    let p = config.into_policy();
    (1..=count)
        .map(|n| window(p.envelope(&view(n, 0, &st(503)), &CallHistory::empty())))
        .collect()
}

fn linear_20_40(jitter: f64) -> SnsConfig {
    SnsConfig {
        min_delay: S(20),
        max_delay: S(40),
        num_retries: 3,
        jitter,
        ..Default::default()
    }
}
