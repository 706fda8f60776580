//! The generic policies: `no_retry`, `fixed`, `exponential`, `linear`, `fibonacci`.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::defaults::*;
use crate::policy::{
    ExponentialConfig, FibonacciConfig, FixedConfig, LinearConfig, RetryAfterRule, RetryOn,
    RetryOnItem,
};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::values::status_code;

/// `max_attempts` when a generic policy's parameters leave it out.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Jitter applied to a computed delay: the policies' own type.
///
/// ```
/// use retrylab::scenario::Jitter;
/// assert_eq!(Jitter::default(), Jitter::Full);
/// ```
pub use crate::policy::Jitter;

/// `retry_on:` when left out: the policies' default conditions.
fn retry_on_default() -> Vec<RetryCondition> {
    RetryCondition::defaults()
}

fn is_retry_on_default(v: &Vec<RetryCondition>) -> bool {
    *v == RetryCondition::defaults()
}

/// Whether a generic policy waits for a `Retry-After` header.
///
/// ```
/// use retrylab::scenario::RetryAfterPolicy;
/// assert_eq!(RetryAfterPolicy::default(), RetryAfterPolicy::Honour);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RetryAfterPolicy {
    /// Wait at least what the header says.
    #[default]
    Honour,
    /// Ignore the header.
    Ignore,
}

impl RetryAfterPolicy {
    fn is_honour(&self) -> bool {
        *self == RetryAfterPolicy::Honour
    }
}

/// What a generic policy retries on: a status (`429`), a status class (`5xx`),
/// `transport` (connection errors) or `timeout` (attempt timeouts).
///
/// ```
/// use retrylab::scenario::RetryCondition;
///
/// assert!(RetryCondition::Class(5).matches_status(503));
/// assert_eq!(RetryCondition::defaults().len(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryCondition {
    /// This status code.
    Status(u16),
    /// Every status of this class: `5` is `5xx`.
    Class(u8),
    /// Connection errors: refused, reset, closed early.
    Transport,
    /// The attempt timed out.
    Timeout,
}

impl RetryCondition {
    /// `[5xx, 429, transport, timeout]`, the default of the generic policies.
    pub fn defaults() -> Vec<RetryCondition> {
        vec![
            RetryCondition::Class(5),
            RetryCondition::Status(429),
            RetryCondition::Transport,
            RetryCondition::Timeout,
        ]
    }

    /// Whether a response with `status` matches.
    pub fn matches_status(&self, status: u16) -> bool {
        match *self {
            RetryCondition::Status(s) => s == status,
            RetryCondition::Class(c) => status / 100 == c as u16,
            _ => false,
        }
    }
}

impl Serialize for RetryCondition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            RetryCondition::Status(s) => serializer.serialize_u16(s),
            RetryCondition::Class(c) => serializer.serialize_str(&format!("{c}xx")),
            RetryCondition::Transport => serializer.serialize_str("transport"),
            RetryCondition::Timeout => serializer.serialize_str("timeout"),
        }
    }
}

impl<'de> Deserialize<'de> for RetryCondition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RetryCondition;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a status code such as `429`, a class such as `5xx`, `transport` or `timeout`",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RetryCondition, E> {
                status_code::check(v).map(RetryCondition::Status)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RetryCondition, E> {
                match v {
                    "transport" => Ok(RetryCondition::Transport),
                    "timeout" => Ok(RetryCondition::Timeout),
                    _ => match v.as_bytes() {
                        [c @ b'1'..=b'5', b'x', b'x'] => Ok(RetryCondition::Class(c - b'0')),
                        _ => Err(E::unknown_variant(
                            v,
                            &["1xx", "2xx", "3xx", "4xx", "5xx", "transport", "timeout"],
                        )),
                    },
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `fixed`: the same delay before every retry.
///
/// ```
/// use retrylab::scenario::{FixedParams, Millis};
/// assert_eq!(FixedParams::default().delay, Millis::from_secs(1));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FixedParams {
    /// The delay (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub delay: Millis,
    /// Whether to wait for `Retry-After` (default `honour`).
    #[serde(default, skip_serializing_if = "RetryAfterPolicy::is_honour")]
    pub retry_after: RetryAfterPolicy,
    /// What is retried (default `[5xx, 429, transport, timeout]`; at most 512 entries).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3; at most 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for FixedParams {
    fn default() -> Self {
        FixedParams {
            delay: s_1(),
            retry_after: RetryAfterPolicy::Honour,
            retry_on: retry_on_default(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

/// `exponential`: `initial * multiplier^(n-1)` capped at `max_delay`, then jittered.
///
/// ```
/// use retrylab::scenario::{ExponentialParams, Jitter, Millis};
///
/// let p = ExponentialParams::default();
/// assert_eq!((p.initial, p.multiplier, p.max_delay, p.jitter),
///            (Millis::from_ms(100), 2.0, Millis::from_secs(20), Jitter::Full));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ExponentialParams {
    /// The first delay (default 100ms).
    #[serde(default = "ms_100", skip_serializing_if = "is_ms_100")]
    pub initial: Millis,
    /// Growth per retry (default 2).
    #[serde(default = "two", skip_serializing_if = "is_two")]
    pub multiplier: f64,
    /// Cap on the delay before jitter (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub max_delay: Millis,
    /// Jitter (default `full`).
    #[serde(default = "jitter_full", skip_serializing_if = "is_jitter_full")]
    pub jitter: Jitter,
    /// Whether to wait for `Retry-After` (default `honour`).
    #[serde(default, skip_serializing_if = "RetryAfterPolicy::is_honour")]
    pub retry_after: RetryAfterPolicy,
    /// What is retried (default `[5xx, 429, transport, timeout]`; at most 512 entries).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3; at most 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for ExponentialParams {
    fn default() -> Self {
        ExponentialParams {
            initial: ms_100(),
            multiplier: two(),
            max_delay: s_20(),
            jitter: Jitter::Full,
            retry_after: RetryAfterPolicy::Honour,
            retry_on: retry_on_default(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

/// The setters the schedule policies share (`exponential`, `linear`, `fibonacci`).
macro_rules! schedule_setters {
    ($params:ty) => {
        impl $params {
            /// Sets the first delay.
            pub fn initial(mut self, delay: Millis) -> Self {
                self.initial = delay;
                self
            }

            /// Sets the cap on the delay before jitter.
            pub fn max_delay(mut self, delay: Millis) -> Self {
                self.max_delay = delay;
                self
            }

            /// Sets the jitter.
            pub fn jitter(mut self, jitter: Jitter) -> Self {
                self.jitter = jitter;
                self
            }

            /// Sets the attempts in all, the first included.
            pub fn max_attempts(mut self, n: u32) -> Self {
                self.max_attempts = Some(n);
                self
            }

            /// Sets the per-attempt timeout.
            pub fn attempt_timeout(mut self, timeout: Millis) -> Self {
                self.attempt_timeout = Some(timeout);
                self
            }

            /// Sets whether to wait for `Retry-After`.
            pub fn retry_after(mut self, policy: RetryAfterPolicy) -> Self {
                self.retry_after = policy;
                self
            }
        }
    };
}

schedule_setters!(ExponentialParams);
schedule_setters!(LinearParams);

impl ExponentialParams {
    /// Sets the growth per retry.
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier;
        self
    }
}

/// `linear` (`initial + (n-1) * step`) and `fibonacci` (first `initial`, second `step`, then
/// each the sum of the two before), capped at `max_delay`.
///
/// ```
/// use retrylab::scenario::{Jitter, LinearParams};
/// assert_eq!(LinearParams::default().jitter, Jitter::None);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LinearParams {
    /// The first delay (default 100ms).
    #[serde(default = "ms_100", skip_serializing_if = "is_ms_100")]
    pub initial: Millis,
    /// Linear: the increase per retry; Fibonacci: the second delay (default 100ms).
    #[serde(default = "ms_100", skip_serializing_if = "is_ms_100")]
    pub step: Millis,
    /// Cap on the delay before jitter (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub max_delay: Millis,
    /// Jitter (default `none`: these schedules are usually written to be exact); not
    /// `decorrelated`, which follows its own recurrence rather than a schedule.
    #[serde(default = "jitter_none", skip_serializing_if = "is_jitter_none")]
    pub jitter: Jitter,
    /// Whether to wait for `Retry-After` (default `honour`).
    #[serde(default, skip_serializing_if = "RetryAfterPolicy::is_honour")]
    pub retry_after: RetryAfterPolicy,
    /// What is retried (default `[5xx, 429, transport, timeout]`; at most 512 entries).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3; at most 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for LinearParams {
    fn default() -> Self {
        LinearParams {
            initial: ms_100(),
            step: ms_100(),
            max_delay: s_20(),
            jitter: Jitter::None,
            retry_after: RetryAfterPolicy::Honour,
            retry_on: retry_on_default(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for RetryCondition {
    fn schema_name() -> String {
        "RetryCondition".to_string()
    }
    fn json_schema(_: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        crate::scenario::model::schema::from_json(serde_json::json!({
            "anyOf": [
                { "type": "integer", "minimum": 100, "maximum": 599 },
                { "type": "string", "pattern": "^[1-5]xx$" },
                { "enum": ["transport", "timeout"] }
            ]
        }))
    }
}

impl LinearParams {
    /// Sets the increase per retry (`linear`) or the second delay (`fibonacci`).
    pub fn step(mut self, step: Millis) -> Self {
        self.step = step;
        self
    }
}

impl FixedParams {
    /// Sets the attempts in all, the first included.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(n);
        self
    }

    /// Sets the per-attempt timeout.
    pub fn attempt_timeout(mut self, timeout: Millis) -> Self {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// Sets whether to wait for `Retry-After`.
    pub fn retry_after(mut self, policy: RetryAfterPolicy) -> Self {
        self.retry_after = policy;
        self
    }
}

impl From<FixedParams> for super::ClientSpec {
    fn from(params: FixedParams) -> Self {
        super::ClientSpec::Fixed(params)
    }
}

impl From<ExponentialParams> for super::ClientSpec {
    fn from(params: ExponentialParams) -> Self {
        super::ClientSpec::Exponential(params)
    }
}

impl FixedParams {
    /// The `fixed` policy of these parameters (`max_attempts` [`DEFAULT_MAX_ATTEMPTS`] when
    /// left out), not yet validated.
    ///
    /// ```
    /// use retrylab::scenario::{FixedParams, Millis};
    /// use std::time::Duration;
    ///
    /// let mut params = FixedParams::default();
    /// params.delay = Millis::from_ms(250);
    /// let config = params.config();
    /// assert_eq!((config.max_attempts, config.delay), (3, Duration::from_millis(250)));
    /// ```
    pub fn config(&self) -> FixedConfig {
        FixedConfig {
            max_attempts: self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            delay: self.delay.as_duration(),
            retry_after: self.retry_after.rule(),
            retry_on: retry_on(&self.retry_on),
        }
    }
}

impl ExponentialParams {
    /// The `exponential` policy of these parameters (`max_attempts` [`DEFAULT_MAX_ATTEMPTS`]
    /// when left out), not yet validated.
    ///
    /// ```
    /// use retrylab::scenario::{ExponentialParams, Millis};
    /// use std::time::Duration;
    ///
    /// let config = ExponentialParams::default().initial(Millis::from_ms(50)).config();
    /// assert_eq!((config.max_attempts, config.initial), (3, Duration::from_millis(50)));
    /// ```
    pub fn config(&self) -> ExponentialConfig {
        ExponentialConfig {
            max_attempts: self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: self.initial.as_duration(),
            multiplier: self.multiplier,
            max_delay: self.max_delay.as_duration(),
            jitter: self.jitter,
            retry_after: self.retry_after.rule(),
            retry_on: retry_on(&self.retry_on),
        }
    }
}

impl LinearParams {
    /// The `linear` policy of these parameters (`max_attempts` [`DEFAULT_MAX_ATTEMPTS`] when
    /// left out), not yet validated.
    ///
    /// ```
    /// use retrylab::scenario::LinearParams;
    ///
    /// assert_eq!(LinearParams::default().linear_config().max_attempts, 3);
    /// ```
    pub fn linear_config(&self) -> LinearConfig {
        LinearConfig {
            max_attempts: self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: self.initial.as_duration(),
            step: self.step.as_duration(),
            max_delay: self.max_delay.as_duration(),
            jitter: self.jitter,
            retry_after: self.retry_after.rule(),
            retry_on: retry_on(&self.retry_on),
        }
    }

    /// The `fibonacci` policy of these parameters, which it shares with `linear`.
    ///
    /// ```
    /// use retrylab::scenario::LinearParams;
    ///
    /// assert_eq!(LinearParams::default().fibonacci_config().max_attempts, 3);
    /// ```
    pub fn fibonacci_config(&self) -> FibonacciConfig {
        let LinearConfig {
            max_attempts,
            initial,
            step,
            max_delay,
            jitter,
            retry_after,
            retry_on,
        } = self.linear_config();
        FibonacciConfig {
            max_attempts,
            initial,
            step,
            max_delay,
            jitter,
            retry_after,
            retry_on,
        }
    }
}

impl RetryAfterPolicy {
    /// The policies' rule for this setting.
    fn rule(self) -> RetryAfterRule {
        match self {
            RetryAfterPolicy::Honour => RetryAfterRule::Honour,
            RetryAfterPolicy::Ignore => RetryAfterRule::Ignore,
        }
    }
}

/// The policies' retry condition for a `retry_on:` list: their default when it is empty.
fn retry_on(conditions: &[RetryCondition]) -> RetryOn {
    if conditions.is_empty() {
        return RetryOn::default();
    }
    RetryOn::from_items(conditions.iter().map(|c| match *c {
        RetryCondition::Status(s) => RetryOnItem::Status(s),
        RetryCondition::Class(c) => RetryOnItem::Class(c),
        RetryCondition::Transport => RetryOnItem::Transport,
        RetryCondition::Timeout => RetryOnItem::Timeout,
    }))
}
