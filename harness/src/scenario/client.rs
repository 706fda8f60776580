//! Client policies: `client: { <policy>: { params } }`, also used by `expect.conforms_to`.
//!
//! Every parameter struct carries the defaults of DESIGN's table of client policies, and
//! skips defaulted values when serialized so a scenario written back stays short. Native
//! documents (`delivery_policy:` for SNS, `service_config:` for gRPC) keep the spelling of
//! their owners (camelCase), so a policy copied from AWS or a gRPC service config pastes in.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::duration::Millis;
use super::values::{status_code, Probability};

/// Declares `fn name() -> T` and `fn is_name(&T) -> bool` for serde defaults and
/// `skip_serializing_if`.
macro_rules! defaults {
    ($($name:ident, $is:ident: $ty:ty = $value:expr;)*) => {
        $(
            fn $name() -> $ty {
                $value
            }
            #[allow(clippy::float_cmp)]
            fn $is(v: &$ty) -> bool {
                *v == $value
            }
        )*
    };
}

defaults! {
    ms_100, is_ms_100: Millis = Millis(100);
    s_1, is_s_1: Millis = Millis(1_000);
    s_20, is_s_20: Millis = Millis(20_000);
    s_60, is_s_60: Millis = Millis(60_000);
    s_120, is_s_120: Millis = Millis(120_000);
    ms_10, is_ms_10: Millis = Millis(10);
    ms_0, is_ms_0: Millis = Millis(0);
    two, is_two: f64 = 2.0;
    one_point_six, is_one_point_six: f64 = 1.6;
    jitter_full, is_jitter_full: Jitter = Jitter::Full;
    jitter_none, is_jitter_none: Jitter = Jitter::None;
    tokens_500, is_tokens_500: u32 = 500;
    three, is_three: u32 = 3;
    fraction_01, is_fraction_01: Probability = Probability::new(0.1).unwrap_or_default();
    fraction_02, is_fraction_02: Probability = Probability::new(0.2).unwrap_or_default();
    retry_on_default, is_retry_on_default: Vec<RetryCondition> = RetryCondition::defaults();
    throttle_codes_default, is_throttle_codes_default: Vec<i64> = vec![530, 42900, 215];
    codes_429, is_codes_429: Vec<u16> = vec![429];
    retry_after_header, is_retry_after_header: String = "Retry-After".to_string();
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// A client policy. Externally tagged: `client: no_retry`, `client: { exponential: {...} }`,
/// `client: { custom: orders }`.
///
/// The same type is used for `expect.conforms_to` (see [`PolicySpec`]).
///
/// ```
/// use retrylab::scenario::{ClientSpec, ExponentialParams, Jitter, Millis};
///
/// let c = ClientSpec::Exponential(ExponentialParams {
///     initial: Millis::from_ms(100),
///     jitter: Jitter::Full,
///     max_attempts: Some(4),
///     ..ExponentialParams::default()
/// });
/// assert_eq!(c.name(), "exponential");
/// assert_eq!(c.max_attempts(), Some(4));
/// assert_eq!(ClientSpec::default(), ClientSpec::NoRetry);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientSpec {
    /// One attempt, no retry.
    #[default]
    NoRetry,
    /// A fixed delay between attempts.
    Fixed(FixedParams),
    /// Exponential backoff with jitter.
    Exponential(ExponentialParams),
    /// A delay growing by a fixed step.
    Linear(LinearParams),
    /// Delays following the Fibonacci sequence.
    Fibonacci(LinearParams),
    /// AWS SDK standard retry mode (Retry Behavior 2.0).
    AwsStandard(AwsParams),
    /// AWS SDK standard retry mode 2.1.
    #[serde(rename = "aws_standard_2_1")]
    AwsStandard21(AwsParams),
    /// AWS SDK adaptive retry mode.
    AwsAdaptive(AwsParams),
    /// Amazon SNS delivery to an HTTP/S subscription.
    SnsDelivery(SnsParams),
    /// gRPC retry policy (A6).
    GrpcRetry(GrpcRetryParams),
    /// gRPC connection backoff.
    GrpcConnectionBackoff(GrpcConnectionBackoffParams),
    /// RocketMQ / ApsaraMQ producer send retries.
    RocketmqProducer(RocketmqParams),
    /// ServiceNow cloud-request exponential backoff.
    ServicenowExponential(ServicenowExponentialParams),
    /// ServiceNow cloud-request response-header backoff.
    ServicenowHeader(ServicenowHeaderParams),
    /// A client registered in Rust under this name.
    Custom(String),
}

/// A policy named by `expect.conforms_to`: the same shape as `client:`.
///
/// ```
/// use retrylab::scenario::{ClientSpec, Expectations, FixedParams, PolicySpec};
/// let envelope: PolicySpec = ClientSpec::Fixed(FixedParams::default());
/// let e = Expectations::default().conforms_to(envelope);
/// assert_eq!(e.check_names(), ["conforms_to"]);
/// ```
pub type PolicySpec = ClientSpec;

impl ClientSpec {
    /// Every policy name, as written in YAML.
    ///
    /// ```
    /// use retrylab::scenario::ClientSpec;
    /// assert!(ClientSpec::NAMES.contains(&"aws_standard_2_1"));
    /// ```
    pub const NAMES: &'static [&'static str] = &[
        "no_retry",
        "fixed",
        "exponential",
        "linear",
        "fibonacci",
        "aws_standard",
        "aws_standard_2_1",
        "aws_adaptive",
        "sns_delivery",
        "grpc_retry",
        "grpc_connection_backoff",
        "rocketmq_producer",
        "servicenow_exponential",
        "servicenow_header",
        "custom",
    ];

    /// The policy's name as written in YAML.
    pub fn name(&self) -> &'static str {
        match self {
            ClientSpec::NoRetry => "no_retry",
            ClientSpec::Fixed(_) => "fixed",
            ClientSpec::Exponential(_) => "exponential",
            ClientSpec::Linear(_) => "linear",
            ClientSpec::Fibonacci(_) => "fibonacci",
            ClientSpec::AwsStandard(_) => "aws_standard",
            ClientSpec::AwsStandard21(_) => "aws_standard_2_1",
            ClientSpec::AwsAdaptive(_) => "aws_adaptive",
            ClientSpec::SnsDelivery(_) => "sns_delivery",
            ClientSpec::GrpcRetry(_) => "grpc_retry",
            ClientSpec::GrpcConnectionBackoff(_) => "grpc_connection_backoff",
            ClientSpec::RocketmqProducer(_) => "rocketmq_producer",
            ClientSpec::ServicenowExponential(_) => "servicenow_exponential",
            ClientSpec::ServicenowHeader(_) => "servicenow_header",
            ClientSpec::Custom(_) => "custom",
        }
    }

    /// Whether this is the default, `no_retry`.
    pub fn is_no_retry(&self) -> bool {
        *self == ClientSpec::NoRetry
    }

    /// `max_attempts` as written, for the policies that take it (the generic, AWS,
    /// gRPC-connection and RocketMQ ones; the first attempt counts).
    pub fn max_attempts(&self) -> Option<u32> {
        match self {
            ClientSpec::Fixed(p) => p.max_attempts,
            ClientSpec::Exponential(p) => p.max_attempts,
            ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => p.max_attempts,
            ClientSpec::AwsStandard(p)
            | ClientSpec::AwsStandard21(p)
            | ClientSpec::AwsAdaptive(p) => p.max_attempts,
            ClientSpec::GrpcConnectionBackoff(p) => p.max_attempts,
            ClientSpec::RocketmqProducer(p) => p.max_attempts,
            _ => None,
        }
    }

    /// The per-attempt timeout, when set.
    pub fn attempt_timeout(&self) -> Option<Millis> {
        match self {
            ClientSpec::NoRetry | ClientSpec::Custom(_) => None,
            ClientSpec::Fixed(p) => p.attempt_timeout,
            ClientSpec::Exponential(p) => p.attempt_timeout,
            ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => p.attempt_timeout,
            ClientSpec::AwsStandard(p)
            | ClientSpec::AwsStandard21(p)
            | ClientSpec::AwsAdaptive(p) => p.attempt_timeout,
            ClientSpec::SnsDelivery(p) => p.attempt_timeout,
            ClientSpec::GrpcRetry(p) => p.attempt_timeout,
            ClientSpec::GrpcConnectionBackoff(p) => p.attempt_timeout,
            ClientSpec::RocketmqProducer(p) => p.attempt_timeout,
            ClientSpec::ServicenowExponential(p) => p.attempt_timeout,
            ClientSpec::ServicenowHeader(p) => p.attempt_timeout,
        }
    }

    /// Whether the policy counts attempts natively (SNS `numRetries`, gRPC `maxAttempts`,
    /// ServiceNow `max_retries`) and so rejects `max_attempts`.
    ///
    /// ```
    /// use retrylab::scenario::ClientSpec;
    /// assert!(ClientSpec::has_native_count("grpc_retry"));
    /// assert!(!ClientSpec::has_native_count("exponential"));
    /// ```
    pub fn has_native_count(name: &str) -> bool {
        matches!(
            name,
            "sns_delivery" | "grpc_retry" | "servicenow_exponential" | "servicenow_header"
        )
    }

    /// Where a policy with a native count keeps it, for error messages.
    pub(crate) fn native_count_key(name: &str) -> &'static str {
        match name {
            "sns_delivery" => "delivery_policy.healthyRetryPolicy.numRetries",
            "grpc_retry" => "service_config.retryPolicy.maxAttempts",
            _ => "max_retries",
        }
    }
}

/// Jitter applied to a computed delay.
///
/// ```
/// use retrylab::scenario::Jitter;
/// assert_eq!(Jitter::default(), Jitter::Full);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// The computed delay exactly.
    None,
    /// Uniform in `[0, delay]`.
    #[default]
    Full,
    /// `delay/2` plus uniform in `[0, delay/2]`.
    Equal,
    /// Uniform in `[initial, previous * 3]`, capped.
    Decorrelated,
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
pub struct FixedParams {
    /// The delay (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub delay: Millis,
    /// Whether to wait for `Retry-After` (default `honour`).
    #[serde(default, skip_serializing_if = "RetryAfterPolicy::is_honour")]
    pub retry_after: RetryAfterPolicy,
    /// What is retried (default `[5xx, 429, transport, timeout]`).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// What is retried (default `[5xx, 429, transport, timeout]`).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// Jitter (default `none`: these schedules are usually written to be exact).
    #[serde(default = "jitter_none", skip_serializing_if = "is_jitter_none")]
    pub jitter: Jitter,
    /// Whether to wait for `Retry-After` (default `honour`).
    #[serde(default, skip_serializing_if = "RetryAfterPolicy::is_honour")]
    pub retry_after: RetryAfterPolicy,
    /// What is retried (default `[5xx, 429, transport, timeout]`).
    #[serde(
        default = "retry_on_default",
        skip_serializing_if = "is_retry_on_default"
    )]
    pub retry_on: Vec<RetryCondition>,
    /// Attempts in all, the first included (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// `aws_standard`, `aws_standard_2_1`, `aws_adaptive`.
///
/// ```
/// use retrylab::scenario::{AwsJitter, AwsParams, AwsSdk};
///
/// let p = AwsParams::default();
/// assert_eq!((p.initial_tokens, p.jitter, p.sdk), (500, AwsJitter::Random, AwsSdk::Botocore));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AwsParams {
    /// Attempts in all, the first included (default 3; 2.1's DynamoDB rule: 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Retry quota bucket size (default 500).
    #[serde(default = "tokens_500", skip_serializing_if = "is_tokens_500")]
    pub initial_tokens: u32,
    /// MAX_BACKOFF (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub max_backoff: Millis,
    /// `random` (default) or `none` (fixes b = 1, as the SDK test suites do).
    #[serde(default, skip_serializing_if = "AwsJitter::is_random")]
    pub jitter: AwsJitter,
    /// The service, for 2.1's per-service rules (`dynamodb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Whether the operation long-polls (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub long_polling: bool,
    /// Which SDK's reading of 2.0 to follow (default `botocore`).
    #[serde(default, skip_serializing_if = "AwsSdk::is_botocore")]
    pub sdk: AwsSdk,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for AwsParams {
    fn default() -> Self {
        AwsParams {
            max_attempts: None,
            initial_tokens: tokens_500(),
            max_backoff: s_20(),
            jitter: AwsJitter::Random,
            service: None,
            long_polling: false,
            sdk: AwsSdk::Botocore,
            attempt_timeout: None,
        }
    }
}

/// AWS backoff jitter.
///
/// ```
/// use retrylab::scenario::AwsJitter;
/// assert_eq!(AwsJitter::default(), AwsJitter::Random);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AwsJitter {
    /// `b` uniform in `[0, 1)`.
    #[default]
    Random,
    /// `b = 1`.
    None,
}

impl AwsJitter {
    fn is_random(&self) -> bool {
        *self == AwsJitter::Random
    }
}

/// Which SDK's reading of Retry Behavior 2.0 to follow.
///
/// ```
/// use retrylab::scenario::AwsSdk;
/// assert_eq!(AwsSdk::default(), AwsSdk::Botocore);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AwsSdk {
    /// botocore: a bare 5xx costs 5; `x-amz-retry-after` ignored.
    #[default]
    Botocore,
    /// smithy-rs: a bare 5xx costs 10; `x-amz-retry-after` honoured.
    SmithyRs,
}

impl AwsSdk {
    fn is_botocore(&self) -> bool {
        *self == AwsSdk::Botocore
    }
}

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
pub struct SnsParams {
    /// The subscription's delivery policy, as AWS writes it (HTTP/S endpoints only;
    /// default: SNS's default policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// Which SNS policy applies.
///
/// ```
/// use retrylab::scenario::SnsEndpointType;
/// assert_eq!(SnsEndpointType::default(), SnsEndpointType::Http);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
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
pub struct SnsRequestPolicy {
    /// `Content-Type` of deliveries (default `text/plain; charset=UTF-8`).
    pub header_content_type: String,
}

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
pub enum GrpcJitterModel {
    /// `min(initial * mult^(n-1), max) * uniform(0.8, 1.2)`.
    #[default]
    #[allow(non_camel_case_types)]
    #[serde(rename = "a6_2024")]
    A6_2024,
    /// `uniform(0, min(initial * mult^(n-1), max))`.
    A6Legacy,
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
pub struct GrpcRetryPolicy {
    /// Attempts in all, at least 2 (values above 5 are treated as 5).
    pub max_attempts: u32,
    /// Backoff before the first retry, such as `0.1s`.
    pub initial_backoff: ProtoDuration,
    /// Cap on the backoff.
    pub max_backoff: ProtoDuration,
    /// Growth per retry, above 0.
    pub backoff_multiplier: f64,
    /// Status codes that are retried, at least one.
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
pub struct GrpcRetryThrottling {
    /// Bucket size, in (0, 1000].
    pub max_tokens: f64,
    /// Tokens added per success, above 0 (3 decimals).
    pub token_ratio: f64,
}

/// A protobuf JSON duration: decimal seconds with an `s` suffix (`0.1s`, `1s`), in whole
/// milliseconds.
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
                v.parse::<Millis>().map(ProtoDuration).map_err(E::custom)
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
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        super::schema::string_pattern(r"^[0-9]+(\.[0-9]{1,3})?s$", "seconds, such as `0.1s`")
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

    const NAMES: [&'static str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];

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
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        super::schema::string_enum(&GrpcCode::NAMES)
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
pub struct GrpcConnectionBackoffParams {
    /// INITIAL_BACKOFF (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub initial_backoff: Millis,
    /// MULTIPLIER (default 1.6).
    #[serde(default = "one_point_six", skip_serializing_if = "is_one_point_six")]
    pub multiplier: f64,
    /// JITTER as a fraction (default 0.2).
    #[serde(default = "fraction_02", skip_serializing_if = "is_fraction_02")]
    pub jitter: Probability,
    /// MAX_BACKOFF (default 120s).
    #[serde(default = "s_120", skip_serializing_if = "is_s_120")]
    pub max_backoff: Millis,
    /// MIN_CONNECT_TIMEOUT (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub min_connect_timeout: Millis,
    /// Connect attempts in all (default: unbounded, stopped by the scenario's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// `rocketmq_producer`.
///
/// ```
/// use retrylab::scenario::RocketmqParams;
/// assert_eq!(RocketmqParams::default().throttle_codes, [530, 42900, 215]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RocketmqParams {
    /// Backoff after the first throttle (default 10ms).
    #[serde(default = "ms_10", skip_serializing_if = "is_ms_10")]
    pub initial_backoff: Millis,
    /// Growth per throttle (default 2).
    #[serde(default = "two", skip_serializing_if = "is_two")]
    pub multiplier: f64,
    /// Cap (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub max_backoff: Millis,
    /// Error codes that mean "throttled" (default `[530, 42900, 215]`).
    #[serde(
        default = "throttle_codes_default",
        skip_serializing_if = "is_throttle_codes_default"
    )]
    pub throttle_codes: Vec<i64>,
    /// Send attempts in all, the first included (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for RocketmqParams {
    fn default() -> Self {
        RocketmqParams {
            initial_backoff: ms_10(),
            multiplier: two(),
            max_backoff: s_1(),
            throttle_codes: throttle_codes_default(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

/// `servicenow_exponential`.
///
/// ```
/// use retrylab::scenario::{Millis, ServicenowExponentialParams};
/// assert_eq!(ServicenowExponentialParams::default().base_delay, Millis::from_secs(1));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ServicenowExponentialParams {
    /// Retries after the first attempt (default 3).
    #[serde(default = "three", skip_serializing_if = "is_three")]
    pub max_retries: u32,
    /// Statuses that are retried (default `[429]`).
    #[serde(
        default = "codes_429",
        deserialize_with = "status_code::list",
        skip_serializing_if = "is_codes_429"
    )]
    pub response_codes: Vec<u16>,
    /// Base delay (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub base_delay: Millis,
    /// Cap before the additional window (default 60s).
    #[serde(default = "s_60", skip_serializing_if = "is_s_60")]
    pub max_delay: Millis,
    /// Upper bound of the uniform delay added to each (default 0).
    #[serde(default = "ms_0", skip_serializing_if = "is_ms_0")]
    pub additional_delay_window: Millis,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for ServicenowExponentialParams {
    fn default() -> Self {
        ServicenowExponentialParams {
            max_retries: three(),
            response_codes: codes_429(),
            base_delay: s_1(),
            max_delay: s_60(),
            additional_delay_window: ms_0(),
            attempt_timeout: None,
        }
    }
}

/// `servicenow_header`.
///
/// ```
/// use retrylab::scenario::{HeaderUnit, ServicenowHeaderParams};
/// let p = ServicenowHeaderParams::default();
/// assert_eq!((p.header.as_str(), p.unit), ("Retry-After", HeaderUnit::Seconds));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ServicenowHeaderParams {
    /// Retries after the first attempt (default 3).
    #[serde(default = "three", skip_serializing_if = "is_three")]
    pub max_retries: u32,
    /// Statuses that are retried (default `[429]`).
    #[serde(
        default = "codes_429",
        deserialize_with = "status_code::list",
        skip_serializing_if = "is_codes_429"
    )]
    pub response_codes: Vec<u16>,
    /// The header holding the delay (default `Retry-After`).
    #[serde(
        default = "retry_after_header",
        skip_serializing_if = "is_retry_after_header"
    )]
    pub header: String,
    /// The header's unit (default `seconds`).
    #[serde(default, skip_serializing_if = "HeaderUnit::is_seconds")]
    pub unit: HeaderUnit,
    /// Upper bound of the uniform delay added to each (default 0).
    #[serde(default = "ms_0", skip_serializing_if = "is_ms_0")]
    pub additional_delay_window: Millis,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for ServicenowHeaderParams {
    fn default() -> Self {
        ServicenowHeaderParams {
            max_retries: three(),
            response_codes: codes_429(),
            header: retry_after_header(),
            unit: HeaderUnit::Seconds,
            additional_delay_window: ms_0(),
            attempt_timeout: None,
        }
    }
}

/// The unit of a delay read from a header.
///
/// ```
/// use retrylab::scenario::HeaderUnit;
/// assert_eq!(HeaderUnit::default(), HeaderUnit::Seconds);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HeaderUnit {
    /// Seconds (x1000 ms).
    #[default]
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

impl HeaderUnit {
    fn is_seconds(&self) -> bool {
        *self == HeaderUnit::Seconds
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for RetryCondition {
    fn schema_name() -> String {
        "RetryCondition".to_string()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        super::schema::from_json(serde_json::json!({
            "anyOf": [
                { "type": "integer", "minimum": 100, "maximum": 599 },
                { "type": "string", "pattern": "^[1-5]xx$" },
                { "enum": ["transport", "timeout"] }
            ]
        }))
    }
}
