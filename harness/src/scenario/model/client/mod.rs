//! Client policies: `client: { <policy>: { params } }`, also used by `expect.conforms_to`.
//!
//! One file per policy family, mirroring `policy/`. Every parameter struct carries the
//! defaults of the [client policy tables](../../../../../docs/scenario-format.md), and skips
//! defaulted values when serialized so a scenario written back stays short. Native documents
//! (`delivery_policy:` for SNS, `service_config:` for gRPC) keep the spelling of their owners
//! (camelCase), so a policy copied from AWS or a gRPC service config pastes in.

mod aws;
pub(crate) mod command;
mod defaults;
mod generic;
mod grpc;
mod read;
mod rocketmq;
mod servicenow;
mod sns;

use serde::Serialize;

pub use aws::{AwsJitter, AwsParams, AwsSdk};
pub use command::{CommandClient, ProcessPer};
pub use generic::{
    DEFAULT_MAX_ATTEMPTS, ExponentialParams, FixedParams, Jitter, LinearParams, RetryAfterPolicy,
    RetryCondition,
};
pub use grpc::{
    GrpcCode, GrpcConnectionBackoffParams, GrpcJitterModel, GrpcMethodConfig, GrpcMethodName,
    GrpcRetryParams, GrpcRetryPolicy, GrpcRetryThrottling, GrpcServiceConfig, ProtoDuration,
};
pub use rocketmq::RocketmqParams;
pub use servicenow::{HeaderUnit, ServicenowExponentialParams, ServicenowHeaderParams};
pub use sns::{
    SnsBackoffFunction, SnsDeliveryPolicy, SnsEndpointType, SnsParams, SnsRequestPolicy,
    SnsRetryPolicy, SnsThrottlePolicy,
};

use super::duration::Millis;

/// A client: a policy of the reference client, externally tagged (`client: no_retry`,
/// `client: { exponential: {...} }`), a client registered in Rust (`client: { custom: orders
/// }`), or a program (`client: { command: [...] }`, see [`CommandClient`]).
///
/// The same type is used for `expect.conforms_to` (see [`PolicySpec`]), which takes a policy
/// only.
///
/// ```
/// use retrylab::scenario::{ClientSpec, ExponentialParams, Jitter, Millis};
///
/// let c = ClientSpec::Exponential(
///     ExponentialParams::default().initial(Millis::from_ms(100)).jitter(Jitter::Full).max_attempts(4),
/// );
/// assert_eq!(c.name(), "exponential");
/// assert_eq!(c.max_attempts(), Some(4));
/// assert_eq!(ClientSpec::default(), ClientSpec::NoRetry);
/// ```
// Deserialize is written by hand (`read.rs`): a command is a mapping of its own keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
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
    /// `RocketMQ` / `ApsaraMQ` producer send retries.
    RocketmqProducer(RocketmqParams),
    /// `ServiceNow` cloud-request exponential backoff.
    ServicenowExponential(ServicenowExponentialParams),
    /// `ServiceNow` cloud-request response-header backoff.
    ServicenowHeader(ServicenowHeaderParams),
    /// A client registered in Rust under this name.
    Custom(String),
    /// A program run as the client, on the real backend.
    #[serde(untagged)]
    Command(CommandClient),
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
    /// The same policy with its jitter off, when it has a jitter that is on: its nominal
    /// schedule, which a client with its jitter silently off follows exactly (`conforms_to`
    /// flags such a client). `None` for a policy without jitter, or with it off.
    ///
    /// ```
    /// use retrylab::scenario::{AwsParams, ClientSpec, ExponentialParams, FixedParams, Jitter};
    ///
    /// let full = ClientSpec::Exponential(ExponentialParams::default().jitter(Jitter::Full));
    /// let plain = ClientSpec::Exponential(ExponentialParams::default().jitter(Jitter::None));
    /// assert_eq!(full.without_jitter(), Some(plain.clone()));
    /// assert_eq!(plain.without_jitter(), None);
    /// assert_eq!(ClientSpec::Fixed(FixedParams::default()).without_jitter(), None);
    /// assert!(ClientSpec::AwsStandard(AwsParams::default()).without_jitter().is_some());
    /// ```
    pub fn without_jitter(&self) -> Option<ClientSpec> {
        let mut plain = self.clone();
        let had_jitter = match &mut plain {
            ClientSpec::Exponential(p) => {
                std::mem::replace(&mut p.jitter, Jitter::None) != Jitter::None
            }
            ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => {
                std::mem::replace(&mut p.jitter, Jitter::None) != Jitter::None
            }
            ClientSpec::AwsStandard(p)
            | ClientSpec::AwsStandard21(p)
            | ClientSpec::AwsAdaptive(p) => {
                std::mem::replace(&mut p.jitter, AwsJitter::None) != AwsJitter::None
            }
            ClientSpec::SnsDelivery(p) => std::mem::take(&mut p.jitter).value() > 0.0,
            // The header's delay is the nominal schedule; the exponential strategy has none
            // (its multiplier is random too).
            ClientSpec::ServicenowHeader(p) => {
                !std::mem::replace(&mut p.additional_delay_window, Millis::ZERO).is_zero()
            }
            ClientSpec::GrpcConnectionBackoff(p) => std::mem::take(&mut p.jitter).value() > 0.0,
            ClientSpec::GrpcRetry(p) => {
                std::mem::replace(&mut p.jitter_model, GrpcJitterModel::None)
                    != GrpcJitterModel::None
            }
            _ => false,
        };
        had_jitter.then_some(plain)
    }

    /// Every policy name, as written in YAML, in the order of the format's table.
    ///
    /// ```
    /// use retrylab::scenario::ClientSpec;
    /// assert!(ClientSpec::names().any(|name| name == "aws_standard_2_1"));
    /// assert_eq!(ClientSpec::names().count(), 15);
    /// ```
    pub fn names() -> impl Iterator<Item = &'static str> {
        POLICIES.iter().map(|p| p.name)
    }

    /// Whether this version's reference client runs the policy named `name` (a `custom`
    /// client counts: it is the user's own).
    ///
    /// ```
    /// use retrylab::scenario::ClientSpec;
    /// assert!(ClientSpec::is_built("aws_adaptive"));
    /// assert!(ClientSpec::is_built("grpc_retry"));
    /// assert!(!ClientSpec::is_built("no_such_policy"));
    /// ```
    pub fn is_built(name: &str) -> bool {
        info(name).is_some_and(|p| p.built)
    }

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
            ClientSpec::Command(_) => "command",
        }
    }

    /// Whether this is the default, `no_retry`.
    pub fn is_no_retry(&self) -> bool {
        *self == ClientSpec::NoRetry
    }

    /// `max_attempts` as written, for the policies that take it (the generic, AWS,
    /// gRPC-connection and `RocketMQ` ones; the first attempt counts).
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
            ClientSpec::NoRetry | ClientSpec::Custom(_) | ClientSpec::Command(_) => None,
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
    /// `ServiceNow` `max_retries`) and so rejects `max_attempts`.
    ///
    /// ```
    /// use retrylab::scenario::ClientSpec;
    /// assert!(ClientSpec::has_native_count("grpc_retry"));
    /// assert!(!ClientSpec::has_native_count("exponential"));
    /// ```
    pub fn has_native_count(name: &str) -> bool {
        info(name).is_some_and(|p| p.native_count.is_some())
    }

    /// Where a policy with a native count keeps it, for error messages.
    pub(crate) fn native_count_key(name: &str) -> &'static str {
        info(name)
            .and_then(|p| p.native_count)
            .unwrap_or("max_retries")
    }
}

/// One row of the policy table.
struct PolicyInfo {
    /// The name as written in YAML.
    name: &'static str,
    /// Whether the reference client runs it in this version.
    built: bool,
    /// Where a policy with a native attempt count keeps it (it then rejects `max_attempts`).
    native_count: Option<&'static str>,
}

/// Every policy: the one list that names, "not supported yet" and native counts read.
/// `ClientSpec::name` must agree with it (a test checks).
const POLICIES: &[PolicyInfo] = &[
    policy("no_retry", true, None),
    policy("fixed", true, None),
    policy("exponential", true, None),
    policy("linear", true, None),
    policy("fibonacci", true, None),
    policy("aws_standard", true, None),
    policy("aws_standard_2_1", true, None),
    policy("aws_adaptive", true, None),
    policy(
        "sns_delivery",
        true,
        Some("delivery_policy.healthyRetryPolicy.numRetries"),
    ),
    policy(
        "grpc_retry",
        true,
        Some("service_config.retryPolicy.maxAttempts"),
    ),
    policy("grpc_connection_backoff", true, None),
    policy("rocketmq_producer", true, None),
    policy("servicenow_exponential", true, Some("max_retries")),
    policy("servicenow_header", true, Some("max_retries")),
    policy("custom", true, None),
];

const fn policy(name: &'static str, built: bool, native_count: Option<&'static str>) -> PolicyInfo {
    PolicyInfo {
        name,
        built,
        native_count,
    }
}

fn info(name: &str) -> Option<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_table_names_every_variant() {
        let specs = [
            ClientSpec::NoRetry,
            ClientSpec::Fixed(FixedParams::default()),
            ClientSpec::Exponential(ExponentialParams::default()),
            ClientSpec::Linear(LinearParams::default()),
            ClientSpec::Fibonacci(LinearParams::default()),
            ClientSpec::AwsStandard(AwsParams::default()),
            ClientSpec::AwsStandard21(AwsParams::default()),
            ClientSpec::AwsAdaptive(AwsParams::default()),
            ClientSpec::SnsDelivery(SnsParams::default()),
            ClientSpec::GrpcRetry(GrpcRetryParams {
                service_config: GrpcServiceConfig {
                    retry_policy: Some(GrpcRetryPolicy {
                        max_attempts: 3,
                        initial_backoff: ProtoDuration(Millis::from_ms(100)),
                        max_backoff: ProtoDuration(Millis::from_secs(1)),
                        backoff_multiplier: 2.0,
                        retryable_status_codes: vec![GrpcCode::Unavailable],
                    }),
                    ..GrpcServiceConfig::default()
                },
                jitter_model: GrpcJitterModel::default(),
                attempt_timeout: None,
            }),
            ClientSpec::GrpcConnectionBackoff(GrpcConnectionBackoffParams::default()),
            ClientSpec::RocketmqProducer(RocketmqParams::default()),
            ClientSpec::ServicenowExponential(ServicenowExponentialParams::default()),
            ClientSpec::ServicenowHeader(ServicenowHeaderParams::default()),
            ClientSpec::Custom("orders".into()),
        ];
        let names: Vec<&str> = specs.iter().map(ClientSpec::name).collect();
        assert_eq!(names, ClientSpec::names().collect::<Vec<_>>());
        for spec in &specs {
            assert_eq!(
                ClientSpec::is_built(spec.name()),
                spec.policy().is_ok() || spec.name() == "custom",
                "{}",
                spec.name()
            );
        }
    }
}
