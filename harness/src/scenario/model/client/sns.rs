//! `sns_delivery`: Amazon SNS delivery policies, keys as AWS spells them.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::defaults::*;
use crate::scenario::model::duration::Millis;
use crate::scenario::model::values::Probability;
use std::time::Duration;

use crate::policy::sns::{SnsBackoff, SnsConfig};

/// `sns_delivery`.
///
/// ```
/// use retrylab::scenario::{SnsEndpointType, SnsParams};
///
/// let p = SnsParams::default();
/// assert_eq!((p.jitter.value(), p.endpoint_type), (0.1, SnsEndpointType::Http));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SnsParams {
    /// The subscription's delivery policy, as AWS writes it (HTTP/S endpoints only;
    /// default: SNS's default policy): a mapping, or a string holding its JSON.
    #[serde(
        default,
        deserialize_with = "delivery_policy",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<DeliveryPolicyForm>"))]
    pub delivery_policy: Option<SnsDeliveryPolicy>,
    /// Jitter as a fraction of the delay, plus or minus (default 0.1).
    #[serde(default = "fraction_01", skip_serializing_if = "is_fraction_01")]
    pub jitter: Probability,
    /// `http` (a custom policy, default), or one of AWS's presets.
    #[serde(default, skip_serializing_if = "SnsEndpointType::is_http")]
    pub endpoint_type: SnsEndpointType,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for SnsParams {
    fn default() -> Self {
        SnsParams {
            delivery_policy: None,
            jitter: fraction_01(),
            endpoint_type: SnsEndpointType::Http,
            attempt_timeout: None,
        }
    }
}

/// `delivery_policy:` as a mapping, or as the JSON text AWS documents it in (the console, the
/// CLI and `CloudFormation` take a policy as a string), read as the same policy.
fn delivery_policy<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SnsDeliveryPolicy>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<SnsDeliveryPolicy>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an SNS delivery policy: a mapping, or a string holding its JSON")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(V)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            SnsDeliveryPolicy::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
            crate::scenario::yaml::parse::from_text(text)
                .map(Some)
                .map_err(E::custom)
        }
    }
    d.deserialize_any(V)
}

/// An SNS delivery policy: a mapping, or a string holding its JSON (as AWS documents it).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum DeliveryPolicyForm {
    /// The policy.
    Policy(SnsDeliveryPolicy),
    /// The policy's JSON, as a string.
    Json(String),
}

/// Which SNS policy applies.
///
/// ```
/// use retrylab::scenario::SnsEndpointType;
/// assert_eq!(SnsEndpointType::default(), SnsEndpointType::Http);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SnsEndpointType {
    /// An HTTP/S subscription with `delivery_policy` (or SNS's default).
    #[default]
    Http,
    /// AWS's preset for AWS-managed endpoints (Lambda, SQS).
    AwsManaged,
    /// AWS's preset for customer-managed endpoints (SMTP, SMS, mobile push).
    CustomerManaged,
}

impl SnsEndpointType {
    fn is_http(&self) -> bool {
        *self == SnsEndpointType::Http
    }
}

/// An SNS subscription delivery policy, keys as AWS spells them.
///
/// ```
/// use retrylab::scenario::SnsDeliveryPolicy;
///
/// let json = r#"{"healthyRetryPolicy": {"minDelayTarget": 20, "maxDelayTarget": 40, "numRetries": 3}}"#;
/// let p: SnsDeliveryPolicy = serde_saphyr::from_str(json).unwrap();
/// assert_eq!(p.healthy_retry_policy.unwrap().max_delay_target, 40);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SnsDeliveryPolicy {
    /// The retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_retry_policy: Option<SnsRetryPolicy>,
    /// Accepted for pasted policies; SNS does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sickly_retry_policy: Option<SnsRetryPolicy>,
    /// Delivery rate limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_policy: Option<SnsThrottlePolicy>,
    /// Request format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_policy: Option<SnsRequestPolicy>,
    /// Accepted for pasted policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guaranteed: Option<bool>,
}

/// `healthyRetryPolicy`: four phases (immediate, pre-backoff, backoff, post-backoff).
/// Delay targets are whole seconds, as in AWS's JSON.
///
/// ```
/// use retrylab::scenario::{SnsBackoffFunction, SnsRetryPolicy};
///
/// let p = SnsRetryPolicy::default();
/// assert_eq!((p.min_delay_target, p.num_retries, p.backoff_function), (20, 3, SnsBackoffFunction::Linear));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SnsRetryPolicy {
    /// Seconds, 1..=maxDelayTarget (default 20).
    #[serde(default = "twenty")]
    pub min_delay_target: u32,
    /// Seconds, minDelayTarget..=3600 (default 20).
    #[serde(default = "twenty")]
    pub max_delay_target: u32,
    /// Retries in all phases, 0..=100 (default 3).
    #[serde(default = "three")]
    pub num_retries: u32,
    /// Immediate retries (default 0).
    #[serde(default)]
    pub num_no_delay_retries: u32,
    /// Retries at `minDelayTarget` (default 0).
    #[serde(default)]
    pub num_min_delay_retries: u32,
    /// Retries at `maxDelayTarget` (default 0).
    #[serde(default)]
    pub num_max_delay_retries: u32,
    /// The backoff phase's curve (default `linear`).
    #[serde(default)]
    pub backoff_function: SnsBackoffFunction,
}

fn twenty() -> u32 {
    20
}

impl Default for SnsRetryPolicy {
    fn default() -> Self {
        SnsRetryPolicy {
            min_delay_target: 20,
            max_delay_target: 20,
            num_retries: 3,
            num_no_delay_retries: 0,
            num_min_delay_retries: 0,
            num_max_delay_retries: 0,
            backoff_function: SnsBackoffFunction::Linear,
        }
    }
}

/// SNS backoff curves.
///
/// ```
/// use retrylab::scenario::SnsBackoffFunction;
/// let f: SnsBackoffFunction = serde_saphyr::from_str("geometric").unwrap();
/// assert_eq!(f, SnsBackoffFunction::Geometric);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SnsBackoffFunction {
    /// Quadratic from min to max (a model).
    Arithmetic,
    /// Exponential from min to max (a model).
    Exponential,
    /// Geometric from min to max (a model).
    Geometric,
    /// Evenly spaced from min to max (published).
    #[default]
    Linear,
}

/// `throttlePolicy`.
///
/// ```
/// use retrylab::scenario::SnsThrottlePolicy;
/// let t: SnsThrottlePolicy = serde_saphyr::from_str(r#"{"maxReceivesPerSecond": 10}"#).unwrap();
/// assert_eq!(t.max_receives_per_second, 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SnsThrottlePolicy {
    /// Deliveries per second, at least 1.
    pub max_receives_per_second: u32,
}

/// `requestPolicy`.
///
/// ```
/// use retrylab::scenario::SnsRequestPolicy;
/// let r: SnsRequestPolicy = serde_saphyr::from_str(r#"{"headerContentType": "application/json"}"#).unwrap();
/// assert_eq!(r.header_content_type, "application/json");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SnsRequestPolicy {
    /// `Content-Type` of deliveries (default `text/plain; charset=UTF-8`).
    pub header_content_type: String,
}

impl SnsParams {
    /// The SNS policy of these parameters: a preset for `aws_managed` and `customer_managed`,
    /// else the `healthyRetryPolicy` (SNS's default when absent) and the `throttlePolicy` of
    /// `delivery_policy`.
    ///
    /// ```
    /// use retrylab::scenario::{SnsEndpointType, SnsParams};
    ///
    /// let mut preset = SnsParams::default();
    /// preset.endpoint_type = SnsEndpointType::CustomerManaged;
    /// assert_eq!(preset.config().num_retries, 50);
    /// assert_eq!(SnsParams::default().config().num_retries, 3);
    /// ```
    pub fn config(&self) -> SnsConfig {
        let p = self;
        let base = match p.endpoint_type {
            SnsEndpointType::AwsManaged => SnsConfig::aws_managed(),
            SnsEndpointType::CustomerManaged => SnsConfig::customer_managed(),
            SnsEndpointType::Http => {
                let dp = p.delivery_policy.clone().unwrap_or_default();
                let h = dp.healthy_retry_policy.unwrap_or_default();
                SnsConfig {
                    min_delay: Duration::from_secs(u64::from(h.min_delay_target)),
                    max_delay: Duration::from_secs(u64::from(h.max_delay_target)),
                    num_retries: h.num_retries,
                    num_no_delay_retries: h.num_no_delay_retries,
                    num_min_delay_retries: h.num_min_delay_retries,
                    num_max_delay_retries: h.num_max_delay_retries,
                    backoff: match h.backoff_function {
                        SnsBackoffFunction::Arithmetic => SnsBackoff::Arithmetic,
                        SnsBackoffFunction::Exponential => SnsBackoff::Exponential,
                        SnsBackoffFunction::Geometric => SnsBackoff::Geometric,
                        SnsBackoffFunction::Linear => SnsBackoff::Linear,
                    },
                    max_receives_per_second: dp.throttle_policy.map(|t| t.max_receives_per_second),
                    ..SnsConfig::default()
                }
            }
        };
        SnsConfig {
            jitter: p.jitter.value(),
            ..base
        }
    }
}
