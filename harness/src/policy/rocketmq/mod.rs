//! `RocketMQ` / `ApsaraMQ` producer send retries, `rocketmq_producer`
//! (docs/retry-behaviours.md#4-rocketmq-producers): [`RocketmqProducer`], configured by
//! [`RocketmqConfig`].
//!
//! A producer retries a failed send itself. A throttled send (the broker is over capacity)
//! backs off exponentially, without jitter; every other failure is retried at once, on the
//! reasoning that another broker, or the same one a moment later, may take the message.

mod broker_code;

#[cfg(test)]
mod tests;

use std::time::Duration;

use super::backoff::capped_ns;
use super::generic::ConfigError;
use super::units::{duration_ns, ns_to_ms};
use super::{Anchor, AttemptView, CallHistory, Decision, Envelope, Observed, Policy, StopReason};
use crate::rng::Stream;

pub use broker_code::broker_code;

/// The throttling codes of [`RocketmqConfig::default`]: `TOO_MANY_REQUESTS` as `ApsaraMQ`
/// gives it for its gRPC protocol (530) and as the open-source clients define it (42900),
/// and the Remoting protocol's flow-control code (215): the codes the fake broker answers
/// 429 ([`retrylab_endpoints::THROTTLING_CODES`]), widened to the policy's code type.
pub const DEFAULT_THROTTLE_CODES: [i64; 3] = {
    let [a, b, c] = retrylab_endpoints::THROTTLING_CODES;
    // `as` widens u32 to i64 losslessly; `i64::from` is not usable in a constant.
    [a as i64, b as i64, c as i64]
};

/// Parameters of the `rocketmq_producer` policy.
///
/// The model, after attempt `n` of a send:
/// - a 2xx is the broker's acknowledgement: the send succeeded;
/// - a throttle is an HTTP 429, or a response whose JSON error body `{"code": c, ...}` has a
///   code `c` in `throttle_codes`; retry `n` then waits `min(initial_backoff ×
///   multiplier^n, max_backoff)` (20 ms, then 40 ms with the defaults), exactly, from
///   `end(n)`;
/// - every other failure (any other status, a reset, a timeout, a refused connection) is
///   retried at once, 0 ms after `end(n)`; **Model:** a 4xx too, as the SDK retries every
///   failed send it is not told is throttled;
/// - after `max_attempts` attempts the send fails (`max_attempts_exceeded`).
///
/// ```
/// use retrylab::policy::rocketmq::RocketmqConfig;
/// use std::time::Duration;
///
/// let config = RocketmqConfig::default();
/// assert_eq!(config.throttle_backoff(1), Duration::from_millis(20));
/// assert_eq!(config.throttle_backoff(2), Duration::from_millis(40));
/// assert_eq!(config.throttle_backoff(7), Duration::from_secs(1));
/// // 3 attempts of at most 2 s, plus the two backoffs of a throttled send.
/// assert_eq!(
///     config.worst_case_blocking_time(Duration::from_secs(2)),
///     Duration::from_millis(6060)
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RocketmqConfig {
    /// The backoff unit: retry `n` after a throttle waits `initial_backoff × multiplier^n`
    /// (10 ms).
    pub initial_backoff: Duration,
    /// Growth per retry (2).
    pub multiplier: f64,
    /// The cap on a throttle's backoff (1 s).
    pub max_backoff: Duration,
    /// Error-body codes that mean "throttled" (`[530, 42900, 215]`).
    pub throttle_codes: Vec<i64>,
    /// Send attempts in all, the first included (3).
    pub max_attempts: u32,
}

impl Default for RocketmqConfig {
    fn default() -> Self {
        RocketmqConfig {
            initial_backoff: Duration::from_millis(10),
            multiplier: 2.0,
            max_backoff: Duration::from_secs(1),
            throttle_codes: DEFAULT_THROTTLE_CODES.to_vec(),
            max_attempts: 3,
        }
    }
}

impl RocketmqConfig {
    /// Checks `max_attempts >= 1`, a finite `multiplier >= 1` and `initial_backoff <=
    /// max_backoff`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_attempts == 0 {
            return Err(ConfigError {
                field: "max_attempts",
                message: "must be at least 1".to_string(),
            });
        }
        if !(self.multiplier.is_finite() && self.multiplier >= 1.0) {
            return Err(ConfigError {
                field: "multiplier",
                message: format!(
                    "must be a finite number of at least 1, got {}",
                    self.multiplier
                ),
            });
        }
        if self.initial_backoff > self.max_backoff {
            return Err(ConfigError {
                field: "initial_backoff",
                message: format!(
                    "{:?} is above max_backoff {:?}",
                    self.initial_backoff, self.max_backoff
                ),
            });
        }
        Ok(())
    }

    /// The backoff of retry `n` after a throttle, before rounding: `min(initial_backoff ×
    /// multiplier^n, max_backoff)`, in nanoseconds.
    fn throttle_ns(&self, n: u32) -> u64 {
        capped_ns(
            duration_ns(self.initial_backoff),
            self.multiplier,
            n,
            duration_ns(self.max_backoff),
        )
    }

    /// The sleep of retry `n` after a throttle, in whole milliseconds.
    pub fn throttle_backoff(&self, n: u32) -> Duration {
        Duration::from_millis(ns_to_ms(self.throttle_ns(n)))
    }

    /// The longest one send can block: `max_attempts × attempt_timeout` plus the backoffs of
    /// retries 1 to `max_attempts - 1` (each as if throttled), the bound the open-source
    /// producer documents. A scenario states it as `total_time: { at_most: ... }` (see
    /// docs/retry-behaviours.md#4-rocketmq-producers).
    pub fn worst_case_blocking_time(&self, attempt_timeout: Duration) -> Duration {
        let backoffs: Duration = (1..self.max_attempts)
            .map(|n| self.throttle_backoff(n))
            .sum();
        attempt_timeout
            .saturating_mul(self.max_attempts)
            .saturating_add(backoffs)
    }

    /// The policy (not validated: a base above the cap is capped, 0 attempts behave as 1).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(RocketmqProducer { config: self })
    }
}

/// The `rocketmq_producer` policy; see [`RocketmqConfig`] for the model.
#[derive(Debug, Clone)]
pub struct RocketmqProducer {
    config: RocketmqConfig,
}

impl RocketmqProducer {
    /// Whether `ctx` is a throttled send: an HTTP 429 or a throttling code in the body.
    pub fn is_throttle(&self, ctx: &AttemptView) -> bool {
        let coded = ctx
            .error_code
            .as_deref()
            .and_then(|c| c.parse::<i64>().ok())
            .is_some_and(|c| self.config.throttle_codes.contains(&c));
        match ctx.outcome {
            Observed::Status(429) => true,
            Observed::Status(_) => coded && !ctx.outcome.is_success(),
            _ => false,
        }
    }

    /// The delay of the retry after `ctx` in ns, or why there is none.
    fn step(&self, ctx: &AttemptView) -> Result<u64, StopReason> {
        if ctx.outcome.is_success() {
            return Err(StopReason::Success);
        }
        if ctx.n >= self.config.max_attempts {
            return Err(StopReason::MaxAttemptsExceeded);
        }
        Ok(if self.is_throttle(ctx) {
            self.config.throttle_ns(ctx.n)
        } else {
            0
        })
    }
}

/// After a refused connect, the longest a correct producer may wait before its retry: the
/// SDK retries at once, but its channel reconnects with gRPC's connection backoff, whose
/// deadline for the `m`-th refusal in a row runs from that connect's start (up to 1 s for
/// the first, then 1.6x with +-20%). The reference producer retries at once; this only keeps
/// a producer that waits for its channel from being judged late. 0 for any other failure.
fn reconnect_wait_ms(ctx: &AttemptView, history: &CallHistory<'_>) -> u64 {
    if ctx.outcome != Observed::Refused {
        return 0;
    }
    let before = history
        .previous
        .iter()
        .rev()
        .take_while(|a| a.outcome == Observed::Refused)
        .count();
    let m = u32::try_from(before + 1).unwrap_or(u32::MAX);
    let (_, hi_ns) = crate::policy::GrpcConnectionConfig::default().deadline_window_ns(m);
    ns_to_ms(hi_ns).saturating_sub(ctx.end_ms.saturating_sub(ctx.start_ms))
}

impl Policy for RocketmqProducer {
    fn name(&self) -> &'static str {
        "rocketmq_producer"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        _history: &CallHistory<'_>,
        _rng: &mut Stream,
    ) -> Decision {
        match self.step(ctx) {
            Err(reason) => Decision::Stop(reason),
            Ok(ns) => Decision::Retry {
                delay: Duration::from_millis(ns_to_ms(ns)),
                measured_from: Anchor::End,
            },
        }
    }

    fn envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope {
        match self.step(ctx) {
            Err(reason) => Envelope::MustStop(reason),
            Ok(ns) => Envelope::Retry {
                min_ms: ns_to_ms(ns),
                max_ms: ns_to_ms(ns).max(reconnect_wait_ms(ctx, history)),
                from: Anchor::End,
                optional: false,
                not_before: None,
                uniform: false,
            },
        }
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.max_attempts)
    }

    fn error_code(
        &self,
        status: u16,
        _headers: &[(String, String)],
        body: &[u8],
    ) -> Option<String> {
        if (200..300).contains(&status) {
            return None;
        }
        broker_code(body).map(|code| code.to_string())
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
