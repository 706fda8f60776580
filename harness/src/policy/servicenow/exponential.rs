//! `servicenow_exponential`: a random multiple of the base delay, capped, plus the window.

use std::time::Duration;

use super::stop_reason;
use crate::policy::generic::ConfigError;
use crate::policy::units::{duration_ns, ns_to_ms};
use crate::policy::{Anchor, AttemptView, CallHistory, Decision, Envelope, Policy};
use crate::rng::Stream;

/// Parameters of the `servicenow_exponential` policy.
///
/// The model, for retry `n` (after attempt `n`):
/// - a multiplier is drawn uniformly from the reals in `[0, 2^n - 1]` and multiplies
///   `base_delay` (in integer nanoseconds: the product is uniform over
///   `[0, (2^n - 1) × base_delay]`);
/// - the product is capped at `max_delay`;
/// - a jitter drawn uniformly from `[0, additional_delay_window]` is added;
/// - the sum is rounded once to whole milliseconds and slept from `end(n)`.
///
/// Only statuses in `response_codes` are retried, at most `max_retries` times (see the
/// module's model for errors without a status).
///
/// With the vendor's worked example, a 400 ms base, the first three retries wait up to
/// 400 ms, 1200 ms and 2800 ms before the window:
///
/// ```
/// use retrylab::policy::servicenow::ServicenowExponentialConfig;
/// use std::time::Duration;
///
/// let config = ServicenowExponentialConfig {
///     base_delay: Duration::from_millis(400),
///     additional_delay_window: Duration::from_millis(1500),
///     ..Default::default()
/// };
/// assert_eq!(config.backoff_bound(3), Duration::from_millis(2800));
/// assert_eq!(config.into_policy().max_attempts(), Some(4));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicenowExponentialConfig {
    /// Retries after the first attempt (3).
    pub max_retries: u32,
    /// Statuses that are retried (`[429]`).
    pub response_codes: Vec<u16>,
    /// The delay the multiplier scales (1 s).
    pub base_delay: Duration,
    /// The cap on the scaled delay, before the window (60 s).
    pub max_delay: Duration,
    /// The upper bound of the uniform jitter added to every delay (0).
    pub additional_delay_window: Duration,
}

impl Default for ServicenowExponentialConfig {
    fn default() -> Self {
        ServicenowExponentialConfig {
            max_retries: 3,
            response_codes: vec![429],
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            additional_delay_window: Duration::ZERO,
        }
    }
}

impl ServicenowExponentialConfig {
    /// Checks `base_delay <= max_delay`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.base_delay > self.max_delay {
            return Err(ConfigError {
                field: "base_delay",
                message: format!(
                    "{:?} is above max_delay {:?}",
                    self.base_delay, self.max_delay
                ),
            });
        }
        Ok(())
    }

    /// The largest delay of retry `n` before the window: `min((2^n - 1) × base_delay,
    /// max_delay)`.
    pub fn backoff_bound(&self, n: u32) -> Duration {
        Duration::from_nanos(self.span_ns(n).min(duration_ns(self.max_delay)))
    }

    /// `(2^n - 1) × base_delay` in nanoseconds, saturating.
    fn span_ns(&self, n: u32) -> u64 {
        let factor = 1u64.checked_shl(n).map_or(u64::MAX, |p| p - 1);
        duration_ns(self.base_delay).saturating_mul(factor)
    }

    /// The policy (not validated: a base above the cap is capped).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(ServicenowExponential { config: self })
    }
}

/// The `servicenow_exponential` policy; see [`ServicenowExponentialConfig`] for the model.
#[derive(Debug, Clone)]
pub struct ServicenowExponential {
    config: ServicenowExponentialConfig,
}

/// Retry `n`'s draws: the scaled delay's bound, whether the cap cuts it, and the window.
struct Window {
    span_ns: u64,
    capped: bool,
    window_ns: u64,
}

impl ServicenowExponential {
    fn window(&self, n: u32) -> Window {
        let span = self.config.span_ns(n);
        let cap = duration_ns(self.config.max_delay);
        Window {
            span_ns: span.min(cap),
            capped: span > cap,
            window_ns: duration_ns(self.config.additional_delay_window),
        }
    }
}

impl Policy for ServicenowExponential {
    fn name(&self) -> &'static str {
        "servicenow_exponential"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        _history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let c = &self.config;
        if let Some(reason) = stop_reason(ctx, &c.response_codes, c.max_retries) {
            return Decision::Stop(reason);
        }
        // The multiplier is drawn over the uncapped span, then the cap applies: a capped
        // retry sleeps `max_delay` (plus the window) with the probability the cap cuts off.
        let cap = duration_ns(c.max_delay);
        let scaled = rng.uniform_u64(0, c.span_ns(ctx.n)).min(cap);
        let jitter = rng.uniform_u64(0, duration_ns(c.additional_delay_window));
        Decision::Retry {
            delay: Duration::from_millis(ns_to_ms(scaled.saturating_add(jitter))),
            measured_from: Anchor::End,
        }
    }

    fn envelope(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Envelope {
        let c = &self.config;
        if let Some(reason) = stop_reason(ctx, &c.response_codes, c.max_retries) {
            return Envelope::MustStop(reason);
        }
        let w = self.window(ctx.n);
        let max_ms = ns_to_ms(w.span_ns.saturating_add(w.window_ns));
        Envelope::Retry {
            min_ms: 0,
            max_ms,
            from: Anchor::End,
            optional: false,
            not_before: None,
            // Uncapped, the sum of two uniform draws is less likely at either bound than one
            // uniform draw over the same range, so the pinned-bound check stays sound; a cap
            // puts weight on its value, which a correct client then lands on often.
            uniform: max_ms > 0 && !w.capped,
        }
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.max_retries.saturating_add(1))
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
