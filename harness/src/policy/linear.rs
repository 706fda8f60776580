//! The linear policy: `base_n = min(initial + step × (n-1), max_delay)`, then jitter.

use std::time::Duration;

use super::generic::{ConfigError, Rules, Schedule, check_max_attempts, check_not_decorrelated};
use super::jitter::Jitter;
use super::units::duration_ns;
use super::{Policy, RetryAfterRule, RetryOn};

/// Parameters of the `linear` policy.
///
/// Model choices (no published client fixes defaults for `linear`; we take the exponential's, with
/// `step` equal to `initial`):
/// - retry `n` has base `min(initial + step × (n-1), max_delay)` in integer nanoseconds
///   (saturating), the cap applied before the jitter;
/// - jitter none, full or equal as for [`super::ExponentialConfig`] (decorrelated is rejected
///   by [`LinearConfig::validate`]; unvalidated, it behaves as the exponential's);
/// - rounding, `Retry-After`, `retry_on` and `max_attempts` as for the exponential policy.
///
/// ```
/// use retrylab::policy::{Jitter, LinearConfig};
/// use std::time::Duration;
///
/// let config = LinearConfig {
///     initial: Duration::from_millis(200),
///     step: Duration::from_millis(300),
///     jitter: Jitter::None,
///     ..Default::default()
/// };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.into_policy().name(), "linear");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LinearConfig {
    /// Attempts per call, the first included (3).
    pub max_attempts: u32,
    /// The first base delay (100 ms).
    pub initial: Duration,
    /// Added per retry (100 ms).
    pub step: Duration,
    /// The cap on the base delay, applied before jitter (20 s).
    pub max_delay: Duration,
    /// The jitter (full).
    pub jitter: Jitter,
    /// Whether `Retry-After` is honoured (honour).
    pub retry_after: RetryAfterRule,
    /// Retryable outcomes (5xx, 429, transport errors, timeouts).
    pub retry_on: RetryOn,
}

impl Default for LinearConfig {
    fn default() -> LinearConfig {
        LinearConfig {
            max_attempts: 3,
            initial: Duration::from_millis(100),
            step: Duration::from_millis(100),
            max_delay: Duration::from_secs(20),
            jitter: Jitter::Full,
            retry_after: RetryAfterRule::Honour,
            retry_on: RetryOn::default(),
        }
    }
}

impl LinearConfig {
    /// Checks `max_attempts >= 1` and a jitter other than decorrelated.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_attempts(self.max_attempts)?;
        check_not_decorrelated(self.jitter)
    }

    /// The policy (not validated).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(Linear::new(self))
    }
}

/// The linear policy; see [`LinearConfig`] for the model.
#[derive(Debug, Clone)]
pub struct Linear {
    config: LinearConfig,
    rules: Rules,
    initial_ns: u64,
    step_ns: u64,
    cap_ns: u64,
}

impl Linear {
    /// The policy for `config`.
    pub fn new(config: LinearConfig) -> Linear {
        Linear {
            rules: Rules {
                max_attempts: config.max_attempts,
                retry_on: config.retry_on.clone(),
                retry_after: config.retry_after,
            },
            initial_ns: duration_ns(config.initial),
            step_ns: duration_ns(config.step),
            cap_ns: duration_ns(config.max_delay),
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &LinearConfig {
        &self.config
    }
}

impl Schedule for Linear {
    fn base_ns(&self, n: u32) -> u64 {
        let steps = u64::from(n.saturating_sub(1));
        self.initial_ns
            .saturating_add(self.step_ns.saturating_mul(steps))
            .min(self.cap_ns)
    }
    fn initial_ns(&self) -> u64 {
        self.initial_ns
    }
    fn cap_ns(&self) -> u64 {
        self.cap_ns
    }
    fn jitter(&self) -> Jitter {
        self.config.jitter
    }
    fn rules(&self) -> &Rules {
        &self.rules
    }
}

super::generic::schedule_policy!(Linear, "linear");
