//! gRPC: `grpc_retry` (a service config's `retryPolicy` and `retryThrottling`) and
//! `grpc_connection_backoff`.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::defaults::*;
use crate::policy::GrpcConnectionConfig;
use crate::policy::grpc::{A6Jitter, GrpcRetryConfig, RetryThrottling};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::values::Probability;

/// `grpc_retry`.
///
/// ```
/// use retrylab::scenario::GrpcRetryParams;
///
/// let yaml = r#"
/// service_config:
///   retryPolicy: { maxAttempts: 4, initialBackoff: 0.1s, maxBackoff: 1s,
///                  backoffMultiplier: 2, retryableStatusCodes: [UNAVAILABLE] }
/// "#;
/// let p: GrpcRetryParams = serde_saphyr::from_str(yaml).unwrap();
/// assert_eq!(p.service_config.effective_retry_policy().unwrap().max_attempts, 4);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcRetryParams {
    /// The service config, as gRPC writes it.
    pub service_config: GrpcServiceConfig,
    /// Which A6 backoff rule (default `a6_2024`).
    #[serde(default, skip_serializing_if = "GrpcJitterModel::is_default")]
    pub jitter_model: GrpcJitterModel,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

/// The A6 backoff rules.
///
/// ```
/// use retrylab::scenario::GrpcJitterModel;
/// let m: GrpcJitterModel = serde_saphyr::from_str("a6_legacy").unwrap();
/// assert_eq!(m, GrpcJitterModel::A6Legacy);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GrpcJitterModel {
    /// `min(initial * mult^(n-1), max) * uniform(0.8, 1.2)`.
    #[default]
    #[allow(non_camel_case_types)]
    #[serde(rename = "a6_2024")]
    A6_2024,
    /// `uniform(0, min(initial * mult^(n-1), max))`.
    A6Legacy,
    /// No jitter: exactly `min(initial * mult^(n-1), max)` (a client without the jitter A6
    /// asks for).
    None,
}

impl GrpcJitterModel {
    fn is_default(&self) -> bool {
        *self == GrpcJitterModel::A6_2024
    }
}

/// A gRPC service config: `methodConfig` entries and/or a top-level `retryPolicy`
/// (a shorthand for a config with one method), and `retryThrottling`.
///
/// ```
/// use retrylab::scenario::GrpcServiceConfig;
///
/// let json = r#"{"methodConfig": [{"name": [{"service": "orders.Orders"}],
///   "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
///                   "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}],
///   "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#;
/// let c: GrpcServiceConfig = serde_saphyr::from_str(json).unwrap();
/// assert_eq!(c.effective_retry_policy().unwrap().max_attempts, 4);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcServiceConfig {
    /// Per-method configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub method_config: Vec<GrpcMethodConfig>,
    /// Shorthand: the retry policy of the scenario's one operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<GrpcRetryPolicy>,
    /// Per-server retry throttling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_throttling: Option<GrpcRetryThrottling>,
}

impl GrpcServiceConfig {
    /// The retry policy that applies: the top-level one, else the first method config's.
    pub fn effective_retry_policy(&self) -> Option<&GrpcRetryPolicy> {
        self.retry_policy.as_ref().or_else(|| {
            self.method_config
                .iter()
                .find_map(|m| m.retry_policy.as_ref())
        })
    }
}

/// One `methodConfig` entry.
///
/// ```
/// use retrylab::scenario::GrpcMethodConfig;
/// let m: GrpcMethodConfig = serde_saphyr::from_str(r#"{"name": [{"service": "a.B"}], "timeout": "2s"}"#).unwrap();
/// assert_eq!(m.timeout.unwrap().to_string(), "2s");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcMethodConfig {
    /// The methods it applies to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub name: Vec<GrpcMethodName>,
    /// Their retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<GrpcRetryPolicy>,
    /// Their deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<ProtoDuration>,
    /// Whether calls wait for a ready connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_ready: Option<bool>,
}

/// `{ service, method }` in a `methodConfig` name list.
///
/// ```
/// use retrylab::scenario::GrpcMethodName;
/// let n: GrpcMethodName = serde_saphyr::from_str(r#"{"service": "a.B", "method": "Get"}"#).unwrap();
/// assert_eq!(n.method.as_deref(), Some("Get"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcMethodName {
    /// Fully qualified service name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Method name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// A6 `retryPolicy`.
///
/// ```
/// use retrylab::scenario::{GrpcCode, GrpcRetryPolicy};
/// let p: GrpcRetryPolicy = serde_saphyr::from_str(
///     r#"{"maxAttempts": 3, "initialBackoff": "0.5s", "maxBackoff": "5s", "backoffMultiplier": 1.5,
///         "retryableStatusCodes": ["UNAVAILABLE", 8]}"#,
/// ).unwrap();
/// assert_eq!(p.retryable_status_codes, [GrpcCode::Unavailable, GrpcCode::ResourceExhausted]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcRetryPolicy {
    /// Attempts in all, at least 2 (values above 5 are treated as 5).
    pub max_attempts: u32,
    /// Backoff before the first retry, such as `0.1s`.
    pub initial_backoff: ProtoDuration,
    /// Cap on the backoff.
    pub max_backoff: ProtoDuration,
    /// Growth per retry, above 0.
    pub backoff_multiplier: f64,
    /// Status codes that are retried, at least one (at most 512 entries).
    pub retryable_status_codes: Vec<GrpcCode>,
}

/// A6 `retryThrottling`.
///
/// ```
/// use retrylab::scenario::GrpcRetryThrottling;
/// let t: GrpcRetryThrottling = serde_saphyr::from_str(r#"{"maxTokens": 10, "tokenRatio": 0.1}"#).unwrap();
/// assert_eq!(t.max_tokens, 10.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcRetryThrottling {
    /// Bucket size, in (0, 1000].
    pub max_tokens: f64,
    /// Tokens added per success, above 0 (3 decimals).
    pub token_ratio: f64,
}

/// A protobuf JSON duration: decimal seconds with an `s` suffix (`0.1s`, `1s`), in whole
/// milliseconds, at most `internals::MAX_DURATION` (3650 days).
///
/// ```
/// use retrylab::scenario::{Millis, ProtoDuration};
///
/// let d: ProtoDuration = serde_saphyr::from_str("0.1s").unwrap();
/// assert_eq!(d.0, Millis::from_ms(100));
/// assert_eq!(d.to_string(), "0.1s");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtoDuration(pub Millis);

impl fmt::Display for ProtoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_ms();
        if ms % 1000 == 0 {
            write!(f, "{}s", ms / 1000)
        } else {
            let frac = format!("{:03}", ms % 1000);
            write!(f, "{}.{}s", ms / 1000, frac.trim_end_matches('0'))
        }
    }
}

impl Serialize for ProtoDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ProtoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ProtoDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a protobuf duration in seconds such as `0.1s` or `1s`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProtoDuration, E> {
                let digits = v.strip_suffix('s').unwrap_or("");
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                    return Err(E::custom(format!(
                        "invalid duration `{v}`, expected a protobuf duration in seconds such as `0.1s` or `1s`"
                    )));
                }
                crate::scenario::model::duration::parse_bounded(v)
                    .map(ProtoDuration)
                    .map_err(E::custom)
            }
        }
        deserializer.deserialize_str(V)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for ProtoDuration {
    fn schema_name() -> String {
        "ProtoDuration".to_string()
    }
    fn json_schema(_: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        crate::scenario::model::schema::string_pattern(
            r"^[0-9]+(\.[0-9]{1,3})?s$",
            "seconds, such as `0.1s`",
        )
    }
}

/// gRPC status codes, written by name (`UNAVAILABLE`) or number (`14`).
///
/// ```
/// use retrylab::scenario::GrpcCode;
/// assert_eq!(GrpcCode::Unavailable.name(), "UNAVAILABLE");
/// assert_eq!(GrpcCode::Unavailable.code(), 14);
/// assert_eq!(GrpcCode::ALL[14], GrpcCode::Unavailable);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs, clippy::upper_case_acronyms)]
#[non_exhaustive]
pub enum GrpcCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl GrpcCode {
    /// Every code, by number.
    pub const ALL: [GrpcCode; 17] = [
        GrpcCode::Ok,
        GrpcCode::Cancelled,
        GrpcCode::Unknown,
        GrpcCode::InvalidArgument,
        GrpcCode::DeadlineExceeded,
        GrpcCode::NotFound,
        GrpcCode::AlreadyExists,
        GrpcCode::PermissionDenied,
        GrpcCode::ResourceExhausted,
        GrpcCode::FailedPrecondition,
        GrpcCode::Aborted,
        GrpcCode::OutOfRange,
        GrpcCode::Unimplemented,
        GrpcCode::Internal,
        GrpcCode::Unavailable,
        GrpcCode::DataLoss,
        GrpcCode::Unauthenticated,
    ];

    const NAMES: [&'static str; 17] = retrylab_endpoints::GrpcCode::NAMES;

    /// The canonical name, such as `UNAVAILABLE`.
    pub fn name(&self) -> &'static str {
        Self::NAMES[*self as usize]
    }

    /// The numeric code.
    pub fn code(&self) -> u8 {
        *self as u8
    }
}

impl Serialize for GrpcCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GrpcCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = GrpcCode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a gRPC status code name such as `UNAVAILABLE`, or its number 0-16")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<GrpcCode, E> {
                usize::try_from(v)
                    .ok()
                    .and_then(|i| GrpcCode::ALL.get(i).copied())
                    .ok_or_else(|| {
                        E::custom(format!(
                            "gRPC status code {v} is out of range, expected 0 to 16"
                        ))
                    })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<GrpcCode, E> {
                GrpcCode::NAMES
                    .iter()
                    .position(|n| *n == v)
                    .map(|i| GrpcCode::ALL[i])
                    .ok_or_else(|| E::unknown_variant(v, &GrpcCode::NAMES))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for GrpcCode {
    fn schema_name() -> String {
        "GrpcCode".to_string()
    }
    fn json_schema(_: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        crate::scenario::model::schema::string_enum(&GrpcCode::NAMES)
    }
}

/// `grpc_connection_backoff`.
///
/// ```
/// use retrylab::scenario::{GrpcConnectionBackoffParams, Millis};
/// assert_eq!(GrpcConnectionBackoffParams::default().max_backoff, Millis::from_secs(120));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GrpcConnectionBackoffParams {
    /// `INITIAL_BACKOFF` (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub initial_backoff: Millis,
    /// MULTIPLIER (default 1.6).
    #[serde(default = "one_point_six", skip_serializing_if = "is_one_point_six")]
    pub multiplier: f64,
    /// JITTER as a fraction (default 0.2).
    #[serde(default = "fraction_02", skip_serializing_if = "is_fraction_02")]
    pub jitter: Probability,
    /// `MAX_BACKOFF` (default 120s).
    #[serde(default = "s_120", skip_serializing_if = "is_s_120")]
    pub max_backoff: Millis,
    /// `MIN_CONNECT_TIMEOUT` (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub min_connect_timeout: Millis,
    /// Connect attempts in all (default: unbounded, stopped by the scenario's limits; at most
    /// 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for GrpcConnectionBackoffParams {
    fn default() -> Self {
        GrpcConnectionBackoffParams {
            initial_backoff: s_1(),
            multiplier: one_point_six(),
            jitter: fraction_02(),
            max_backoff: s_120(),
            min_connect_timeout: s_20(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

impl GrpcRetryParams {
    /// The A6 policy of these parameters: the service config's one `retryPolicy` (top-level,
    /// else the first `methodConfig` entry's) and its `retryThrottling`, with the chosen
    /// jitter model; `None` when the service config has no retry policy.
    ///
    /// ```
    /// use retrylab::scenario::GrpcRetryParams;
    /// use std::time::Duration;
    ///
    /// let yaml = r#"
    /// service_config:
    ///   retryPolicy: { maxAttempts: 9, initialBackoff: 0.1s, maxBackoff: 1s,
    ///                  backoffMultiplier: 2, retryableStatusCodes: [UNAVAILABLE] }
    /// "#;
    /// let p: GrpcRetryParams = serde_saphyr::from_str(yaml).unwrap();
    /// let config = p.config().unwrap();
    /// assert_eq!(config.initial_backoff, Duration::from_millis(100));
    /// assert_eq!(config.retryable_status_codes, [14]);
    /// assert_eq!(config.effective_max_attempts(), 5);
    /// ```
    pub fn config(&self) -> Option<GrpcRetryConfig> {
        let r = self.service_config.effective_retry_policy()?;
        Some(GrpcRetryConfig {
            max_attempts: r.max_attempts,
            initial_backoff: r.initial_backoff.0.as_duration(),
            max_backoff: r.max_backoff.0.as_duration(),
            backoff_multiplier: r.backoff_multiplier,
            retryable_status_codes: r
                .retryable_status_codes
                .iter()
                .map(|c| u16::from(c.code()))
                .collect(),
            jitter: match self.jitter_model {
                GrpcJitterModel::A6_2024 => A6Jitter::Current,
                GrpcJitterModel::A6Legacy => A6Jitter::Legacy,
                GrpcJitterModel::None => A6Jitter::Off,
            },
            throttling: self
                .service_config
                .retry_throttling
                .map(|t| RetryThrottling {
                    max_tokens: t.max_tokens,
                    token_ratio: t.token_ratio,
                }),
        })
    }
}

impl GrpcConnectionBackoffParams {
    /// The connection backoff of these parameters.
    ///
    /// ```
    /// use retrylab::scenario::GrpcConnectionBackoffParams;
    /// use std::time::Duration;
    ///
    /// let config = GrpcConnectionBackoffParams::default().config();
    /// assert_eq!(config.min_connect_timeout, Duration::from_secs(20));
    /// assert_eq!(config.jitter, 0.2);
    /// ```
    pub fn config(&self) -> GrpcConnectionConfig {
        GrpcConnectionConfig {
            initial_backoff: self.initial_backoff.as_duration(),
            multiplier: self.multiplier,
            jitter: self.jitter.value(),
            max_backoff: self.max_backoff.as_duration(),
            min_connect_timeout: self.min_connect_timeout.as_duration(),
            max_attempts: self.max_attempts,
        }
    }
}
