//! The rules the generic policies share: classify, count attempts, combine a backoff window
//! with `Retry-After`.

use std::time::Duration;

use super::attempt::retry_after_floor;
use super::jitter::{Jitter, JitterInput};
use super::retry_after::RetryAfterRule;
use super::units::ns_to_ms;
use super::{Anchor, AttemptView, CallHistory, Decision, Envelope, RetryOn, StopReason};
use crate::rng::Stream;

/// Classification and attempt counting of a generic policy.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// Attempts allowed, the first included; below 1 behaves as 1 (a call always makes one).
    pub max_attempts: u32,
    pub retry_on: RetryOn,
    pub retry_after: RetryAfterRule,
}

impl Rules {
    /// Why the call stops after `ctx`, if it does. The order is the AWS SDKs' (reference
    /// section 2): success, then "not retryable", then "no attempts left", so a 404 on the
    /// last attempt reports `not_retryable`.
    pub(crate) fn stop_reason(&self, ctx: &AttemptView) -> Option<StopReason> {
        if ctx.outcome.is_success() {
            Some(StopReason::Success)
        } else if !self.retry_on.matches(&ctx.outcome) {
            Some(StopReason::NotRetryable)
        } else if ctx.n >= self.max_attempts.max(1) {
            Some(StopReason::MaxAttemptsExceeded)
        } else {
            None
        }
    }

    /// The `Retry-After` floor as a delay from `end(n)`, when honoured.
    fn floor_ms(&self, ctx: &AttemptView) -> (u64, Option<super::NotBefore>) {
        match self.retry_after {
            RetryAfterRule::Ignore => (0, None),
            RetryAfterRule::Honour => match retry_after_floor(ctx) {
                Some(nb) => (nb.after(ctx.anchor_ms(Anchor::End)), Some(nb)),
                None => (0, None),
            },
        }
    }

    /// The envelope for a backoff window `[lo_ns, hi_ns]` measured from `end(n)`: bounds
    /// rounded to ms, then raised to the `Retry-After` floor (lower bound `max(backoff min,
    /// RA)`, upper bound `max(backoff max, RA)`, the reference sleeping `max(backoff, RA)`).
    pub(crate) fn envelope(
        &self,
        ctx: &AttemptView,
        window_ns: (u64, u64),
        uniform: bool,
    ) -> Envelope {
        if let Some(reason) = self.stop_reason(ctx) {
            return Envelope::MustStop(reason);
        }
        let (lo, hi) = (ns_to_ms(window_ns.0), ns_to_ms(window_ns.1));
        let (floor, not_before) = self.floor_ms(ctx);
        Envelope::Retry {
            min_ms: lo.max(floor),
            max_ms: hi.max(floor),
            from: Anchor::End,
            optional: false,
            // A floor inside the window makes the floor an atom of the reference's
            // distribution: no longer uniform.
            uniform: uniform && floor <= lo && hi > lo,
            not_before,
        }
    }

    /// The reference decision: stop, or sleep `max(round(sample), RA floor)` from `end(n)`.
    /// The sampler runs only when the call continues, so a stop draws nothing.
    pub(crate) fn decide(&self, ctx: &AttemptView, sample_ns: impl FnOnce() -> u64) -> Decision {
        if let Some(reason) = self.stop_reason(ctx) {
            return Decision::Stop(reason);
        }
        let (floor, _) = self.floor_ms(ctx);
        Decision::Retry {
            delay: Duration::from_millis(ns_to_ms(sample_ns()).max(floor)),
            measured_from: Anchor::End,
        }
    }
}

/// A schedule (the capped base delay of retry `n`) plus a jitter: everything a generic
/// backoff policy is.
pub(crate) trait Schedule {
    /// The capped base delay after attempt `n` (1-based), in ns.
    fn base_ns(&self, n: u32) -> u64;
    /// The first delay of the schedule (decorrelated jitter's lower bound).
    fn initial_ns(&self) -> u64;
    /// The cap.
    fn cap_ns(&self) -> u64;
    fn jitter(&self) -> Jitter;
    fn rules(&self) -> &Rules;

    /// What jitter needs for the retry after `ctx`, the previous delay observed in `history`.
    fn jitter_input(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> JitterInput {
        JitterInput {
            base_ns: self.base_ns(ctx.n),
            initial_ns: self.initial_ns(),
            cap_ns: self.cap_ns(),
            prev_ns: history
                .observed_delay_ms(ctx, Anchor::End)
                .map(|ms| ms.saturating_mul(super::units::NS_PER_MS)),
        }
    }

    fn schedule_envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope {
        let input = self.jitter_input(ctx, history);
        self.rules().envelope(
            ctx,
            self.jitter().window_ns(&input),
            self.jitter().is_uniform(),
        )
    }

    fn schedule_decide(
        &self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let input = self.jitter_input(ctx, history);
        let jitter = self.jitter();
        self.rules().decide(ctx, || jitter.sample_ns(&input, rng))
    }
}

/// A configuration value out of its domain; `Display` names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The scenario key, e.g. `multiplier`.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigError {
    /// A validation's refusal of `field`.
    pub(crate) fn refuse(field: &'static str, message: String) -> Result<(), ConfigError> {
        Err(ConfigError { field, message })
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// `max_attempts` counts the first attempt, so 0 is meaningless.
pub(crate) fn check_max_attempts(max_attempts: u32) -> Result<(), ConfigError> {
    if max_attempts == 0 {
        return Err(ConfigError {
            field: "max_attempts",
            message: "must be at least 1 (it counts the first attempt)".to_string(),
        });
    }
    Ok(())
}

/// Decorrelated jitter is defined by its own recurrence, not by a schedule's base, so only
/// the exponential policy offers it.
pub(crate) fn check_not_decorrelated(jitter: Jitter) -> Result<(), ConfigError> {
    if jitter == Jitter::Decorrelated {
        return Err(ConfigError {
            field: "jitter",
            message: "decorrelated jitter is defined for the exponential policy only; use \
                      none, full or equal"
                .to_string(),
        });
    }
    Ok(())
}

/// Implements [`Policy`](super::Policy) for a [`Schedule`]: the generic policies differ only
/// in their delay curve, so deciding, the envelope and the attempt count all come from the
/// schedule.
macro_rules! schedule_policy {
    ($ty:ty, $name:literal) => {
        impl $crate::policy::Policy for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn decide(
                &mut self,
                ctx: &$crate::policy::AttemptView,
                history: &$crate::policy::CallHistory<'_>,
                rng: &mut $crate::rng::Stream,
            ) -> $crate::policy::Decision {
                $crate::policy::generic::Schedule::schedule_decide(self, ctx, history, rng)
            }
            fn envelope(
                &self,
                ctx: &$crate::policy::AttemptView,
                history: &$crate::policy::CallHistory<'_>,
            ) -> $crate::policy::Envelope {
                $crate::policy::generic::Schedule::schedule_envelope(self, ctx, history)
            }
            fn max_attempts(&self) -> Option<u32> {
                Some(
                    $crate::policy::generic::Schedule::rules(self)
                        .max_attempts
                        .max(1),
                )
            }
            fn clone_box(&self) -> Box<dyn $crate::policy::Policy> {
                Box::new(self.clone())
            }
        }
    };
}
pub(crate) use schedule_policy;
