//! Expectations: the checks a run must pass.

use serde::{Deserialize, Serialize};

use super::checks::{
    AmplificationSpec, AtMostSpec, ConsumerSpec, EffectsSpec, HeaderCheckSpec, JitterCheckSpec,
    MaxRateSpec, Outcome, RetryAfterCheckSpec, RetryWavesSpec, StopReason,
};
use super::client::PolicySpec;
use super::duration::Millis;
use super::values::{BoundSpec, CountSpec, status_code};

/// The checks of a scenario. Each applies to every logical call unless its name starts with
/// `total_`; absent checks are not run.
///
/// ```
/// use retrylab::scenario::{BoundSpec, EffectsSpec, Expectations, Millis, Outcome};
///
/// let e = Expectations::default()
///     .outcome(Outcome::Success)
///     .attempts(4)
///     .gap(BoundSpec::AtLeast(Millis::from_secs(2)))
///     .effects(EffectsSpec::ExactlyOnce);
/// assert_eq!(e.check_names(), ["outcome", "attempts", "gaps", "effects"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Expectations {
    /// How every call ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// How each call ends, in call order (when calls differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<Outcome>>,
    /// Why a reference client stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Attempts per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<CountSpec>,
    /// Attempts over all calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_attempts: Option<CountSpec>,
    /// Requests that reached the operation's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_received: Option<CountSpec>,
    /// Entry i bounds the gap before attempt i+2 of each call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<BoundSpec>,
    /// A bound on every gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaps_each: Option<BoundSpec>,
    /// How `Retry-After` must be honoured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<RetryAfterCheckSpec>,
    /// Statuses after which no further attempt is allowed (at most 512).
    #[serde(
        default,
        deserialize_with = "status_code::list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub not_retried_on: Vec<u16>,
    /// How many effects each call may commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<EffectsSpec>,
    /// Every delay lies within this policy's envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conforms_to: Option<PolicySpec>,
    /// `present`: the client's retry delays vary between calls that retried after the same
    /// responses (needs at least 2 calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterCheckSpec>,
    /// Time from a call's start to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_time: Option<BoundSpec>,
    /// No attempt of a call starts later than this after the call started (a client-side
    /// deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_attempt_after: Option<Millis>,
    /// Messages that reached a dead-letter endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_lettered: Option<CountSpec>,
    /// Requests per sliding window, per endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<MaxRateSpec>,
    /// Requests that reached an endpoint after their call returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_requests: Option<u32>,
    /// Every attempt of a call carries the same idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_idempotency_key: Option<bool>,
    /// Every attempt of a call carries the same body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_body: Option<bool>,
    /// Every attempt carries a header with one of these values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<HeaderCheckSpec>,
    /// `true`: every message the brokers stored carries a key, and no two of a topic carry
    /// the same one, so a consumer can tell every message apart; `false` expects the
    /// opposite (needs a `kind: broker` endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_keys: Option<bool>,
    /// Stored messages beyond the first of each key in its topic (of each call, for
    /// messages without a key), over all the brokers (needs a `kind: broker` endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<AtMostSpec>,
    /// Each successful call's message is processed exactly once by a consumer of the
    /// brokers' stored messages that deduplicates as `idempotent_by` says (needs a
    /// `kind: broker` endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<ConsumerSpec>,
    /// Requests received per logical call, over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplification: Option<AmplificationSpec>,
    /// Synchronised retries of many clients: windows in which `k` or more clients retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_waves: Option<RetryWavesSpec>,
}

impl Expectations {
    /// Every check name, in the order of the format's keys.
    ///
    /// ```
    /// use retrylab::scenario::Expectations;
    /// assert_eq!(Expectations::CHECK_NAMES.len(), 26);
    /// ```
    pub const CHECK_NAMES: &'static [&'static str] = &[
        "outcome",
        "outcomes",
        "stop_reason",
        "attempts",
        "total_attempts",
        "requests_received",
        "gaps",
        "gaps_each",
        "retry_after",
        "not_retried_on",
        "effects",
        "conforms_to",
        "jitter",
        "total_time",
        "no_attempt_after",
        "dead_lettered",
        "max_rate",
        "late_requests",
        "same_idempotency_key",
        "same_body",
        "header",
        "distinct_keys",
        "duplicates",
        "consumer",
        "amplification",
        "retry_waves",
    ];

    /// The names of the checks present, in the order of [`Expectations::CHECK_NAMES`].
    pub fn check_names(&self) -> Vec<&'static str> {
        let present = [
            self.outcome.is_some(),
            self.outcomes.is_some(),
            self.stop_reason.is_some(),
            self.attempts.is_some(),
            self.total_attempts.is_some(),
            self.requests_received.is_some(),
            !self.gaps.is_empty(),
            self.gaps_each.is_some(),
            self.retry_after.is_some(),
            !self.not_retried_on.is_empty(),
            self.effects.is_some(),
            self.conforms_to.is_some(),
            self.jitter.is_some(),
            self.total_time.is_some(),
            self.no_attempt_after.is_some(),
            self.dead_lettered.is_some(),
            self.max_rate.is_some(),
            self.late_requests.is_some(),
            self.same_idempotency_key.is_some(),
            self.same_body.is_some(),
            self.header.is_some(),
            self.distinct_keys.is_some(),
            self.duplicates.is_some(),
            self.consumer.is_some(),
            self.amplification.is_some(),
            self.retry_waves.is_some(),
        ];
        Self::CHECK_NAMES
            .iter()
            .zip(present)
            .filter_map(|(name, on)| on.then_some(*name))
            .collect()
    }

    /// These expectations without the check named `name` (one of
    /// [`Expectations::CHECK_NAMES`]; any other name changes nothing).
    ///
    /// ```
    /// use retrylab::scenario::{EffectsSpec, Expectations};
    ///
    /// let e = Expectations::default()
    ///     .attempts(2)
    ///     .effects(EffectsSpec::AtMostOnce)
    ///     .without("attempts");
    /// assert_eq!(e.check_names(), ["effects"]);
    /// ```
    pub fn without(mut self, name: &str) -> Expectations {
        match name {
            "outcome" => self.outcome = None,
            "outcomes" => self.outcomes = None,
            "stop_reason" => self.stop_reason = None,
            "attempts" => self.attempts = None,
            "total_attempts" => self.total_attempts = None,
            "requests_received" => self.requests_received = None,
            "gaps" => self.gaps = Vec::new(),
            "gaps_each" => self.gaps_each = None,
            "retry_after" => self.retry_after = None,
            "not_retried_on" => self.not_retried_on = Vec::new(),
            "effects" => self.effects = None,
            "conforms_to" => self.conforms_to = None,
            "jitter" => self.jitter = None,
            "total_time" => self.total_time = None,
            "no_attempt_after" => self.no_attempt_after = None,
            "dead_lettered" => self.dead_lettered = None,
            "max_rate" => self.max_rate = None,
            "late_requests" => self.late_requests = None,
            "same_idempotency_key" => self.same_idempotency_key = None,
            "same_body" => self.same_body = None,
            "header" => self.header = None,
            "distinct_keys" => self.distinct_keys = None,
            "duplicates" => self.duplicates = None,
            "consumer" => self.consumer = None,
            "amplification" => self.amplification = None,
            "retry_waves" => self.retry_waves = None,
            _ => {}
        }
        self
    }

    /// Whether no check is set.
    pub fn is_empty(&self) -> bool {
        self.check_names().is_empty()
    }

    /// Expects every call to end so.
    pub fn outcome(mut self, outcome: Outcome) -> Self {
        self.outcome = Some(outcome);
        self
    }

    /// Expects a reference client to stop for this reason.
    pub fn stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }

    /// Expects this many attempts per call (`4`, or a [`CountSpec`]).
    pub fn attempts(mut self, attempts: impl Into<CountSpec>) -> Self {
        self.attempts = Some(attempts.into());
        self
    }

    /// Adds a bound on the next gap.
    pub fn gap(mut self, bound: BoundSpec) -> Self {
        self.gaps.push(bound);
        self
    }

    /// Bounds every gap.
    pub fn gaps_each(mut self, bound: BoundSpec) -> Self {
        self.gaps_each = Some(bound);
        self
    }

    /// Expects `Retry-After` to be honoured so.
    pub fn retry_after(mut self, check: RetryAfterCheckSpec) -> Self {
        self.retry_after = Some(check);
        self
    }

    /// Expects no retry after these statuses.
    pub fn not_retried_on(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        self.not_retried_on = statuses.into_iter().collect();
        self
    }

    /// Expects these effect semantics.
    pub fn effects(mut self, effects: EffectsSpec) -> Self {
        self.effects = Some(effects);
        self
    }

    /// Expects every delay to fit this policy's envelope.
    pub fn conforms_to(mut self, policy: PolicySpec) -> Self {
        self.conforms_to = Some(policy);
        self
    }

    /// Expects the client's retry delays to be jittered (`jitter: present`): two calls that
    /// retried after the same responses must not always sleep the same. Needs at least 2
    /// calls.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::Jitter;
    ///
    /// let scenario = Scenario::builder("three calls against a failing service")
    ///     .endpoint("api", endpoint().script([status(503)]))
    ///     .operation(get("api", "/").calls(3))
    ///     .client(exponential().initial(ms(100)).jitter(Jitter::Full).max_attempts(5))
    ///     .expect(expect().outcome(Failure).jitter_present())
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// assert!(report.passed(), "{}", report.summary());
    /// ```
    pub fn jitter_present(mut self) -> Self {
        self.jitter = Some(JitterCheckSpec::Present);
        self
    }

    /// Expects no attempt of any call to start later than `limit` after the call started: a
    /// client-side deadline or `max_elapsed_time`, checked on the attempts themselves.
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// // 503s forever, a retry every 400ms: attempts at 0, 0.4s, 0.8s and 1.2s.
    /// let scenario = Scenario::builder("four attempts in 1.2s")
    ///     .endpoint("api", endpoint().script([status(503)]))
    ///     .operation(get("api", "/"))
    ///     .client(fixed(ms(400)).max_attempts(4))
    ///     .expect(expect().attempts(4).no_attempt_after(secs(1)))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// let late = report.failures().next().unwrap();
    /// assert_eq!(late.message, "call 0: attempt 4 started 1.200s after the call started, \
    ///     later than 1.000s");
    /// ```
    pub fn no_attempt_after(mut self, limit: Millis) -> Self {
        self.no_attempt_after = Some(limit);
        self
    }

    /// Expects every stored message to have a key of its own (`true`), or not (`false`).
    pub fn distinct_keys(mut self, distinct: bool) -> Self {
        self.distinct_keys = Some(distinct);
        self
    }

    /// Expects at most `at_most` duplicate messages among those the brokers stored.
    pub fn duplicates(mut self, at_most: u64) -> Self {
        self.duplicates = Some(AtMostSpec { at_most });
        self
    }

    /// Expects a consumer of the stored messages to process exactly one per successful
    /// call.
    pub fn consumer(mut self, consumer: ConsumerSpec) -> Self {
        self.consumer = Some(consumer);
        self
    }
}
