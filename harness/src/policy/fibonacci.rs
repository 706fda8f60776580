//! The Fibonacci policy: `base_n = min(initial × fib(n), max_delay)` with fib = 1, 1, 2, 3,
//! 5, ..., then jitter.

use std::time::Duration;

use super::generic::{ConfigError, Rules, Schedule, check_max_attempts, check_not_decorrelated};
use super::jitter::Jitter;
use super::units::duration_ns;
use super::{Policy, RetryAfterRule, RetryOn};

/// Parameters of the `fibonacci` policy.
///
/// Model choices (defaults as for the exponential policy):
/// - retry `n` has base `min(initial × fib(n), max_delay)` with fib(1) = fib(2) = 1,
///   fib(3) = 2, ... (so 100 ms gives 100, 100, 200, 300, 500, 800 ms), in integer
///   nanoseconds, saturating; the cap applies before the jitter;
/// - jitter none, full or equal (decorrelated is rejected by [`FibonacciConfig::validate`]);
/// - rounding, `Retry-After`, `retry_on` and `max_attempts` as for the exponential policy.
///
/// ```
/// use retrylab::policy::{FibonacciConfig, Jitter};
/// use std::time::Duration;
///
/// let config = FibonacciConfig {
///     initial: Duration::from_millis(50),
///     max_delay: Duration::from_secs(2),
///     jitter: Jitter::None,
///     max_attempts: 6,
///     ..Default::default()
/// };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.into_policy().max_attempts(), Some(6));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FibonacciConfig {
    /// Attempts per call, the first included (3).
    pub max_attempts: u32,
    /// The unit delay, multiplied by fib(n) (100 ms).
    pub initial: Duration,
    /// The cap on the base delay, applied before jitter (20 s).
    pub max_delay: Duration,
    /// The jitter (full).
    pub jitter: Jitter,
    /// Whether `Retry-After` is honoured (honour).
    pub retry_after: RetryAfterRule,
    /// Retryable outcomes (5xx, 429, transport errors, timeouts).
    pub retry_on: RetryOn,
}

impl Default for FibonacciConfig {
    fn default() -> FibonacciConfig {
        FibonacciConfig {
            max_attempts: 3,
            initial: Duration::from_millis(100),
            max_delay: Duration::from_secs(20),
            jitter: Jitter::Full,
            retry_after: RetryAfterRule::Honour,
            retry_on: RetryOn::default(),
        }
    }
}

impl FibonacciConfig {
    /// Checks `max_attempts >= 1` and a jitter other than decorrelated.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_attempts(self.max_attempts)?;
        check_not_decorrelated(self.jitter)
    }

    /// The policy (not validated).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(Fibonacci::new(self))
    }
}

/// The Fibonacci policy; see [`FibonacciConfig`] for the model.
#[derive(Debug, Clone)]
pub struct Fibonacci {
    config: FibonacciConfig,
    rules: Rules,
    initial_ns: u64,
    cap_ns: u64,
}

impl Fibonacci {
    /// The policy for `config`.
    pub fn new(config: FibonacciConfig) -> Fibonacci {
        Fibonacci {
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
    pub fn config(&self) -> &FibonacciConfig {
        &self.config
    }
}

impl Schedule for Fibonacci {
    fn base_ns(&self, n: u32) -> u64 {
        // Walk the sequence, stopping as soon as the product reaches the cap: the loop is
        // bounded by the cap (at most ~93 steps before u64 saturates), not by `n`.
        let (mut a, mut b) = (1u64, 1u64); // fib(1), fib(2)
        for _ in 1..n.max(1) {
            if self.initial_ns.saturating_mul(a) >= self.cap_ns {
                return self.cap_ns;
            }
            (a, b) = (b, a.saturating_add(b));
        }
        self.initial_ns.saturating_mul(a).min(self.cap_ns)
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

super::generic::schedule_policy!(Fibonacci, "fibonacci");
