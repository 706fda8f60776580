//! The fixed policy: the same delay before every retry.

use std::time::Duration;

use super::generic::{ConfigError, Rules, Schedule, check_max_attempts};
use super::jitter::Jitter;
use super::units::duration_ns;
use super::{AttemptView, CallHistory, Decision, Envelope, Policy, RetryAfterRule, RetryOn};
use crate::rng::Stream;

/// Parameters of the `fixed` policy.
///
/// Model choices: every retry sleeps `delay` (default 1 s: a model choice), without
/// jitter, measured from `end(n)`; with `retry_after: honour` the sleep is
/// `max(delay, Retry-After)`, so a `Retry-After: 2` on a 1 s policy gives exactly 2 s and the
/// envelope is [2.000s, 2.000s]; `retry_on` and `max_attempts` as for the exponential policy.
///
/// ```
/// use retrylab::policy::{FixedConfig, RetryAfterRule};
/// use std::time::Duration;
///
/// let config = FixedConfig {
///     delay: Duration::from_millis(250),
///     retry_after: RetryAfterRule::Ignore,
///     ..Default::default()
/// };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.into_policy().name(), "fixed");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FixedConfig {
    /// Attempts per call, the first included (3).
    pub max_attempts: u32,
    /// The delay before every retry (1 s).
    pub delay: Duration,
    /// Whether `Retry-After` is honoured (honour).
    pub retry_after: RetryAfterRule,
    /// Retryable outcomes (5xx, 429, transport errors, timeouts).
    pub retry_on: RetryOn,
}

impl Default for FixedConfig {
    fn default() -> FixedConfig {
        FixedConfig {
            max_attempts: 3,
            delay: Duration::from_secs(1),
            retry_after: RetryAfterRule::Honour,
            retry_on: RetryOn::default(),
        }
    }
}

impl FixedConfig {
    /// Checks `max_attempts >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_attempts(self.max_attempts)
    }

    /// The policy (not validated).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(Fixed::new(self))
    }
}

/// The fixed policy; see [`FixedConfig`] for the model.
#[derive(Debug, Clone)]
pub struct Fixed {
    config: FixedConfig,
    rules: Rules,
    delay_ns: u64,
}

impl Fixed {
    /// The policy for `config`.
    pub fn new(config: FixedConfig) -> Fixed {
        Fixed {
            rules: Rules {
                max_attempts: config.max_attempts,
                retry_on: config.retry_on.clone(),
                retry_after: config.retry_after,
            },
            delay_ns: duration_ns(config.delay),
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &FixedConfig {
        &self.config
    }
}

impl Schedule for Fixed {
    fn base_ns(&self, _n: u32) -> u64 {
        self.delay_ns
    }
    fn initial_ns(&self) -> u64 {
        self.delay_ns
    }
    fn cap_ns(&self) -> u64 {
        self.delay_ns
    }
    fn jitter(&self) -> Jitter {
        Jitter::None
    }
    fn rules(&self) -> &Rules {
        &self.rules
    }
}

impl Policy for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn decide(
        &mut self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        self.schedule_decide(ctx, history, rng)
    }
    fn envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope {
        self.schedule_envelope(ctx, history)
    }
    fn max_attempts(&self) -> Option<u32> {
        Some(self.rules.max_attempts.max(1))
    }
    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
