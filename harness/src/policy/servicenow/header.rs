//! `servicenow_header`: the delay a response header names, in its unit, plus the window.

use std::time::Duration;

use super::stop_reason;
use crate::policy::units::{NS_PER_MS, duration_ns, ns_to_ms};
use crate::policy::{
    Anchor, AttemptView, CallHistory, Decision, Envelope, Policy, RetryAfterValue, StopReason,
};
use crate::rng::Stream;

/// The unit of the number a delay header holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DelayUnit {
    /// Whole seconds (`Retry-After`'s delay-seconds): multiplied by 1000 to get ms.
    #[default]
    Seconds,
    /// Whole milliseconds.
    Milliseconds,
}

impl DelayUnit {
    /// `value` in this unit, in nanoseconds, saturating.
    fn ns(self, value: u64) -> u64 {
        let per = match self {
            DelayUnit::Seconds => 1000 * NS_PER_MS,
            DelayUnit::Milliseconds => NS_PER_MS,
        };
        value.saturating_mul(per)
    }
}

/// Parameters of the `servicenow_header` policy.
///
/// The model, for retry `n` (after attempt `n`):
/// - the delay is the number in the response header `header`, read in `unit`; a jitter drawn
///   uniformly from `[0, additional_delay_window]` is added, the sum is rounded once to whole
///   ms and slept from `end(n)`. **Model:** from the end, not the head a `Retry-After`
///   counts from: the strategy reads the whole response before it sleeps, so a delay shorter
///   than the body's transfer could not be kept from the head, and a delay from the end
///   never comes back before the server asked;
/// - **Model.** The number is one or more ASCII digits once spaces and tabs are trimmed (the
///   delay-seconds form of `Retry-After`); the first line of a repeated header counts. A
///   retried response whose header is missing or holds anything else (an HTTP-date, a sign,
///   a fraction) is not retried, stop reason `not_retryable`: the strategy has no delay of
///   its own to fall back on.
///
/// Only statuses in `response_codes` are retried, at most `max_retries` times.
///
/// ```
/// use retrylab::policy::servicenow::{DelayUnit, ServicenowHeaderConfig};
/// use retrylab::policy::{AttemptView, CallHistory, Envelope, Observed};
///
/// let config = ServicenowHeaderConfig { unit: DelayUnit::Milliseconds, ..Default::default() };
/// let policy = config.into_policy();
/// let throttled = AttemptView::new(1, Observed::Status(429), 0, Some(10), 10)
///     .with_header("Retry-After", "1500");
/// let envelope = policy.envelope(&throttled, &CallHistory::empty());
/// assert!(matches!(envelope, Envelope::Retry { min_ms: 1500, max_ms: 1500, .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicenowHeaderConfig {
    /// Retries after the first attempt (3).
    pub max_retries: u32,
    /// Statuses that are retried (`[429]`).
    pub response_codes: Vec<u16>,
    /// The header holding the delay (`Retry-After`), any case.
    pub header: String,
    /// The header's unit (seconds).
    pub unit: DelayUnit,
    /// The upper bound of the uniform jitter added to every delay (0).
    pub additional_delay_window: Duration,
}

impl Default for ServicenowHeaderConfig {
    fn default() -> Self {
        ServicenowHeaderConfig {
            max_retries: 3,
            response_codes: vec![429],
            header: "Retry-After".to_string(),
            unit: DelayUnit::Seconds,
            additional_delay_window: Duration::ZERO,
        }
    }
}

impl ServicenowHeaderConfig {
    /// The policy.
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(ServicenowHeader { config: self })
    }
}

/// The `servicenow_header` policy; see [`ServicenowHeaderConfig`] for the model.
#[derive(Debug, Clone)]
pub struct ServicenowHeader {
    config: ServicenowHeaderConfig,
}

impl ServicenowHeader {
    /// The header's delay in ns, or why there is no retry.
    fn step(&self, ctx: &AttemptView) -> Result<u64, StopReason> {
        let c = &self.config;
        if let Some(reason) = stop_reason(ctx, &c.response_codes, c.max_retries) {
            return Err(reason);
        }
        self.header_value(ctx)
            .map(|v| c.unit.ns(v))
            .ok_or(StopReason::NotRetryable)
    }

    /// The header's number. A `Retry-After` is read from its parsed value (where the harness
    /// keeps it, whoever recorded the attempt), any other header from the attempt's headers.
    fn header_value(&self, ctx: &AttemptView) -> Option<u64> {
        if self.config.header.eq_ignore_ascii_case("retry-after") {
            return match ctx.retry_after.as_ref() {
                Some(RetryAfterValue::Seconds(v)) => Some(*v),
                // Field lines that disagree are kept joined by `, `; the first one counts
                // here (a number holds no comma).
                Some(RetryAfterValue::Invalid(joined)) => {
                    joined.split(',').next().and_then(whole_number)
                }
                Some(_) => None,
                None => ctx.header("retry-after").and_then(whole_number),
            };
        }
        ctx.header(&self.config.header).and_then(whole_number)
    }
}

/// A whole number, read as a delay-seconds `Retry-After` is (digits between optional spaces
/// and tabs, saturating), whatever the unit it is then taken in.
fn whole_number(raw: &str) -> Option<u64> {
    match RetryAfterValue::parse(raw) {
        RetryAfterValue::Seconds(v) => Some(v),
        _ => None,
    }
}

impl Policy for ServicenowHeader {
    fn name(&self) -> &'static str {
        "servicenow_header"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        _history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        match self.step(ctx) {
            Err(reason) => Decision::Stop(reason),
            Ok(delay_ns) => {
                let window = duration_ns(self.config.additional_delay_window);
                let jitter = rng.uniform_u64(0, window);
                Decision::Retry {
                    delay: Duration::from_millis(ns_to_ms(delay_ns.saturating_add(jitter))),
                    measured_from: Anchor::End,
                }
            }
        }
    }

    fn envelope(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Envelope {
        match self.step(ctx) {
            Err(reason) => Envelope::MustStop(reason),
            Ok(delay_ns) => {
                let window = duration_ns(self.config.additional_delay_window);
                let (min_ms, max_ms) = (
                    ns_to_ms(delay_ns),
                    ns_to_ms(delay_ns.saturating_add(window)),
                );
                Envelope::Retry {
                    min_ms,
                    max_ms,
                    from: Anchor::End,
                    optional: false,
                    not_before: None,
                    uniform: max_ms > min_ms,
                }
            }
        }
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.max_retries.saturating_add(1))
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
