//! The values of the checks under `expect:` that say more than a bound: an outcome, how
//! `Retry-After` is honoured, effects, rates, headers, consumers, amplification, waves.

use serde::{Deserialize, Serialize};

use super::duration::{DurationOrNone, Millis};

/// `jitter: present`: what the `jitter` check expects of the client's retry delays.
///
/// ```
/// use retrylab::scenario::JitterCheckSpec;
/// let j: JitterCheckSpec = serde_saphyr::from_str("present").unwrap();
/// assert_eq!(j, JitterCheckSpec::Present);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JitterCheckSpec {
    /// The delays vary: two calls that retried after the same responses do not always
    /// sleep the same.
    Present,
}

/// How a call ends.
///
/// ```
/// use retrylab::scenario::Outcome;
/// let o: Outcome = serde_saphyr::from_str("stopped").unwrap();
/// assert_eq!(o, Outcome::Stopped);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The call returned `Ok`.
    Success,
    /// The call returned `Err`.
    Failure,
    /// The call was stopped by a limit.
    Stopped,
}

impl Outcome {
    /// The name as written in YAML.
    ///
    /// ```
    /// use retrylab::scenario::Outcome;
    /// assert_eq!(Outcome::Success.as_str(), "success");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Stopped => "stopped",
        }
    }
}

/// Why a reference client stopped retrying: the policies' own type.
///
/// ```
/// use retrylab::scenario::StopReason;
/// let r: StopReason = serde_saphyr::from_str("retry_quota_exceeded").unwrap();
/// assert_eq!(r, StopReason::RetryQuotaExceeded);
/// ```
pub use crate::policy::StopReason;

/// `retry_after: { honour: max | exact, cap: none | <dur>, invalid: ignore | give_up }`.
///
/// ```
/// use retrylab::scenario::{RetryAfterCheckSpec, RetryAfterHonour};
/// assert_eq!(RetryAfterCheckSpec::default().honour, RetryAfterHonour::Max);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RetryAfterCheckSpec {
    /// `max`: the next attempt starts no earlier; `exact`: at that millisecond.
    #[serde(default, skip_serializing_if = "RetryAfterHonour::is_max")]
    pub honour: RetryAfterHonour,
    /// Cap on the honoured value (default `none`).
    #[serde(default, skip_serializing_if = "DurationOrNone::is_none")]
    pub cap: DurationOrNone,
    /// What an invalid header requires (default `ignore`).
    #[serde(default, skip_serializing_if = "InvalidRetryAfter::is_ignore")]
    pub invalid: InvalidRetryAfter,
}

/// How exactly `Retry-After` is honoured.
///
/// ```
/// use retrylab::scenario::RetryAfterHonour;
/// assert_eq!(RetryAfterHonour::default(), RetryAfterHonour::Max);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RetryAfterHonour {
    /// `start(n+1) >= head(n) + RA`.
    #[default]
    Max,
    /// `start(n+1) == head(n) + RA`, to the millisecond.
    Exact,
}

impl RetryAfterHonour {
    fn is_max(&self) -> bool {
        *self == RetryAfterHonour::Max
    }
}

/// What an invalid `Retry-After` requires.
///
/// ```
/// use retrylab::scenario::InvalidRetryAfter;
/// let i: InvalidRetryAfter = serde_saphyr::from_str("give_up").unwrap();
/// assert_eq!(i, InvalidRetryAfter::GiveUp);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InvalidRetryAfter {
    /// No bound.
    #[default]
    Ignore,
    /// No further attempt.
    GiveUp,
}

impl InvalidRetryAfter {
    fn is_ignore(&self) -> bool {
        *self == InvalidRetryAfter::Ignore
    }
}

/// Effect semantics of each call.
///
/// ```
/// use retrylab::scenario::EffectsSpec;
/// let e: EffectsSpec = serde_saphyr::from_str("at_least_once").unwrap();
/// assert_eq!(e, EffectsSpec::AtLeastOnce);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EffectsSpec {
    /// Every successful call committed exactly one effect; no call more than one.
    ExactlyOnce,
    /// No call committed more than one.
    AtMostOnce,
    /// Every successful call committed at least one.
    AtLeastOnce,
}

/// `max_rate: { window, at_most, from }`.
///
/// ```
/// use retrylab::scenario::{MaxRateSpec, Millis};
/// let m: MaxRateSpec = serde_saphyr::from_str("{ window: 1s, at_most: 10 }").unwrap();
/// assert_eq!(m.window, Millis::from_secs(1));
/// assert_eq!(m.from, None);
/// let settled: MaxRateSpec =
///     serde_saphyr::from_str("{ window: 1s, at_most: 10, from: 3s }").unwrap();
/// assert_eq!(settled.from, Some(Millis::from_secs(3)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MaxRateSpec {
    /// The sliding window.
    pub window: Millis,
    /// Requests allowed in any window.
    pub at_most: u64,
    /// Only requests that arrived at or after this instant count: the rate once something
    /// has settled (a fleet's start, an outage's end), not while it settles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Millis>,
}

/// `header: { name, values: [...] }`.
///
/// ```
/// use retrylab::scenario::HeaderCheckSpec;
/// let h: HeaderCheckSpec = serde_saphyr::from_str("{ name: Accept, values: [application/json] }").unwrap();
/// assert_eq!(h.values, ["application/json"]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HeaderCheckSpec {
    /// The header name.
    pub name: String,
    /// The values allowed.
    pub values: Vec<String>,
}

/// `{ at_most: n }`.
///
/// ```
/// use retrylab::scenario::AtMostSpec;
/// let a: AtMostSpec = serde_saphyr::from_str("{ at_most: 0 }").unwrap();
/// assert_eq!(a.at_most, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AtMostSpec {
    /// The bound.
    pub at_most: u64,
}

/// `consumer: { idempotent_by: key | none }`: how a consumer of the brokers' stored
/// messages processes them. `key` skips a message whose key it has already processed (the
/// idempotent consumer `RocketMQ`'s documentation asks for, keyed on a business key); `none`
/// processes every message. The check passes when each successful call has exactly one
/// message processed, and no call more than one.
///
/// ```
/// use retrylab::scenario::{ConsumerSpec, IdempotentBy};
/// let c: ConsumerSpec = serde_saphyr::from_str("{ idempotent_by: key }").unwrap();
/// assert_eq!(c.idempotent_by, IdempotentBy::Key);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConsumerSpec {
    /// What the consumer deduplicates on.
    pub idempotent_by: IdempotentBy,
}

impl ConsumerSpec {
    /// A consumer deduplicating by `by`.
    pub fn idempotent_by(by: IdempotentBy) -> Self {
        ConsumerSpec { idempotent_by: by }
    }
}

/// What a consumer deduplicates stored messages on.
///
/// ```
/// use retrylab::scenario::IdempotentBy;
/// assert_eq!(IdempotentBy::Key.name(), "key");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IdempotentBy {
    /// The message key (the business key): a message whose key was processed is skipped.
    Key,
    /// Nothing: every stored message is processed.
    None,
}

impl IdempotentBy {
    /// The name as written in YAML.
    pub fn name(&self) -> &'static str {
        match self {
            IdempotentBy::Key => "key",
            IdempotentBy::None => "none",
        }
    }
}

/// `amplification: { at_most: x, p99_at_most: n }`: requests received per logical call over
/// the run, and attempts of one call at the 99th percentile; one of the two at least.
///
/// ```
/// use retrylab::scenario::AmplificationSpec;
/// let a: AmplificationSpec = serde_saphyr::from_str("{ at_most: 1.5 }").unwrap();
/// assert_eq!((a.at_most, a.p99_at_most), (Some(1.5), None));
/// let both: AmplificationSpec = serde_saphyr::from_str("{ at_most: 1.5, p99_at_most: 3 }").unwrap();
/// assert_eq!(both.p99_at_most, Some(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AmplificationSpec {
    /// Requests the endpoints received per logical call over the whole run, at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub at_most: Option<f64>,
    /// Attempts of one logical call at the 99th percentile across the calls (nearest rank),
    /// at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub p99_at_most: Option<u32>,
}

/// `retry_waves: { k, window, at_most }`: at most `at_most` windows in which `k` or more
/// clients retried.
///
/// ```
/// use retrylab::scenario::RetryWavesSpec;
/// let w: RetryWavesSpec = serde_saphyr::from_str("{ k: 10, window: 100ms, at_most: 2 }").unwrap();
/// assert_eq!(w.k, 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RetryWavesSpec {
    /// Clients that make a wave.
    pub k: u32,
    /// The window.
    pub window: Millis,
    /// Waves allowed.
    pub at_most: u64,
}
