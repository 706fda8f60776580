//! Amazon SNS delivery to HTTP/S subscriptions, `sns_delivery` (docs/retry-behaviours.md#1-amazon-sns-delivery-policies): the
//! delivery policy's four phases as a retry policy, [`SnsDelivery`], configured by
//! [`SnsConfig`].

mod backoff;

#[cfg(test)]
mod tests;

use std::time::Duration;

use super::backoff::spread_ns;
use super::generic::ConfigError;
use super::units::{duration_ns, fmt_ms, ns_to_ms};
use super::{Anchor, AttemptView, CallHistory, Decision, Envelope, Next, Observed, Policy};
use super::{StopReason, StopReason::*};
use crate::rng::Stream;

pub use backoff::SnsBackoff;

/// SNS's hard limit on a custom HTTP/S policy's total retry time.
pub const MAX_TOTAL_RETRY_TIME: Duration = Duration::from_secs(3600);
/// SNS's limit on `numRetries` for a custom HTTP/S policy.
pub const MAX_NUM_RETRIES: u32 = 100;
/// SNS's limit on `maxDelayTarget` for a custom HTTP/S policy.
pub const MAX_DELAY_TARGET: Duration = Duration::from_secs(3600);
/// The default jitter fraction (±10 %).
pub const DEFAULT_JITTER: f64 = 0.1;

/// Where a retry falls in the delivery policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnsPhase {
    /// `numNoDelayRetries`: no delay.
    Immediate,
    /// `numMinDelayRetries`: each after `minDelayTarget`.
    PreBackoff,
    /// The backoff phase: retry `i` of `n`, shaped by `backoffFunction`.
    Backoff {
        /// 1-based position in the phase.
        i: u32,
        /// The phase's length.
        n: u32,
    },
    /// `numMaxDelayRetries`: each after `maxDelayTarget`.
    PostBackoff,
}

impl std::fmt::Display for SnsPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnsPhase::Immediate => f.write_str("immediate"),
            SnsPhase::PreBackoff => f.write_str("pre-backoff"),
            SnsPhase::Backoff { i, n } => write!(f, "backoff {i}/{n}"),
            SnsPhase::PostBackoff => f.write_str("post-backoff"),
        }
    }
}

/// Parameters of the `sns_delivery` policy: a delivery policy's `healthyRetryPolicy` and
/// `throttlePolicy`, plus the jitter SNS does not publish.
///
/// The model:
/// - retry `r` (after attempt `r`; the first delivery is attempt 1) belongs to the phases in
///   order: `num_no_delay_retries` immediate retries (delay 0), `num_min_delay_retries` at
///   `min_delay`, then `num_retries - (the three counts)` backoff retries from `min_delay` to
///   `max_delay` along [`SnsBackoff`], then `num_max_delay_retries` at `max_delay`; a call
///   makes at most `num_retries + 1` attempts;
/// - every 5xx and 429, every timeout, transport error and refused connect is retried; any
///   other status is a permanent failure (`not_retryable`); `Retry-After` is not read;
/// - jitter (unpublished: a model): the delay of a retry whose nominal delay is `d` is
///   uniform in `[d × (1 - jitter), d × (1 + jitter)]` (integer ns; the window's bounds are
///   inclusive after rounding to ms), measured from `end(r)`;
/// - `max_receives_per_second` (a model of `throttlePolicy`): attempt starts are at least
///   `ceil(1000 / rate)` ms apart, so no one-second window holds more than `rate` starts.
///   Within a call the envelope raises its lower bound to `start(r) + spacing`; the
///   reference client also waits before a call's first attempt
///   ([`Policy::wait_before_call`]), which no envelope judges;
/// - after the last retry the message is dropped (or dead-lettered by the endpoint).
///
/// Delays are any [`Duration`]; AWS's JSON writes whole seconds.
///
/// ```
/// use retrylab::policy::sns::{SnsBackoff, SnsConfig};
/// use retrylab::policy::Policy;
/// use std::time::Duration;
///
/// let config = SnsConfig {
///     min_delay: Duration::from_secs(20),
///     max_delay: Duration::from_secs(40),
///     num_retries: 3,
///     backoff: SnsBackoff::Linear,
///     jitter: 0.0,
///     ..Default::default()
/// };
/// assert!(config.validate_custom_http().is_ok());
/// assert_eq!(config.nominal_delay(2), Some(Duration::from_secs(30)));
/// assert_eq!(config.total_retry_time(), Duration::from_secs(90));
/// assert_eq!(config.into_policy().max_attempts(), Some(4));
/// assert_eq!(SnsConfig::aws_managed().into_policy().max_attempts(), Some(100_016));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SnsConfig {
    /// `minDelayTarget` (20 s).
    pub min_delay: Duration,
    /// `maxDelayTarget` (20 s).
    pub max_delay: Duration,
    /// `numRetries`, all phases together (3).
    pub num_retries: u32,
    /// `numNoDelayRetries` (0).
    pub num_no_delay_retries: u32,
    /// `numMinDelayRetries` (0).
    pub num_min_delay_retries: u32,
    /// `numMaxDelayRetries` (0).
    pub num_max_delay_retries: u32,
    /// `backoffFunction` (linear).
    pub backoff: SnsBackoff,
    /// The jitter fraction, in [0, 1] (0.1).
    pub jitter: f64,
    /// `throttlePolicy.maxReceivesPerSecond` (none).
    pub max_receives_per_second: Option<u32>,
}

impl Default for SnsConfig {
    fn default() -> SnsConfig {
        SnsConfig {
            min_delay: Duration::from_secs(20),
            max_delay: Duration::from_secs(20),
            num_retries: 3,
            num_no_delay_retries: 0,
            num_min_delay_retries: 0,
            num_max_delay_retries: 0,
            backoff: SnsBackoff::Linear,
            jitter: DEFAULT_JITTER,
            max_receives_per_second: None,
        }
    }
}

fn err(field: &'static str, message: String) -> Result<(), ConfigError> {
    Err(ConfigError { field, message })
}

impl SnsConfig {
    /// AWS's policy for AWS-managed endpoints (Lambda, SQS): 3 immediate, 2 at 1 s, 10
    /// exponential from 1 s to 20 s, 100,000 at 20 s: 100,015 retries, 100,016 attempts.
    pub fn aws_managed() -> SnsConfig {
        SnsConfig {
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(20),
            num_retries: 100_015,
            num_no_delay_retries: 3,
            num_min_delay_retries: 2,
            num_max_delay_retries: 100_000,
            backoff: SnsBackoff::Exponential,
            ..SnsConfig::default()
        }
    }

    /// AWS's policy for customer-managed endpoints (SMTP, SMS, mobile push): 0 immediate,
    /// 2 at 10 s, 10 exponential from 10 s to 600 s, 38 at 600 s: 50 retries, 51 attempts.
    pub fn customer_managed() -> SnsConfig {
        SnsConfig {
            min_delay: Duration::from_secs(10),
            max_delay: Duration::from_secs(600),
            num_retries: 50,
            num_no_delay_retries: 0,
            num_min_delay_retries: 2,
            num_max_delay_retries: 38,
            backoff: SnsBackoff::Exponential,
            ..SnsConfig::default()
        }
    }

    /// Checks what any policy needs: `min_delay <= max_delay`, the phase counts within
    /// `num_retries`, `jitter` in [0, 1], `max_receives_per_second >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.min_delay > self.max_delay {
            return err(
                "minDelayTarget",
                format!(
                    "{} is above maxDelayTarget {}",
                    fmt_ms(self.min_delay.as_millis() as u64),
                    fmt_ms(self.max_delay.as_millis() as u64)
                ),
            );
        }
        let phases = u64::from(self.num_no_delay_retries)
            + u64::from(self.num_min_delay_retries)
            + u64::from(self.num_max_delay_retries);
        if phases > u64::from(self.num_retries) {
            return err(
                "numRetries",
                format!(
                    "the phases add up to {phases} retries but numRetries is {}",
                    self.num_retries
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return err("jitter", format!("{} is not in [0, 1]", self.jitter));
        }
        if self.max_receives_per_second == Some(0) {
            return err("maxReceivesPerSecond", "must be at least 1".to_string());
        }
        Ok(())
    }

    /// [`SnsConfig::validate`] plus SNS's limits for a custom HTTP/S policy (the presets are
    /// exempt): `minDelayTarget >= 1 s`, `maxDelayTarget <= 3600 s`, `numRetries <= 100`,
    /// and a [total retry time](SnsConfig::total_retry_time) of at most 3600 s.
    pub fn validate_custom_http(&self) -> Result<(), ConfigError> {
        self.validate()?;
        if self.min_delay < Duration::from_secs(1) {
            return err("minDelayTarget", "must be at least 1 second".to_string());
        }
        if self.max_delay > MAX_DELAY_TARGET {
            return err("maxDelayTarget", "must be at most 3600 seconds".to_string());
        }
        if self.num_retries > MAX_NUM_RETRIES {
            return err(
                "numRetries",
                format!("{} is above SNS's limit of 100", self.num_retries),
            );
        }
        let total = self.total_retry_time();
        if total > MAX_TOTAL_RETRY_TIME {
            return err(
                "healthyRetryPolicy",
                format!(
                    "the total retry time is {}, above SNS's limit of 3600s for HTTP/S",
                    fmt_ms(total.as_millis() as u64)
                ),
            );
        }
        Ok(())
    }

    /// Retries in the backoff phase: `num_retries` less the three other phases (0 when they
    /// add up to more).
    pub fn backoff_retries(&self) -> u32 {
        self.num_retries
            .saturating_sub(self.num_no_delay_retries)
            .saturating_sub(self.num_min_delay_retries)
            .saturating_sub(self.num_max_delay_retries)
    }

    /// The phase of retry `r` (1-based), `None` past `num_retries`.
    pub fn phase(&self, r: u32) -> Option<SnsPhase> {
        if r == 0 || r > self.num_retries {
            return None;
        }
        let a = self.num_no_delay_retries;
        let b = a.saturating_add(self.num_min_delay_retries);
        let n = self.backoff_retries();
        let c = b.saturating_add(n);
        Some(if r <= a {
            SnsPhase::Immediate
        } else if r <= b {
            SnsPhase::PreBackoff
        } else if r <= c {
            SnsPhase::Backoff { i: r - b, n }
        } else {
            SnsPhase::PostBackoff
        })
    }

    fn nominal_ns(&self, phase: SnsPhase) -> u64 {
        let (min, max) = (duration_ns(self.min_delay), duration_ns(self.max_delay));
        match phase {
            SnsPhase::Immediate => 0,
            SnsPhase::PreBackoff => min,
            SnsPhase::Backoff { i, n } => self.backoff.delay_ns(min, max, i, n),
            SnsPhase::PostBackoff => max,
        }
    }

    /// The delay of retry `r` before jitter, `None` past `num_retries`.
    pub fn nominal_delay(&self, r: u32) -> Option<Duration> {
        self.phase(r)
            .map(|p| Duration::from_nanos(self.nominal_ns(p)))
    }

    /// The sum of the nominal delays of all retries (what SNS's 3600 s limit bounds; attempt
    /// durations and jitter are not included).
    pub fn total_retry_time(&self) -> Duration {
        let (min, max) = (
            u128::from(duration_ns(self.min_delay)),
            u128::from(duration_ns(self.max_delay)),
        );
        let n = self.backoff_retries();
        let pre = self
            .num_min_delay_retries
            .min(self.num_retries.saturating_sub(self.num_no_delay_retries));
        let post = self
            .num_retries
            .saturating_sub(self.num_no_delay_retries)
            .saturating_sub(pre)
            .saturating_sub(n);
        let backoff: u128 = (1..=n)
            .map(|i| u128::from(self.nominal_ns(SnsPhase::Backoff { i, n })))
            .sum();
        let total = u128::from(pre) * min + backoff + u128::from(post) * max;
        Duration::from_nanos(u64::try_from(total).unwrap_or(u64::MAX))
    }

    /// The spacing between attempt starts `throttlePolicy` imposes, ms.
    pub fn spacing_ms(&self) -> Option<u64> {
        self.max_receives_per_second
            .filter(|r| *r > 0)
            .map(|r| 1000u64.div_ceil(u64::from(r)))
    }

    /// The policy (not validated: out-of-order phases are truncated at `num_retries`, a
    /// jitter outside [0, 1] is clamped into it).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(SnsDelivery::new(self))
    }
}

/// The SNS delivery policy; see [`SnsConfig`] for the model.
#[derive(Debug, Clone)]
pub struct SnsDelivery {
    config: SnsConfig,
    jitter: f64,
    spacing_ms: Option<u64>,
    /// The client's latest attempt start, or reserved start of a call's first attempt (for
    /// the spacing before a call's first attempt).
    last_start_ms: Option<u64>,
    /// The phase of the retry decided last (for the trace).
    next_phase: Option<SnsPhase>,
}

/// What the policy says after an attempt.
enum Step {
    Stop(StopReason),
    Retry {
        phase: SnsPhase,
        lo_ns: u64,
        hi_ns: u64,
        floor_ms: u64,
    },
}

impl SnsDelivery {
    /// The policy for `config`.
    pub fn new(config: SnsConfig) -> SnsDelivery {
        SnsDelivery {
            jitter: if config.jitter.is_nan() {
                0.0
            } else {
                config.jitter.clamp(0.0, 1.0)
            },
            spacing_ms: config.spacing_ms(),
            last_start_ms: None,
            next_phase: None,
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &SnsConfig {
        &self.config
    }

    /// Every 5xx and 429, timeouts and transport errors.
    fn retryable(outcome: &Observed) -> bool {
        match outcome {
            Observed::Status(s) => (500..=599).contains(s) || *s == 429,
            Observed::Timeout | Observed::Transport(_) | Observed::Refused => true,
        }
    }

    fn step(&self, ctx: &AttemptView) -> Step {
        if ctx.outcome.is_success() {
            return Step::Stop(Success);
        }
        if !Self::retryable(&ctx.outcome) {
            return Step::Stop(NotRetryable);
        }
        let Some(phase) = self.config.phase(ctx.n) else {
            return Step::Stop(MaxAttemptsExceeded);
        };
        let d = self.config.nominal_ns(phase);
        let (lo_ns, hi_ns) = spread_ns(d, self.jitter);
        let floor_ms = self.spacing_ms.map_or(0, |s| {
            ctx.start_ms.saturating_add(s).saturating_sub(ctx.end_ms)
        });
        Step::Retry {
            phase,
            lo_ns,
            hi_ns,
            floor_ms,
        }
    }

    fn remember(&mut self, ctx: &AttemptView, step: &Step) {
        // The later start: a call beside this one may have reserved a start after it.
        self.last_start_ms = self.last_start_ms.max(Some(ctx.start_ms));
        self.next_phase = match step {
            Step::Retry { phase, .. } => Some(*phase),
            Step::Stop(_) => None,
        };
    }
}

impl Policy for SnsDelivery {
    fn name(&self) -> &'static str {
        "sns_delivery"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        _history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let step = self.step(ctx);
        self.remember(ctx, &step);
        match step {
            Step::Stop(reason) => Decision::Stop(reason),
            Step::Retry {
                lo_ns,
                hi_ns,
                floor_ms,
                ..
            } => {
                let ns = rng.uniform_u64(lo_ns, hi_ns);
                Decision::Retry {
                    delay: Duration::from_millis(ns_to_ms(ns).max(floor_ms)),
                    measured_from: Anchor::End,
                }
            }
        }
    }

    fn envelope(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Envelope {
        match self.step(ctx) {
            Step::Stop(reason) => Envelope::MustStop(reason),
            Step::Retry {
                lo_ns,
                hi_ns,
                floor_ms,
                ..
            } => {
                let (lo, hi) = (ns_to_ms(lo_ns), ns_to_ms(hi_ns));
                Envelope::Retry {
                    min_ms: lo.max(floor_ms),
                    max_ms: hi.max(floor_ms),
                    from: Anchor::End,
                    optional: false,
                    not_before: None,
                    uniform: hi > lo && floor_ms <= lo,
                }
            }
        }
    }

    fn record(&mut self, ctx: &AttemptView, _history: &CallHistory<'_>, _next: Next) {
        let step = self.step(ctx);
        self.remember(ctx, &step);
    }

    fn describe_state(&self) -> Option<String> {
        self.next_phase.map(|p| format!("next retry: {p}"))
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.num_retries.saturating_add(1))
    }

    fn wait_before_call(&self, now_ms: u64) -> Duration {
        match (self.spacing_ms, self.last_start_ms) {
            (Some(spacing), Some(last)) => {
                Duration::from_millis(last.saturating_add(spacing).saturating_sub(now_ms))
            }
            _ => Duration::ZERO,
        }
    }

    fn reserve_call(&mut self, start_ms: u64) {
        self.last_start_ms = self.last_start_ms.max(Some(start_ms));
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
