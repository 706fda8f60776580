//! Retry policies (docs/architecture.md#pipeline-and-concept-folders): what a reference client does after an attempt
//! ([`Policy::decide`]) and what any correct client may do ([`Policy::envelope`]).
//!
//! A policy sees one attempt at a time ([`AttemptView`]), with the earlier attempts of its
//! call and its client's scope ([`CallHistory`]). All instants are whole virtual milliseconds;
//! delays are computed in integer nanoseconds and rounded once, to the nearest millisecond,
//! at the sleep (docs/architecture.md#determinism). Randomness comes only from the [`Stream`] passed in.
//!
//! Policy instances are per client: a policy with client-wide state (a retry quota) keeps it
//! in `self`, changes it in [`Policy::decide`] for the reference client, and replays it with
//! [`Policy::record`] when checking what another client did. The conformance check
//! ([`conformance::conforms`]) walks a call's attempts and compares each next step with the
//! envelope.

mod attempt;
pub mod aws;
mod backoff;
mod classify;
pub mod conformance;
mod decision_order;
mod exponential;
mod fibonacci;
mod fixed;
mod generic;
pub mod grpc;
mod jitter;
mod linear;
mod no_retry;
pub(crate) mod nominal;
mod retry_after;
pub mod rocketmq;
pub mod servicenow;
pub mod sns;
mod transparent;
mod units;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::rng::Stream;

pub use attempt::retry_after_floor;
pub use attempt::{
    AttemptView, CallHistory, ClientHistory, DEFAULT_EPOCH_UNIX_MS, NO_CLIENT_HISTORY, Observed,
};
pub use aws::{AwsConfig, AwsRetry};
pub use classify::{RetryOn, RetryOnItem, RetryOnParseError};
pub use conformance::{Conformance, RetryWindow, Violation, ViolationKind, conforms};
pub use exponential::{Exponential, ExponentialConfig};
pub use fibonacci::{Fibonacci, FibonacciConfig};
pub use fixed::{Fixed, FixedConfig};
pub use generic::ConfigError;
pub use grpc::{GrpcConnectionBackoff, GrpcConnectionConfig, GrpcRetry, GrpcRetryConfig};
pub use jitter::Jitter;
pub use linear::{Linear, LinearConfig};
pub use no_retry::{NoRetry, NoRetryConfig};
pub use retry_after::{NotBefore, RetryAfterRule, RetryAfterValue};
pub use sns::{SnsConfig, SnsDelivery};
pub use transparent::{TRANSPARENT_RETRIES_PER_CALL, fold_transparent};
pub use units::fmt_ms;

/// The instant a retry delay is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// `end(n)`: the generic policies (the `gap` of the checks).
    End,
    /// `head(n)`: when a policy's delay counts from the response head.
    Head,
    /// `start(n)`: start-to-start policies (gRPC connection backoff).
    Start,
}

impl Anchor {
    /// The word used in messages: `end`, `head` or `start`.
    pub fn as_str(self) -> &'static str {
        match self {
            Anchor::End => "end",
            Anchor::Head => "head",
            Anchor::Start => "start",
        }
    }
}

/// Why a call stops; the scenario's `stop_reason` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The attempt succeeded (2xx).
    Success,
    /// A retryable failure on the last attempt the policy allows.
    MaxAttemptsExceeded,
    /// The outcome is not one the policy retries.
    NotRetryable,
    /// A retry could not be paid for from the client's retry quota.
    RetryQuotaExceeded,
    /// The server's pushback forbade a retry (gRPC's negative `grpc-retry-pushback-ms`).
    Pushback,
    /// The call's deadline would pass before the next attempt.
    Deadline,
}

impl StopReason {
    /// The `snake_case` name, as scenarios and traces write it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Success => "success",
            StopReason::MaxAttemptsExceeded => "max_attempts_exceeded",
            StopReason::NotRetryable => "not_retryable",
            StopReason::RetryQuotaExceeded => "retry_quota_exceeded",
            StopReason::Pushback => "pushback",
            StopReason::Deadline => "deadline",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the reference client does after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Start the next attempt `delay` (whole milliseconds) after `measured_from`.
    Retry {
        /// The sleep, a whole number of milliseconds.
        delay: Duration,
        /// The instant of the attempt just made that the delay counts from.
        measured_from: Anchor,
    },
    /// End the call.
    Stop(StopReason),
}

/// What any correct client may do after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Envelope {
    /// No further attempt is allowed (or, for [`StopReason::Success`], needed).
    MustStop(StopReason),
    /// A next attempt may start `min_ms..=max_ms` after `from` of this attempt.
    Retry {
        /// Inclusive lower bound, whole ms, after rounding; includes `not_before` when set.
        min_ms: u64,
        /// Inclusive upper bound, whole ms, after rounding.
        max_ms: u64,
        /// The instant both bounds count from.
        from: Anchor,
        /// True when stopping here is also correct; false means a client that stops
        /// violates the policy (it gave up with attempts left).
        optional: bool,
        /// A server-imposed floor (an honoured `Retry-After`), for messages that name it.
        not_before: Option<NotBefore>,
        /// True when the reference draws uniformly over the whole window, so that a client
        /// landing on one bound again and again is suspect (see [`conformance`]).
        uniform: bool,
    },
}

impl Envelope {
    /// Whether the reference decision `decision` for attempt `ctx` lies inside this envelope.
    pub fn admits(&self, ctx: &AttemptView, decision: &Decision) -> bool {
        match (self, decision) {
            (Envelope::MustStop(a), Decision::Stop(b)) => a == b,
            (Envelope::Retry { optional, .. }, Decision::Stop(_)) => *optional,
            (
                Envelope::Retry {
                    min_ms,
                    max_ms,
                    from,
                    not_before,
                    ..
                },
                Decision::Retry {
                    delay,
                    measured_from,
                },
            ) => {
                let Ok(delay_ms) = u64::try_from(delay.as_millis()) else {
                    return false;
                };
                let start = ctx.anchor_ms(*measured_from).saturating_add(delay_ms);
                let anchor = ctx.anchor_ms(*from);
                let floor_ok = not_before.as_ref().is_none_or(|nb| start >= nb.at_ms);
                start >= anchor
                    && (min_ms..=max_ms).contains(&&(start - anchor))
                    && floor_ok
                    && delay.subsec_nanos() % 1_000_000 == 0
            }
            (Envelope::MustStop(_), Decision::Retry { .. }) => false,
        }
    }
}

/// What a client did after an attempt, for [`Policy::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The next attempt of the call started at this virtual instant.
    Retried {
        /// `start(n+1)`, virtual ms.
        start_ms: u64,
    },
    /// The call ended after this attempt.
    Stopped,
}

/// A retry policy.
///
/// Object safe and `Send`: the reference client holds a `Box<dyn Policy>` per client instance.
///
/// Contract:
/// - `decide` stays inside `envelope` for every attempt, history and random stream;
/// - `decide` changes `self` exactly as `record` would for the step it decides, so a policy
///   driven by `decide` and one replayed by `record` are in the same state (a draw the
///   reference client keeps for its own next attempt, gRPC's connect deadline, is the one
///   exception: no envelope reads it);
/// - `envelope` depends on `self`, the attempt and the *observed* history only, so it judges
///   the client under test by what that client did (decorrelated jitter reads the previous
///   delay from the history, not from its own memory).
///
/// ```
/// use retrylab::policy::{
///     AttemptView, CallHistory, Decision, Envelope, ExponentialConfig, Jitter, Observed,
///     Policy,
/// };
/// use retrylab::rng::Stream;
/// use std::time::Duration;
///
/// let mut policy = ExponentialConfig { jitter: Jitter::None, ..Default::default() }.into_policy();
/// let first = AttemptView::new(1, Observed::Status(503), 0, Some(10), 10);
/// let history = CallHistory::empty();
/// let mut rng = Stream::new(7, "client/0/jitter");
///
/// let decision = policy.decide(&first, &history, &mut rng);
/// assert!(matches!(decision, Decision::Retry { delay, .. } if delay == Duration::from_millis(100)));
/// assert!(policy.envelope(&first, &history).admits(&first, &decision));
/// assert!(matches!(policy.envelope(&first, &history), Envelope::Retry { min_ms: 100, max_ms: 100, .. }));
/// ```
pub trait Policy: Send + fmt::Debug {
    /// The policy's scenario name (`exponential`, `aws_standard`, ...).
    fn name(&self) -> &'static str;

    /// What the reference client does after `ctx`, given the earlier attempts of the call.
    fn decide(
        &mut self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision;

    /// What any correct client may do after `ctx`.
    fn envelope(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Envelope;

    /// Replays the client-wide state change of what a client did after `ctx` (charge a retry
    /// to a quota, refund on success). Stateless policies keep the default, which does
    /// nothing.
    fn record(&mut self, ctx: &AttemptView, history: &CallHistory<'_>, next: Next) {
        let _ = (ctx, history, next);
    }

    /// The service error code this policy classifies by, read from a response with
    /// `status`, `headers` (names lower-case) and `body`: what goes in
    /// [`AttemptView::error_code`] when the reference client or `conforms_to` builds the
    /// attempt (an AWS `ThrottlingException`, a broker's `530`). The default reads none.
    ///
    /// ```
    /// use retrylab::policy::ExponentialConfig;
    /// use retrylab::policy::rocketmq::RocketmqConfig;
    ///
    /// let body = br#"{"code": 530, "message": "TOO_MANY_REQUESTS"}"#;
    /// let producer = RocketmqConfig::default().into_policy();
    /// assert_eq!(producer.error_code(503, &[], body).as_deref(), Some("530"));
    /// assert_eq!(ExponentialConfig::default().into_policy().error_code(503, &[], body), None);
    /// ```
    fn error_code(&self, status: u16, headers: &[(String, String)], body: &[u8]) -> Option<String> {
        let _ = (status, headers, body);
        None
    }

    /// The state worth showing in a trace line after a decision (a quota: `quota 495/500`).
    fn describe_state(&self) -> Option<String> {
        None
    }

    /// The most attempts a call may make, the first included, when the policy has such a
    /// bound (a native count for SNS, gRPC and `ServiceNow` policies).
    fn max_attempts(&self) -> Option<u32>;

    /// How long the reference client waits before the first attempt of a call that it would
    /// otherwise start at `now_ms` (virtual ms): the spacing of a rate limit that spans the
    /// client's calls (SNS `throttlePolicy`, the AWS adaptive mode's send tokens). No
    /// envelope judges it: conformance is checked within a call. The default is no wait.
    fn wait_before_call(&self, now_ms: u64) -> Duration {
        let _ = now_ms;
        Duration::ZERO
    }

    /// Notes that the reference client will start a call's first attempt at `start_ms`
    /// (virtual ms), after the wait [`Policy::wait_before_call`] gave: a rate limit spanning
    /// the client's calls counts the start at once, so a call beginning beside this one waits
    /// its turn instead of reading the same empty history. The attempt's own decision (or
    /// [`Policy::record`]) notes the same start again; a policy keeps the later of the two,
    /// so replaying without this call ends in the same state. The default notes nothing.
    ///
    /// ```
    /// use retrylab::policy::sns::SnsConfig;
    ///
    /// let config = SnsConfig { max_receives_per_second: Some(2), ..Default::default() };
    /// let mut policy = config.into_policy();
    /// // A delivery reserved to start at 0: one beginning beside it waits 500 ms.
    /// assert!(policy.wait_before_call(0).is_zero());
    /// policy.reserve_call(0);
    /// assert_eq!(policy.wait_before_call(0).as_millis(), 500);
    /// ```
    fn reserve_call(&mut self, start_ms: u64) {
        let _ = start_ms;
    }

    /// How long the reference client sleeps, after a [`Policy::decide`] that stopped the
    /// call, before the call returns (AWS 2.1 long polling sleeps its backoff even when the
    /// retry quota is empty). It is part of the last decision, not replayed by
    /// [`Policy::record`], and judged by no envelope. The default is no sleep.
    fn wait_after_stop(&self) -> Duration {
        Duration::ZERO
    }

    /// How long the reference client lets attempt `n` (1-based) of the call `client` names
    /// (its `call_index`) run, when the policy bounds its attempts itself (gRPC's connect deadline with its
    /// `MIN_CONNECT_TIMEOUT`); the scenario's `attempt_timeout`, when also set, still applies
    /// and the shorter wins. The default is no bound of the policy's own.
    fn attempt_timeout(&self, client: &ClientHistory, n: u32) -> Option<Duration> {
        let _ = (client, n);
        None
    }

    /// The least a correct client lets attempt `ctx` run before giving up on it, in ms, for
    /// `conforms_to` to judge an attempt that timed out (gRPC's connect deadline, at least
    /// `MIN_CONNECT_TIMEOUT`). The default is no bound: any attempt timeout is the client's
    /// own business.
    fn min_attempt_ms(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Option<u64> {
        let _ = (ctx, history);
        None
    }

    /// Headers the reference client adds to attempt `n` (1-based) of a call (gRPC's
    /// `grpc-previous-rpc-attempts` on retries), replacing any of the same name the
    /// operation sets. The default is none.
    fn request_headers(&self, n: u32) -> Vec<(http::HeaderName, http::HeaderValue)> {
        let _ = n;
        Vec::new()
    }

    /// A boxed copy, state included, so that a check can replay a client without disturbing
    /// the original.
    fn clone_box(&self) -> Box<dyn Policy>;
}

impl Clone for Box<dyn Policy> {
    fn clone(&self) -> Box<dyn Policy> {
        self.clone_box()
    }
}
