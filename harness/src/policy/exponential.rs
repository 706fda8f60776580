//! The exponential policy: `base_n = min(initial × multiplier^(n-1), max_delay)`, then jitter.

use std::time::Duration;

use super::backoff::capped_ns;
use super::generic::{ConfigError, Rules, Schedule, check_max_attempts};
use super::jitter::Jitter;
use super::units::duration_ns;
use super::{Policy, RetryAfterRule, RetryOn};

/// Parameters of the `exponential` policy (defaults: docs/scenario-format.md#client-policies).
///
/// Model choices:
/// - retry `n` (after attempt `n`, `n` = 1 for the first retry) has base
///   `min(initial × multiplier^(n-1), max_delay)`, computed as `initial_ns × pow(multiplier,
///   n-1)` with `libm::pow`, rounded to the nanosecond; the cap applies *before* the jitter;
/// - [`Jitter`] then gives the delay: none = base, full = uniform[0, base], equal =
///   base/2 + uniform[0, base/2], decorrelated = `min(max_delay, uniform[initial, 3 ×
///   previous])` where "previous" is the delay the client actually took before this attempt,
///   read from the call history (so it includes a `Retry-After` wait; `initial` before the
///   first retry); the multiplier is not used by decorrelated;
/// - the delay is rounded once to the nearest ms and measured from `end(n)`;
/// - with `retry_after: honour`, the sleep is `max(delay, Retry-After)` (delay-seconds from
///   `head(n)`, an HTTP-date against the virtual wall clock at the next start); an invalid
///   value is ignored;
/// - the call stops on success, on an outcome outside `retry_on`, or after `max_attempts`
///   attempts (the first included).
///
/// ```
/// use retrylab::policy::{ExponentialConfig, Jitter};
/// use std::time::Duration;
///
/// let config = ExponentialConfig {
///     initial: Duration::from_millis(100),
///     max_delay: Duration::from_secs(1),
///     jitter: Jitter::Equal,
///     max_attempts: 5,
///     ..Default::default()
/// };
/// assert!(config.validate().is_ok());
/// let policy = config.into_policy();
/// assert_eq!(policy.max_attempts(), Some(5));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ExponentialConfig {
    /// Attempts per call, the first included (3).
    pub max_attempts: u32,
    /// The first base delay (100 ms).
    pub initial: Duration,
    /// Growth per retry (2).
    pub multiplier: f64,
    /// The cap on the base delay, applied before jitter (20 s).
    pub max_delay: Duration,
    /// The jitter (full).
    pub jitter: Jitter,
    /// Whether `Retry-After` is honoured (honour).
    pub retry_after: RetryAfterRule,
    /// Retryable outcomes (5xx, 429, transport errors, timeouts).
    pub retry_on: RetryOn,
}

impl Default for ExponentialConfig {
    fn default() -> ExponentialConfig {
        ExponentialConfig {
            max_attempts: 3,
            initial: Duration::from_millis(100),
            multiplier: 2.0,
            max_delay: Duration::from_secs(20),
            jitter: Jitter::Full,
            retry_after: RetryAfterRule::Honour,
            retry_on: RetryOn::default(),
        }
    }
}

impl ExponentialConfig {
    /// Checks every field's domain: `max_attempts >= 1`, a finite `multiplier > 0`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_attempts(self.max_attempts)?;
        if !(self.multiplier.is_finite() && self.multiplier > 0.0) {
            return Err(ConfigError {
                field: "multiplier",
                message: format!("must be a finite number above 0, got {}", self.multiplier),
            });
        }
        Ok(())
    }

    /// The policy (not validated: out-of-domain values behave as documented on
    /// [`Exponential`], without panicking).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(Exponential::new(self))
    }
}

/// The exponential policy; see [`ExponentialConfig`] for the model.
///
/// A NaN or infinite growth reaches the cap; a base that computes to a negative number is 0.
#[derive(Debug, Clone)]
pub struct Exponential {
    config: ExponentialConfig,
    rules: Rules,
    initial_ns: u64,
    cap_ns: u64,
}

impl Exponential {
    /// The policy for `config`.
    pub fn new(config: ExponentialConfig) -> Exponential {
        Exponential {
            rules: Rules {
                max_attempts: config.max_attempts,
                retry_on: config.retry_on.clone(),
                retry_after: config.retry_after,
            },
            initial_ns: duration_ns(config.initial),
            cap_ns: duration_ns(config.max_delay),
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &ExponentialConfig {
        &self.config
    }
}

impl Schedule for Exponential {
    fn base_ns(&self, n: u32) -> u64 {
        capped_ns(
            self.initial_ns,
            self.config.multiplier,
            n.saturating_sub(1),
            self.cap_ns,
        )
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

super::generic::schedule_policy!(Exponential, "exponential");
