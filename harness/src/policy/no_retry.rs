//! The `no_retry` policy: one attempt per call.

use super::generic::Rules;
use super::{
    AttemptView, CallHistory, Decision, Envelope, Policy, RetryAfterRule, RetryOn, StopReason,
};
use crate::rng::Stream;

/// Parameters of the `no_retry` policy (none in scenarios).
///
/// Model choice: the call always stops after its first attempt; `retry_on` only names the
/// reason, so that `no_retry` reports the same stop reasons as `max_attempts: 1` on any
/// other generic policy (`max_attempts_exceeded` after a 503, `not_retryable` after a 404,
/// `success` after a 2xx).
///
/// ```
/// use retrylab::policy::{AttemptView, CallHistory, Envelope, NoRetryConfig, Observed, StopReason};
///
/// let policy = NoRetryConfig::default().into_policy();
/// let a = AttemptView::new(1, Observed::Status(503), 0, Some(5), 5);
/// assert_eq!(
///     policy.envelope(&a, &CallHistory::empty()),
///     Envelope::MustStop(StopReason::MaxAttemptsExceeded)
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NoRetryConfig {
    /// The outcomes another policy would have retried (5xx, 429, transport errors, timeouts).
    pub retry_on: RetryOn,
}

impl NoRetryConfig {
    /// The policy.
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(NoRetry::new(self))
    }
}

/// The `no_retry` policy; see [`NoRetryConfig`].
#[derive(Debug, Clone)]
pub struct NoRetry {
    rules: Rules,
}

impl NoRetry {
    /// The policy for `config`.
    pub fn new(config: NoRetryConfig) -> NoRetry {
        NoRetry {
            rules: Rules {
                max_attempts: 1,
                retry_on: config.retry_on,
                retry_after: RetryAfterRule::Ignore,
            },
        }
    }

    fn reason(&self, ctx: &AttemptView) -> StopReason {
        // With one attempt allowed every outcome has a stop reason; the fallback is unreachable.
        self.rules
            .stop_reason(ctx)
            .unwrap_or(StopReason::MaxAttemptsExceeded)
    }
}

impl Policy for NoRetry {
    fn name(&self) -> &'static str {
        "no_retry"
    }
    fn decide(
        &mut self,
        ctx: &AttemptView,
        _history: &CallHistory<'_>,
        _rng: &mut Stream,
    ) -> Decision {
        Decision::Stop(self.reason(ctx))
    }
    fn envelope(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Envelope {
        Envelope::MustStop(self.reason(ctx))
    }
    fn max_attempts(&self) -> Option<u32> {
        Some(1)
    }
    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
