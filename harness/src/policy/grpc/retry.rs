//! `grpc_retry`: the A6 retry policy of a gRPC service config.

use std::time::Duration;

use super::pushback::{PUSHBACK_HEADER, Pushback, pushback_of};
use super::status::{self, status_of};
use super::throttle::{RetryThrottling, Tokens};
use crate::policy::NotBefore;
use crate::policy::backoff::{capped_ns, spread_ns};
use crate::policy::generic::ConfigError;
use crate::policy::units::{duration_ns, ns_to_ms};
use crate::policy::{
    Anchor, AttemptView, CallHistory, Decision, Envelope, Next, Policy, StopReason,
};
use crate::rng::Stream;

/// The request header every retry carries: how many attempts of the call came before it.
pub const PREVIOUS_ATTEMPTS_HEADER: &str = "grpc-previous-rpc-attempts";

/// gRPC treats a `maxAttempts` above 5 as 5.
pub const MAX_ATTEMPTS_CAP: u32 = 5;

/// The factor range of the current A6 jitter: `uniform(0.8, 1.2)`, i.e. ±20 %.
pub const A6_JITTER: f64 = 0.2;

/// Which A6 backoff rule a client follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum A6Jitter {
    /// The current rule (`a6_2024`): `min(initial × multiplier^k, max) × uniform(0.8, 1.2)`.
    #[default]
    Current,
    /// The older rule (`a6_legacy`): `uniform(0, min(initial × multiplier^k, max))`.
    Legacy,
    /// No jitter (`none`): exactly `min(initial × multiplier^k, max)`. A6 asks for jitter;
    /// this is what a client without it does, and what `conforms_to` compares delays with
    /// to flag one.
    Off,
}

/// Parameters of `grpc_retry`: a service config's `retryPolicy` and `retryThrottling`, plus
/// the A6 rule its jitter follows.
///
/// The model (gRPC proposal A6, as grpc-go implements it):
/// - the status of an attempt is read as [`status`] says (its `grpc-status` trailer, or the
///   field in a trailers-only head or an HTTP/1 model's head); `OK` ends the call as a
///   success, a code not in
///   `retryable_status_codes` as `not_retryable`;
/// - with `throttling`, a retryable failure first costs a token ([`RetryThrottling`]); when
///   the count is then at or below half its maximum the call stops with
///   `retry_quota_exceeded`, even on its last allowed attempt (grpc-go checks the throttle
///   before the attempt count); a successful call adds `tokenRatio`;
/// - a call makes at most `min(max_attempts, 5)` attempts: gRPC treats values above 5 as 5,
///   so a client that honours `maxAttempts: 9` literally makes 4 attempts too many;
/// - server pushback (`grpc-retry-pushback-ms`, read before the status is classified, as
///   grpc-go does): a negative, unparsable or repeated value stops the call with `pushback`
///   (and costs a token when throttled); one non-negative integer makes the retry wait
///   exactly that many milliseconds from `end(r)`, with no jitter, and restarts the backoff;
/// - otherwise retry `r` (after attempt `r`) waits, from `end(r)`, the backoff of exponent
///   `k`, the retries made since the last pushback retry (`r - 1` without pushback):
///   `b = min(initial_backoff × backoff_multiplier^k, max_backoff)` (integer ns), then
///   `b × uniform(0.8, 1.2)` for [`A6Jitter::Current`] or `uniform(0, b)` for
///   [`A6Jitter::Legacy`]; the window's bounds are inclusive after rounding to ms. `k` is
///   read from the call's observed attempts, so the envelope follows the client under test;
/// - every retry carries the request header `grpc-previous-rpc-attempts`: 1 on the second
///   attempt, 2 on the third, ... ([`Policy::request_headers`]); the first attempt has none.
///   No envelope judges it: a scenario checks it with `expect.header`.
///
/// ```
/// use retrylab::policy::{GrpcRetryConfig, Policy};
/// use std::time::Duration;
///
/// let config = GrpcRetryConfig { max_attempts: 9, ..Default::default() };
/// assert!(config.validate().is_ok());
/// assert_eq!(config.nominal_backoff(1), Duration::from_millis(100));
/// assert_eq!(config.nominal_backoff(3), Duration::from_millis(400));
/// let policy = config.into_policy();
/// assert_eq!(policy.max_attempts(), Some(5));
/// assert!(policy.request_headers(1).is_empty());
/// assert_eq!(policy.request_headers(3)[0].1, "2");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcRetryConfig {
    /// `maxAttempts` as written, the first attempt included (at least 2; above 5 counts as 5).
    pub max_attempts: u32,
    /// `initialBackoff` (100 ms).
    pub initial_backoff: Duration,
    /// `maxBackoff` (1 s).
    pub max_backoff: Duration,
    /// `backoffMultiplier` (2).
    pub backoff_multiplier: f64,
    /// `retryableStatusCodes`, as numbers 0 to 16 (`[14]`, `UNAVAILABLE`).
    pub retryable_status_codes: Vec<u16>,
    /// The A6 backoff rule (the current one).
    pub jitter: A6Jitter,
    /// `retryThrottling` (none).
    pub throttling: Option<RetryThrottling>,
}

impl Default for GrpcRetryConfig {
    fn default() -> GrpcRetryConfig {
        GrpcRetryConfig {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            backoff_multiplier: 2.0,
            retryable_status_codes: vec![status::UNAVAILABLE],
            jitter: A6Jitter::Current,
            throttling: None,
        }
    }
}

impl GrpcRetryConfig {
    /// Checks what gRPC requires of a retry policy: `maxAttempts` at least 2, positive
    /// backoffs, a finite positive multiplier, at least one retryable code, each 0 to 16.
    /// Field names are the service config's (`maxAttempts`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_attempts < 2 {
            return ConfigError::refuse(
                "maxAttempts",
                format!(
                    "{} leaves no retry: gRPC requires at least 2",
                    self.max_attempts
                ),
            );
        }
        if self.initial_backoff.is_zero() {
            return ConfigError::refuse("initialBackoff", "must be positive".to_owned());
        }
        if self.max_backoff.is_zero() {
            return ConfigError::refuse("maxBackoff", "must be positive".to_owned());
        }
        if !(self.backoff_multiplier.is_finite() && self.backoff_multiplier > 0.0) {
            return ConfigError::refuse(
                "backoffMultiplier",
                format!(
                    "must be a finite number above 0, got {}",
                    self.backoff_multiplier
                ),
            );
        }
        if self.retryable_status_codes.is_empty() {
            return ConfigError::refuse(
                "retryableStatusCodes",
                "needs at least one code".to_owned(),
            );
        }
        if let Some(code) = self.retryable_status_codes.iter().find(|c| **c > 16) {
            return ConfigError::refuse(
                "retryableStatusCodes",
                format!("{code} is not a gRPC status code (0 to 16)"),
            );
        }
        self.throttling.map_or(Ok(()), |t| t.validate())
    }

    /// The attempts a call makes at most: `max_attempts`, capped at 5.
    pub fn effective_max_attempts(&self) -> u32 {
        self.max_attempts.min(MAX_ATTEMPTS_CAP)
    }

    /// The backoff of retry `r` (1-based) before jitter, when no pushback intervened:
    /// `min(initial_backoff × backoff_multiplier^(r-1), max_backoff)`.
    pub fn nominal_backoff(&self, r: u32) -> Duration {
        Duration::from_nanos(self.backoff_ns(r.saturating_sub(1)))
    }

    fn backoff_ns(&self, k: u32) -> u64 {
        capped_ns(
            duration_ns(self.initial_backoff),
            self.backoff_multiplier,
            k,
            duration_ns(self.max_backoff),
        )
    }

    /// The policy (not validated: out-of-domain values behave as documented on
    /// [`GrpcRetry`], without panicking).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(GrpcRetry::new(self))
    }
}

/// The gRPC A6 retry policy; see [`GrpcRetryConfig`] for the model.
///
/// A NaN or infinite growth reaches `max_backoff`; a `max_attempts` below 2 allows one
/// attempt.
#[derive(Debug, Clone)]
pub struct GrpcRetry {
    config: GrpcRetryConfig,
    /// The client's token count, with `retryThrottling`.
    tokens: Option<Tokens>,
    /// The status of the attempt decided last (for the trace).
    last_status: Option<u16>,
}

/// What the policy says after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Stop(StopReason),
    Retry {
        lo_ns: u64,
        hi_ns: u64,
    },
    /// Exactly `ms` after the end, as the server's pushback asked.
    Pushback {
        ms: u64,
    },
}

impl GrpcRetry {
    /// The policy for `config`.
    pub fn new(config: GrpcRetryConfig) -> GrpcRetry {
        GrpcRetry {
            tokens: config.throttling.map(Tokens::new),
            last_status: None,
            config,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &GrpcRetryConfig {
        &self.config
    }

    /// What the policy says after `ctx`, and the token count after it.
    fn step(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> (Step, Option<Tokens>) {
        let code = status_of(ctx);
        if code == status::OK {
            return (
                Step::Stop(StopReason::Success),
                self.tokens.map(Tokens::after_success),
            );
        }
        let pushback = pushback_of(ctx);
        if pushback == Pushback::Stop {
            // grpc-go counts a pushback that forbids the retry as a failure for throttling.
            return (
                Step::Stop(StopReason::Pushback),
                self.tokens.map(|t| t.after_failure().0),
            );
        }
        if !self.config.retryable_status_codes.contains(&code) {
            return (Step::Stop(StopReason::NotRetryable), self.tokens);
        }
        // A retryable failure counts against the throttle before anything else is decided.
        let tokens = match self.tokens.map(Tokens::after_failure) {
            Some((tokens, true)) => {
                return (Step::Stop(StopReason::RetryQuotaExceeded), Some(tokens));
            }
            Some((tokens, false)) => Some(tokens),
            None => None,
        };
        if ctx.n >= self.config.effective_max_attempts() {
            return (Step::Stop(StopReason::MaxAttemptsExceeded), tokens);
        }
        if let Pushback::After(ms) = pushback {
            return (Step::Pushback { ms }, tokens);
        }
        // The backoff restarts after a pushback retry: its exponent counts the retries since.
        let since = history
            .previous
            .iter()
            .rposition(|a| matches!(pushback_of(a), Pushback::After(_)))
            .map_or(history.previous.len(), |i| history.previous.len() - i - 1);
        let k = u32::try_from(since).unwrap_or(u32::MAX);
        let b = self.config.backoff_ns(k);
        let (lo_ns, hi_ns) = match self.config.jitter {
            A6Jitter::Current => spread_ns(b, A6_JITTER),
            A6Jitter::Legacy => (0, b),
            A6Jitter::Off => (b, b),
        };
        (Step::Retry { lo_ns, hi_ns }, tokens)
    }

    /// Keeps what a decision about `ctx` changes: the token count, and the status shown.
    fn remember(&mut self, ctx: &AttemptView, tokens: Option<Tokens>) {
        self.tokens = tokens;
        self.last_status = Some(status_of(ctx));
    }
}

impl Policy for GrpcRetry {
    fn name(&self) -> &'static str {
        "grpc_retry"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let (step, tokens) = self.step(ctx, history);
        self.remember(ctx, tokens);
        match step {
            Step::Stop(reason) => Decision::Stop(reason),
            Step::Retry { lo_ns, hi_ns } => Decision::Retry {
                delay: Duration::from_millis(ns_to_ms(rng.uniform_u64(lo_ns, hi_ns))),
                measured_from: Anchor::End,
            },
            Step::Pushback { ms } => Decision::Retry {
                delay: Duration::from_millis(ms),
                measured_from: Anchor::End,
            },
        }
    }

    fn envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope {
        match self.step(ctx, history).0 {
            Step::Stop(reason) => Envelope::MustStop(reason),
            Step::Retry { lo_ns, hi_ns } => {
                let (lo, hi) = (ns_to_ms(lo_ns), ns_to_ms(hi_ns));
                Envelope::Retry {
                    min_ms: lo,
                    max_ms: hi,
                    from: Anchor::End,
                    optional: false,
                    not_before: None,
                    uniform: hi > lo,
                }
            }
            Step::Pushback { ms } => Envelope::Retry {
                min_ms: ms,
                max_ms: ms,
                from: Anchor::End,
                optional: false,
                not_before: Some(NotBefore {
                    header: PUSHBACK_HEADER,
                    value: ms.to_string(),
                    at_ms: ctx.end_ms.saturating_add(ms),
                }),
                uniform: false,
            },
        }
    }

    fn record(&mut self, ctx: &AttemptView, history: &CallHistory<'_>, _next: Next) {
        // A6 counts what the attempt came to, whatever the client did next.
        let (_, tokens) = self.step(ctx, history);
        self.remember(ctx, tokens);
    }

    fn describe_state(&self) -> Option<String> {
        let code = status::name(self.last_status?);
        Some(match self.tokens {
            Some(tokens) => format!("{code}, {}", tokens.describe()),
            None => code,
        })
    }

    fn request_headers(&self, n: u32) -> Vec<(http::HeaderName, http::HeaderValue)> {
        if n < 2 {
            return Vec::new();
        }
        vec![(
            http::HeaderName::from_static(PREVIOUS_ATTEMPTS_HEADER),
            http::HeaderValue::from(n - 1),
        )]
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.effective_max_attempts())
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
