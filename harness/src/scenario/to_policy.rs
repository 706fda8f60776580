//! From a scenario's `client:` (or `expect.conforms_to:`) to the [`Policy`] it names.
//!
//! The mapping lives with the spec, not with the run: the run's plan, the reference client
//! and the `conforms_to` check all need it, and `policy/` knows nothing of scenarios.

use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::rocketmq::RocketmqConfig;
use crate::policy::servicenow::ServicenowExponentialConfig;
use crate::policy::{
    ConfigError, ExponentialConfig, FibonacciConfig, FixedConfig, GrpcConnectionConfig,
    LinearConfig, NoRetryConfig, Policy,
};
use crate::scenario::model::client::{ClientSpec, SnsEndpointType};

/// Why a `client:` value names no policy the harness can run.
///
/// ```
/// use retrylab::scenario::{ClientSpec, PolicyError};
///
/// let error = ClientSpec::Custom("orders".into()).policy().unwrap_err();
/// assert_eq!(error, PolicyError::Custom("orders".into()));
/// assert_eq!(error.to_string(), "`custom: orders` is a client registered in Rust, not a policy");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// `custom: <name>`: a client registered in Rust.
    #[error("`custom: {0}` is a client registered in Rust, not a policy")]
    Custom(String),
    /// `command: [...]`: a program run as the client.
    #[error("`command: [{0}, ...]` is a program run as the client, not a policy")]
    Command(String),
    /// A parameter out of the domain the policy's own validation accepts (such as
    /// `validate` of [`FibonacciConfig`]).
    #[error("`{key}`: {message}")]
    Invalid {
        /// The parameter's key under the policy: `jitter`, or
        /// `delivery_policy.healthyRetryPolicy.numRetries` for an SNS delivery policy.
        key: String,
        /// What is wrong with it.
        message: String,
    },
}

impl ClientSpec {
    /// The policy this value describes, or why there is none: a `custom` client, or
    /// parameters the policy's own validation refuses. Validation
    /// ([`Scenario::validate`](crate::scenario::Scenario::validate)) calls it, so a loaded
    /// scenario's built-in policy always builds.
    ///
    /// ```
    /// use retrylab::scenario::{ClientSpec, ExponentialParams, Jitter, LinearParams, PolicyError};
    ///
    /// let policy = ClientSpec::Exponential(ExponentialParams::default()).policy().unwrap();
    /// assert_eq!(policy.name(), "exponential");
    /// assert_eq!(policy.max_attempts(), Some(3));
    ///
    /// let decorrelated = ClientSpec::Fibonacci(LinearParams::default().jitter(Jitter::Decorrelated));
    /// let Err(PolicyError::Invalid { key, .. }) = decorrelated.policy() else { panic!() };
    /// assert_eq!(key, "jitter");
    /// ```
    pub fn policy(&self) -> Result<Box<dyn Policy>, PolicyError> {
        from_spec(self)
    }
}

fn from_spec(spec: &ClientSpec) -> Result<Box<dyn Policy>, PolicyError> {
    // Each configuration is checked by the policy's own `validate` before it is built: the
    // policies know their domains, and nothing out of them may reach a run.
    let policy = match spec {
        ClientSpec::NoRetry => NoRetryConfig::default().into_policy(),
        ClientSpec::Fixed(p) => validated(p.config())?,
        ClientSpec::Exponential(p) => validated(p.config())?,
        ClientSpec::Linear(p) => validated(p.linear_config())?,
        ClientSpec::Fibonacci(p) => validated(p.fibonacci_config())?,
        ClientSpec::AwsStandard(p) => validated(p.config(AwsMode::Standard))?,
        ClientSpec::AwsStandard21(p) => validated(p.config(AwsMode::Standard21))?,
        ClientSpec::AwsAdaptive(p) => validated(p.config(AwsMode::Adaptive))?,
        ClientSpec::SnsDelivery(p) => {
            let config = p.config();
            // AWS's presets are exempt from the limits SNS sets on custom HTTP/S policies.
            let checked = match p.endpoint_type {
                SnsEndpointType::Http => config.validate_custom_http(),
                SnsEndpointType::AwsManaged | SnsEndpointType::CustomerManaged => config.validate(),
            };
            checked.map_err(|e| PolicyError::Invalid {
                key: sns_key(e.field),
                message: e.message,
            })?;
            config.into_policy()
        }
        ClientSpec::ServicenowExponential(p) => validated(p.config())?,
        ClientSpec::ServicenowHeader(p) => p.config().into_policy(),
        ClientSpec::RocketmqProducer(p) => validated(p.config())?,
        ClientSpec::GrpcRetry(p) => {
            let config = p.config().ok_or_else(|| PolicyError::Invalid {
                key: "service_config".to_owned(),
                message: "the service config has no retry policy".to_owned(),
            })?;
            config.validate().map_err(|e| PolicyError::Invalid {
                key: match e.field {
                    "maxTokens" | "tokenRatio" => {
                        format!("service_config.retryThrottling.{}", e.field)
                    }
                    field => format!("service_config.retryPolicy.{field}"),
                },
                message: e.message,
            })?;
            config.into_policy()
        }
        ClientSpec::GrpcConnectionBackoff(p) => validated(p.config())?,
        ClientSpec::Custom(name) => return Err(PolicyError::Custom(name.clone())),
        ClientSpec::Command(c) => return Err(PolicyError::Command(c.program().to_owned())),
    };
    Ok(policy)
}

/// A policy's configuration, checked by its own `validate` before it is built.
trait Config {
    fn validate(&self) -> Result<(), ConfigError>;
    fn into_policy(self) -> Box<dyn Policy>;
}

/// Implements [`Config`] by the configuration's own methods of the same names.
macro_rules! config {
    ($($ty:ty),*) => {$(
        impl Config for $ty {
            fn validate(&self) -> Result<(), ConfigError> {
                <$ty>::validate(self)
            }
            fn into_policy(self) -> Box<dyn Policy> {
                <$ty>::into_policy(self)
            }
        }
    )*};
}

config!(
    FixedConfig,
    ExponentialConfig,
    LinearConfig,
    FibonacciConfig,
    AwsConfig,
    ServicenowExponentialConfig,
    RocketmqConfig,
    GrpcConnectionConfig
);

/// The policy of `config`, when its own validation accepts it.
fn validated(config: impl Config) -> Result<Box<dyn Policy>, PolicyError> {
    config.validate().map_err(invalid)?;
    Ok(config.into_policy())
}

/// A generic or AWS policy's refusal: its field names are the scenario's keys.
fn invalid(e: ConfigError) -> PolicyError {
    PolicyError::Invalid {
        key: e.field.to_owned(),
        message: e.message,
    }
}

/// Where the SNS policy's field (named as in AWS's delivery policy) is written under
/// `sns_delivery`.
fn sns_key(field: &str) -> String {
    match field {
        "jitter" => field.to_owned(),
        "maxReceivesPerSecond" => format!("delivery_policy.throttlePolicy.{field}"),
        "healthyRetryPolicy" => format!("delivery_policy.{field}"),
        _ => format!("delivery_policy.healthyRetryPolicy.{field}"),
    }
}
