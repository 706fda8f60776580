//! The Fibonacci policy: the first delay `initial`, the second `step`, then each the sum of
//! the two before, capped at `max_delay`, then jitter.

use std::time::Duration;

use super::generic::{ConfigError, Rules, Schedule, check_max_attempts, check_not_decorrelated};
use super::jitter::Jitter;
use super::units::duration_ns;
use super::{Policy, RetryAfterRule, RetryOn};

/// Parameters of the `fibonacci` policy.
///
/// Model choices (defaults as for the exponential policy):
/// - retry 1 has base `initial`, retry 2 `step`, and retry `n` the sum of the two before,
///   `initial × fib(n-2) + step × fib(n-1)` with fib(0) = 0, fib(1) = fib(2) = 1, each capped
///   at `max_delay`, in integer nanoseconds, saturating; the cap applies before the jitter.
///   `step` equal to `initial` gives the classic `initial × fib(n)` (100 ms: 100, 100, 200,
///   300, 500, 800 ms); 100 ms and 300 ms give 100, 300, 400, 700, 1100 ms;
/// - jitter none, full or equal (decorrelated is rejected by [`FibonacciConfig::validate`]);
/// - rounding, `Retry-After`, `retry_on` and `max_attempts` as for the exponential policy.
///
/// ```
/// use retrylab::policy::{FibonacciConfig, Jitter};
/// use std::time::Duration;
///
/// let config = FibonacciConfig {
///     initial: Duration::from_millis(50),
///     step: Duration::from_millis(50),
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
    /// The first delay (100 ms).
    pub initial: Duration,
    /// The second delay (100 ms); each later one is the sum of the two before.
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

impl Default for FibonacciConfig {
    fn default() -> FibonacciConfig {
        FibonacciConfig {
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
    step_ns: u64,
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
            step_ns: duration_ns(config.step),
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
        if n <= 1 {
            return self.initial_ns.min(self.cap_ns);
        }
        // From the second delay on the sequence never decreases, so the walk stops as soon
        // as a delay reaches the cap, or when it stays at 0: it is bounded by the cap (a
        // positive delay grows like fib, ~93 steps before u64 saturates), not by `n`.
        let (mut before, mut delay) = (self.initial_ns, self.step_ns);
        for _ in 2..n {
            if delay >= self.cap_ns || (before == 0 && delay == 0) {
                break;
            }
            (before, delay) = (delay, before.saturating_add(delay));
        }
        delay.min(self.cap_ns)
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
