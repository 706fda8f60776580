//! The AWS SDK retry modes: `aws_standard` (Retry Behavior 2.0), `aws_standard_2_1` and
//! `aws_adaptive` (docs/retry-behaviours.md#2-aws-sdk-retry-modes), as one policy, [`AwsRetry`], configured by
//! [`AwsConfig`].
//!
//! The pseudo-code every AWS SDK follows, and so the reference client: get a send token
//! (adaptive only); send; if the outcome is not retryable, stop (`not_retryable`); if the
//! call made `max_attempts` attempts, stop (`max_attempts_exceeded`); if the retry quota
//! cannot pay for a retry, stop (`retry_quota_exceeded`); sleep the backoff; loop.

mod adaptive;
mod classify;
pub mod error_code;
mod quota;
mod sdk;

#[cfg(test)]
mod tests;

use std::time::Duration;

use self::adaptive::Limiter;
use self::classify::Class;
use super::generic::ConfigError;
use super::units::{NS_PER_MS, duration_ns, ns_to_ms};
use super::{Anchor, AttemptView, CallHistory, Decision, Envelope, NotBefore, Policy, StopReason};
use crate::rng::Stream;

pub use adaptive::Cubic;
pub use quota::RetryQuota;
pub use sdk::{AwsJitter, AwsMode, AwsSdk};

/// The retry quota's size (`initial_tokens`' default).
pub(crate) const INITIAL_RETRY_TOKENS: u32 = 500;
/// 2.0: the cost of a retry.
pub(crate) const RETRY_COST: u32 = 5;
/// 2.0: the cost of a retry after a timeout (smithy-rs: after any transient error).
pub(crate) const TIMEOUT_RETRY_COST: u32 = 10;
/// What a call that succeeds on its first attempt adds to the quota.
pub(crate) const NO_RETRY_INCREMENT: u32 = 1;
/// 2.1: the cost of a retry after a non-throttling error (timeouts included).
pub(crate) const RETRY_COST_2_1: u32 = 14;
/// 2.1: the cost of a retry after a throttling error.
pub(crate) const THROTTLING_RETRY_COST_2_1: u32 = 5;
/// The default number of attempts, the first included.
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// 2.1's `DynamoDB` default number of attempts.
pub(crate) const DYNAMODB_MAX_ATTEMPTS_2_1: u32 = 4;
/// 2.0's backoff base, for every retryable error.
pub(crate) const BASE_2_0: Duration = Duration::from_secs(1);
/// 2.1's backoff base after a non-throttling error.
pub(crate) const BASE_2_1: Duration = Duration::from_millis(50);
/// 2.1's `DynamoDB` backoff base after a non-throttling error.
pub(crate) const BASE_2_1_DYNAMODB: Duration = Duration::from_millis(25);
/// 2.1's backoff base after a throttling error.
pub(crate) const THROTTLING_BASE_2_1: Duration = Duration::from_secs(1);
/// The default `MAX_BACKOFF`.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// 2.1: how far above the computed backoff an `x-amz-retry-after` may push the delay.
pub(crate) const RETRY_AFTER_SLACK_2_1: Duration = Duration::from_secs(5);

/// The retry-mode header AWS services send, in milliseconds.
pub(crate) const RETRY_AFTER_HEADER: &str = "x-amz-retry-after";

/// Parameters of the `aws_standard`, `aws_standard_2_1` and `aws_adaptive` policies
/// (docs/retry-behaviours.md#2-aws-sdk-retry-modes).
///
/// The model:
/// - **classification**: a 2xx succeeds; a throttling error code (any status) is a throttle;
///   a timeout, an I/O error (reset, early close, refused connect), a transient error code
///   or a bare 500/502/503/504 is a transient error; everything else, a bare 429 included,
///   is not retryable, but [`AwsSdk::Botocore1_44`] retries a 429 that names no throttling
///   code as a throttle. The code is [`AttemptView::error_code`] (see [`error_code`]);
/// - **backoff** before retry `i` (after attempt `i`): `t_i = b × min(base × 2^(i-1),
///   max_backoff)`, the cap before the jitter, `b` uniform in `[0, 1)` (or 1 with
///   [`AwsJitter::None`]), measured from `end(i)`. `base` is 1 s in 2.0; in 2.1 it is
///   50 ms (`DynamoDB`: 25 ms) after a non-throttling error and 1 s after a throttle;
/// - **retry quota** ([`RetryQuota`], `initial_tokens`, shared by the client's calls): 2.0
///   charges 5 per retry and 10 after a timeout (smithy-rs: 10 after any transient error);
///   2.1 charges 14, or 5 after a throttle; a success refunds the call's last retry cost, or
///   adds 1 after a first-attempt success; refunds are the same in 2.1;
/// - **`x-amz-retry-after`** (integer milliseconds, the first field line; anything else,
///   negative values included, is ignored): ignored by botocore in 2.0; in 2.0 with
///   [`AwsSdk::SmithyRs`] the delay is `min(value, max_backoff)` exactly; in 2.1 the delay is
///   `value` clamped to `[t_i, t_i + 5 s]`;
/// - **`DynamoDB`** (`service: dynamodb`, any case), 2.1 only: base 25 ms and 4 attempts by
///   default;
/// - **long polling** (2.1 only): when the quota cannot pay, the call still fails with
///   `retry_quota_exceeded`, but only after sleeping the backoff it would have slept
///   (smithy-rs's `NoAfterDelay`; after a throttle that is `b × 1 s`). The reference client
///   sleeps it ([`Policy::wait_after_stop`]); no envelope can judge it, since no attempt
///   follows in the call;
/// - **adaptive**: 2.0 plus botocore's client-side rate limiter (send-token bucket, CUBIC,
///   constants in [`Cubic`] and this module). The limiter delays sends: after attempt `n`
///   it is updated with the response at `end(n)`, and the next attempt may start only when
///   the bucket holds a token, so the delay is `max(t_n, wait)`, `wait` being the time until
///   a token is there. A call's first attempt waits for its token too
///   ([`Policy::wait_before_call`]); that wait is not judged by the envelope.
///
/// ```
/// use retrylab::policy::aws::{AwsConfig, AwsJitter, AwsMode};
/// use retrylab::policy::{AttemptView, CallHistory, Decision, Observed, Policy};
/// use retrylab::rng::Stream;
/// use std::time::Duration;
///
/// let config = AwsConfig { mode: AwsMode::Standard, jitter: AwsJitter::None, ..Default::default() };
/// assert!(config.validate().is_ok());
/// let mut policy = config.into_policy();
/// let first = AttemptView::new(1, Observed::Status(503), 0, Some(10), 10);
/// let decision = policy.decide(&first, &CallHistory::empty(), &mut Stream::new(1, "x"));
/// assert_eq!(decision, Decision::Retry { delay: Duration::from_secs(1), measured_from: retrylab::policy::Anchor::End });
/// assert_eq!(policy.describe_state().as_deref(), Some("quota 495/500"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsConfig {
    /// The retry mode (`aws_standard`).
    pub mode: AwsMode,
    /// Attempts per call, the first included (`None`: 3, or 4 for `DynamoDB` in 2.1).
    pub max_attempts: Option<u32>,
    /// The retry quota's size (500).
    pub initial_tokens: u32,
    /// `MAX_BACKOFF` (20 s).
    pub max_backoff: Duration,
    /// `b` random or fixed at 1 (random).
    pub jitter: AwsJitter,
    /// The service, for 2.1's `DynamoDB` rule (none).
    pub service: Option<String>,
    /// Whether the operation long-polls (false).
    pub long_polling: bool,
    /// Which SDK's reading of 2.0 (botocore).
    pub sdk: AwsSdk,
}

impl Default for AwsConfig {
    fn default() -> AwsConfig {
        AwsConfig {
            mode: AwsMode::Standard,
            max_attempts: None,
            initial_tokens: INITIAL_RETRY_TOKENS,
            max_backoff: MAX_BACKOFF,
            jitter: AwsJitter::Random,
            service: None,
            long_polling: false,
            sdk: AwsSdk::Botocore,
        }
    }
}

impl AwsConfig {
    /// Checks `max_attempts >= 1` and `max_backoff > 0`. Any `initial_tokens` is valid: 0 is
    /// an empty retry quota that never fills (a success refunds up to the bucket's size),
    /// so no retry is ever paid for.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_attempts == Some(0) {
            return Err(ConfigError {
                field: "max_attempts",
                message: "must be at least 1 (it counts the first attempt)".to_string(),
            });
        }
        if self.max_backoff.is_zero() {
            return Err(ConfigError {
                field: "max_backoff",
                message: "must be above 0".to_string(),
            });
        }
        if self.mode == AwsMode::Adaptive && self.sdk.ships_2_1() {
            // The limiter model is 2.0's; botocore 1.44.18 runs it over 2.1's rules.
            return Err(ConfigError {
                field: "sdk",
                message: "botocore 1.44.18's adaptive mode runs the rate limiter over Retry \
                          Behavior 2.1, which this model does not have: use `aws_standard` \
                          or `aws_standard_2_1` with `sdk: botocore_1_44`, or `aws_adaptive` \
                          with `sdk: botocore`"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Whether 2.1's rules apply: `aws_standard_2_1`, or an SDK whose default is 2.1.
    pub fn is_2_1(&self) -> bool {
        self.mode == AwsMode::Standard21 || self.sdk.ships_2_1()
    }

    /// Whether 2.1's `DynamoDB` rule applies (botocore 1.44.18 applies it to `DynamoDB`
    /// Streams too).
    pub fn is_dynamodb(&self) -> bool {
        let streams = self.sdk == AwsSdk::Botocore1_44;
        self.is_2_1()
            && self.service.as_deref().is_some_and(|s| {
                let s = s.trim();
                s.eq_ignore_ascii_case("dynamodb")
                    || (streams && s.eq_ignore_ascii_case("dynamodb-streams"))
            })
    }

    /// Attempts per call: the configured count, else 3 (4 for `DynamoDB` in 2.1).
    pub fn effective_max_attempts(&self) -> u32 {
        self.max_attempts.unwrap_or(if self.is_dynamodb() {
            DYNAMODB_MAX_ATTEMPTS_2_1
        } else {
            DEFAULT_MAX_ATTEMPTS
        })
    }

    /// The policy (not validated: 0 attempts behave as 1, an empty quota pays for nothing).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(AwsRetry::new(self))
    }
}

/// What the quota and the limiter look like; advanced once per attempt.
#[derive(Debug, Clone, PartialEq)]
struct State {
    quota: RetryQuota,
    limiter: Option<Limiter>,
}

/// What the policy says after an attempt, before any retry is paid for.
#[derive(Debug, Clone, Copy)]
enum Step {
    Stop(StopReason),
    /// The quota cannot pay; under 2.1 long polling the call sleeps `window` first.
    QuotaExceeded(Option<Window>),
    Retry {
        cost: u32,
        window: Window,
    },
}

/// The delay as a function of the jitter draw `t`: `g(t) = max(h(t), wait)`, `h` applying
/// `x-amz-retry-after` as the mode says. `g` is nondecreasing, so the window is `[g(t_lo),
/// g(t_hi)]`.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// `min(base × 2^(n-1), max_backoff)`, ns.
    capped_ns: u64,
    random: bool,
    retry_after: RetryAfterRule,
    /// The limiter's wait, ns.
    wait_ns: u64,
}

#[derive(Debug, Clone, Copy)]
enum RetryAfterRule {
    None,
    /// The delay is exactly this (smithy-rs 2.0, already capped).
    Exact(u64),
    /// Clamp to `[t, t + 5 s]` (2.1).
    Clamp(u64),
}

impl Window {
    fn g(&self, t: u64) -> u64 {
        let d = match self.retry_after {
            RetryAfterRule::None => t,
            RetryAfterRule::Exact(v) => v,
            RetryAfterRule::Clamp(v) => {
                v.clamp(t, t.saturating_add(duration_ns(RETRY_AFTER_SLACK_2_1)))
            }
        };
        d.max(self.wait_ns)
    }

    fn t_range(&self) -> (u64, u64) {
        if self.random {
            (0, self.capped_ns)
        } else {
            (self.capped_ns, self.capped_ns)
        }
    }

    /// Inclusive bounds, ns.
    fn bounds_ns(&self) -> (u64, u64) {
        let (lo, hi) = self.t_range();
        (self.g(lo), self.g(hi))
    }

    /// One delay, ns: `b` uniform in `[0, 1)` from the top 53 bits of the stream.
    fn sample_ns(&self, rng: &mut Stream) -> u64 {
        let t = if self.random {
            let b = rng.uniform_f64();
            (libm::floor(b * self.capped_ns as f64) as u64).min(self.capped_ns)
        } else {
            self.capped_ns
        };
        self.g(t)
    }

    fn is_uniform(&self) -> bool {
        self.random && matches!(self.retry_after, RetryAfterRule::None) && self.wait_ns == 0
    }
}

/// The AWS retry modes; see [`AwsConfig`] for the model.
#[derive(Debug, Clone)]
pub struct AwsRetry {
    config: AwsConfig,
    max_attempts: u32,
    state: State,
    /// The long-polling sleep the last `decide` asked for before failing (not replayed by
    /// `record`: no envelope reads it).
    stop_wait: Duration,
}

impl AwsRetry {
    /// The policy for `config`, with a full quota.
    pub fn new(config: AwsConfig) -> AwsRetry {
        AwsRetry {
            max_attempts: config.effective_max_attempts().max(1),
            state: State {
                quota: RetryQuota::new(config.initial_tokens),
                limiter: (config.mode == AwsMode::Adaptive).then(Limiter::new),
            },
            stop_wait: Duration::ZERO,
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &AwsConfig {
        &self.config
    }

    /// The retry quota in its current state.
    pub fn quota(&self) -> &RetryQuota {
        &self.state.quota
    }

    fn is_2_1(&self) -> bool {
        self.config.is_2_1()
    }

    /// The cost of a retry after an attempt of class `class`.
    fn cost(&self, class: Class) -> u32 {
        match (self.is_2_1(), self.config.sdk, class) {
            (true, _, Class::Throttling) => THROTTLING_RETRY_COST_2_1,
            (true, _, _) => RETRY_COST_2_1,
            (false, AwsSdk::Botocore | AwsSdk::Botocore1_44, Class::Timeout) => TIMEOUT_RETRY_COST,
            (false, AwsSdk::Botocore | AwsSdk::Botocore1_44, _) => RETRY_COST,
            (false, AwsSdk::SmithyRs, Class::Throttling) => RETRY_COST,
            (false, AwsSdk::SmithyRs, _) => TIMEOUT_RETRY_COST,
        }
    }

    fn base(&self, class: Class) -> Duration {
        match (self.is_2_1(), class) {
            (false, _) => BASE_2_0,
            (true, Class::Throttling) => THROTTLING_BASE_2_1,
            (true, _) if self.config.is_dynamodb() => BASE_2_1_DYNAMODB,
            (true, _) => BASE_2_1,
        }
    }

    /// `min(base × 2^(n-1), max_backoff)` in ns, exact in integers (saturating).
    fn capped_ns(&self, class: Class, n: u32) -> u64 {
        let cap = duration_ns(self.config.max_backoff);
        let base = duration_ns(self.base(class));
        let shift = n.saturating_sub(1);
        let raw = if shift >= 64 {
            u64::MAX
        } else {
            base.saturating_mul(1u64 << shift)
        };
        raw.min(cap)
    }

    /// The valid `x-amz-retry-after` of `ctx`, in ns.
    fn retry_after_ns(ctx: &AttemptView) -> Option<u64> {
        let raw = ctx.header(RETRY_AFTER_HEADER)?.trim();
        if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let ms: u64 = raw.parse().ok()?;
        Some(ms.saturating_mul(NS_PER_MS))
    }

    fn retry_after_rule(&self, ctx: &AttemptView) -> RetryAfterRule {
        let Some(ra) = Self::retry_after_ns(ctx) else {
            return RetryAfterRule::None;
        };
        match (self.is_2_1(), self.config.sdk) {
            (true, _) => RetryAfterRule::Clamp(ra),
            (false, AwsSdk::SmithyRs) => {
                RetryAfterRule::Exact(ra.min(duration_ns(self.config.max_backoff)))
            }
            (false, AwsSdk::Botocore | AwsSdk::Botocore1_44) => RetryAfterRule::None,
        }
    }

    /// Advances `state` past attempt `ctx` (a new call, the limiter's send and response,
    /// the refund of a success) and says what comes next; no retry is paid for here.
    fn advance(&self, state: &mut State, ctx: &AttemptView, call: u32) -> Step {
        if ctx.n <= 1 {
            state.quota.start_call(call);
        }
        let class = Class::read(ctx, self.config.sdk.reading());
        let mut wait_ns = 0;
        if let Some(limiter) = &mut state.limiter {
            limiter.on_send(seconds(ctx.start_ms));
            limiter.on_response(seconds(ctx.end_ms), class == Class::Throttling);
            let wait = limiter.wait(seconds(ctx.end_ms));
            wait_ns = libm::round(wait * 1e9).clamp(0.0, u64::MAX as f64) as u64;
        }
        if class == Class::Success {
            state.quota.success(call);
            return Step::Stop(StopReason::Success);
        }
        if !class.is_retryable() {
            return Step::Stop(StopReason::NotRetryable);
        }
        if ctx.n >= self.max_attempts {
            return Step::Stop(StopReason::MaxAttemptsExceeded);
        }
        let window = Window {
            capped_ns: self.capped_ns(class, ctx.n),
            random: self.config.jitter == AwsJitter::Random,
            retry_after: self.retry_after_rule(ctx),
            wait_ns,
        };
        let cost = self.cost(class);
        if !state.quota.can_pay(cost) {
            let long_poll = self.is_2_1() && self.config.long_polling;
            return Step::QuotaExceeded(long_poll.then_some(window));
        }
        Step::Retry { cost, window }
    }
}

fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

impl Policy for AwsRetry {
    fn name(&self) -> &'static str {
        self.config.mode.name()
    }

    fn error_code(&self, status: u16, headers: &[(String, String)], body: &[u8]) -> Option<String> {
        error_code::error_code(status, headers, body)
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let call = history.client.call_index;
        let mut state = self.state.clone();
        let step = self.advance(&mut state, ctx, call);
        self.stop_wait = Duration::ZERO;
        let decision = match step {
            Step::Stop(reason) => Decision::Stop(reason),
            Step::QuotaExceeded(window) => {
                if let Some(w) = window {
                    self.stop_wait = Duration::from_millis(ns_to_ms(w.sample_ns(rng)));
                }
                Decision::Stop(StopReason::RetryQuotaExceeded)
            }
            Step::Retry { cost, window } => {
                state.quota.charge(call, cost);
                Decision::Retry {
                    delay: Duration::from_millis(ns_to_ms(window.sample_ns(rng))),
                    measured_from: Anchor::End,
                }
            }
        };
        if matches!(decision, Decision::Stop(_)) {
            state.quota.end_call(call);
        }
        self.state = state;
        decision
    }

    fn envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope {
        let mut state = self.state.clone();
        match self.advance(&mut state, ctx, history.client.call_index) {
            Step::Stop(reason) => Envelope::MustStop(reason),
            Step::QuotaExceeded(_) => Envelope::MustStop(StopReason::RetryQuotaExceeded),
            Step::Retry { window, .. } => {
                let (lo, hi) = window.bounds_ns();
                let (min_ms, max_ms) = (ns_to_ms(lo), ns_to_ms(hi));
                let not_before = match window.retry_after {
                    RetryAfterRule::None => None,
                    _ => Some(NotBefore {
                        header: RETRY_AFTER_HEADER,
                        value: ctx.header(RETRY_AFTER_HEADER).unwrap_or("").to_string(),
                        at_ms: ctx.end_ms.saturating_add(min_ms),
                    }),
                };
                Envelope::Retry {
                    min_ms,
                    max_ms,
                    from: Anchor::End,
                    optional: false,
                    not_before,
                    uniform: window.is_uniform() && max_ms > min_ms,
                }
            }
        }
    }

    fn record(&mut self, ctx: &AttemptView, history: &CallHistory<'_>, next: super::Next) {
        let call = history.client.call_index;
        let mut state = self.state.clone();
        let step = self.advance(&mut state, ctx, call);
        match (step, next) {
            (Step::Retry { cost, .. }, super::Next::Retried { .. }) => {
                state.quota.charge(call, cost);
            }
            // The call is over (a success already took its cost back).
            (_, super::Next::Stopped) => state.quota.end_call(call),
            // It retried where the policy stops: nothing is paid (the check reports it).
            (_, super::Next::Retried { .. }) => {}
        }
        self.state = state;
        self.stop_wait = Duration::ZERO;
    }

    fn describe_state(&self) -> Option<String> {
        let mut out = self.state.quota.to_string();
        if let Some(limiter) = &self.state.limiter {
            if limiter.is_enabled() {
                out.push_str(&format!(
                    ", send rate {:.3}/s (measured {:.3}/s)",
                    limiter.fill_rate(),
                    limiter.measured_rate()
                ));
            } else {
                out.push_str(", limiter off");
            }
        }
        if !self.stop_wait.is_zero() {
            out.push_str(&format!(
                ", long-poll wait {}",
                super::fmt_ms(self.stop_wait.as_millis() as u64)
            ));
        }
        Some(out)
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.max_attempts)
    }

    fn wait_before_call(&self, now_ms: u64) -> Duration {
        match &self.state.limiter {
            Some(limiter) => {
                let wait = limiter.wait(seconds(now_ms));
                Duration::from_millis(ns_to_ms(
                    libm::round(wait * 1e9).clamp(0.0, u64::MAX as f64) as u64,
                ))
            }
            None => Duration::ZERO,
        }
    }

    fn wait_after_stop(&self) -> Duration {
        self.stop_wait
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
