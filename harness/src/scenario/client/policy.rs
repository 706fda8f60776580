//! From a scenario's `client:` (or `expect.conforms_to:`) to the [`Policy`] it names.
//!
//! The mapping lives with the spec, not with the run: the run's plan, the reference client
//! and the `conforms_to` check all need it, and `policy/` knows nothing of scenarios.

use std::time::Duration;

use super::RocketmqParams;
use super::SnsBackoffFunction;
use super::{AwsJitter, AwsParams, ClientSpec, Jitter, RetryAfterPolicy, RetryCondition};
use super::{GrpcConnectionBackoffParams, GrpcJitterModel, GrpcRetryParams};
use super::{HeaderUnit, ServicenowExponentialParams, ServicenowHeaderParams};
use super::{SnsEndpointType, SnsParams};
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::grpc::{A6Jitter, GrpcRetryConfig, RetryThrottling};
use crate::policy::rocketmq::RocketmqConfig;
use crate::policy::servicenow::{DelayUnit, ServicenowExponentialConfig, ServicenowHeaderConfig};
use crate::policy::sns::{SnsBackoff, SnsConfig};
use crate::policy::{
    ConfigError, ExponentialConfig, FibonacciConfig, FixedConfig, GrpcConnectionConfig,
    LinearConfig, NoRetryConfig, Policy, RetryAfterRule, RetryOn, RetryOnItem,
};
use crate::scenario::duration::Millis;

/// `max_attempts` when a generic policy's parameters leave it out.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

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
}

fn from_spec(spec: &ClientSpec) -> Result<Box<dyn Policy>, PolicyError> {
    // Each configuration is checked by the policy's own `validate` before it is built: the
    // policies know their domains, and nothing out of them may reach a run.
    let policy = match spec {
        ClientSpec::NoRetry => NoRetryConfig::default().into_policy(),
        ClientSpec::Fixed(p) => {
            let config = FixedConfig {
                max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                delay: p.delay.as_duration(),
                retry_after: retry_after(p.retry_after),
                retry_on: retry_on(&p.retry_on),
            };
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::Exponential(p) => {
            let config = ExponentialConfig {
                max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                initial: p.initial.as_duration(),
                multiplier: p.multiplier,
                max_delay: p.max_delay.as_duration(),
                jitter: p.jitter,
                retry_after: retry_after(p.retry_after),
                retry_on: retry_on(&p.retry_on),
            };
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::Linear(p) => {
            let config = LinearConfig {
                max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                initial: p.initial.as_duration(),
                step: p.step.as_duration(),
                max_delay: p.max_delay.as_duration(),
                jitter: p.jitter,
                retry_after: retry_after(p.retry_after),
                retry_on: retry_on(&p.retry_on),
            };
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::Fibonacci(p) => {
            let config = FibonacciConfig {
                max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                initial: p.initial.as_duration(),
                step: p.step.as_duration(),
                max_delay: p.max_delay.as_duration(),
                jitter: p.jitter,
                retry_after: retry_after(p.retry_after),
                retry_on: retry_on(&p.retry_on),
            };
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::AwsStandard(p) => aws(AwsMode::Standard, p)?,
        ClientSpec::AwsStandard21(p) => aws(AwsMode::Standard21, p)?,
        ClientSpec::AwsAdaptive(p) => aws(AwsMode::Adaptive, p)?,
        ClientSpec::SnsDelivery(p) => {
            let config = p.config();
            // AWS's presets are exempt from the limits SNS sets on custom HTTP/S policies.
            let validated = match p.endpoint_type {
                SnsEndpointType::Http => config.validate_custom_http(),
                SnsEndpointType::AwsManaged | SnsEndpointType::CustomerManaged => config.validate(),
            };
            validated.map_err(|e| PolicyError::Invalid {
                key: sns_key(e.field),
                message: e.message,
            })?;
            config.into_policy()
        }
        ClientSpec::ServicenowExponential(p) => {
            let config = p.config();
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::ServicenowHeader(p) => p.config().into_policy(),
        ClientSpec::RocketmqProducer(p) => {
            let config = p.config();
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
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
        ClientSpec::GrpcConnectionBackoff(p) => {
            let config = p.config();
            config.validate().map_err(invalid)?;
            config.into_policy()
        }
        ClientSpec::Custom(name) => return Err(PolicyError::Custom(name.clone())),
    };
    Ok(policy)
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

/// The AWS policy a scenario's `aws_*` parameters describe, validated.
fn aws(mode: AwsMode, p: &AwsParams) -> Result<Box<dyn Policy>, PolicyError> {
    let config = AwsConfig {
        mode,
        max_attempts: p.max_attempts,
        initial_tokens: p.initial_tokens,
        max_backoff: p.max_backoff.as_duration(),
        jitter: p.jitter,
        service: p.service.clone(),
        long_polling: p.long_polling,
        sdk: p.sdk,
    };
    config.validate().map_err(invalid)?;
    Ok(config.into_policy())
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

impl RocketmqParams {
    /// The `RocketMQ` producer policy of these parameters (`max_attempts` 3 when left out).
    ///
    /// ```
    /// use retrylab::scenario::RocketmqParams;
    /// use std::time::Duration;
    ///
    /// let config = RocketmqParams::default().config();
    /// assert_eq!((config.max_attempts, config.throttle_backoff(1)), (3, Duration::from_millis(20)));
    /// ```
    pub fn config(&self) -> RocketmqConfig {
        RocketmqConfig {
            initial_backoff: self.initial_backoff.as_duration(),
            multiplier: self.multiplier,
            max_backoff: self.max_backoff.as_duration(),
            throttle_codes: self.throttle_codes.clone(),
            max_attempts: self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
        }
    }

    /// The worst-case blocking time of one send, `max_attempts × attempt_timeout` plus the
    /// backoffs of a send throttled on every attempt; `None` without an `attempt_timeout`
    /// (a send may then block for ever). A scenario states it as
    /// `total_time: { at_most: ... }`.
    ///
    /// ```
    /// use retrylab::scenario::{Millis, RocketmqParams};
    ///
    /// let mut params = RocketmqParams::default();
    /// assert_eq!(params.worst_case_blocking_time(), None);
    /// params.attempt_timeout = Some(Millis::from_secs(2));
    /// assert_eq!(params.worst_case_blocking_time(), Some(Millis::from_ms(6060)));
    /// ```
    pub fn worst_case_blocking_time(&self) -> Option<Millis> {
        let timeout = self.attempt_timeout?.as_duration();
        let worst = self.config().worst_case_blocking_time(timeout);
        Some(Millis::from_ms(
            u64::try_from(worst.as_millis()).unwrap_or(u64::MAX),
        ))
    }
}

impl ServicenowExponentialParams {
    /// The `ServiceNow` exponential policy of these parameters.
    ///
    /// ```
    /// use retrylab::scenario::{Millis, ServicenowExponentialParams};
    /// use std::time::Duration;
    ///
    /// let mut params = ServicenowExponentialParams::default();
    /// params.base_delay = Millis::from_ms(400);
    /// assert_eq!(params.config().backoff_bound(3), Duration::from_millis(2800));
    /// ```
    pub fn config(&self) -> ServicenowExponentialConfig {
        ServicenowExponentialConfig {
            max_retries: self.max_retries,
            response_codes: self.response_codes.clone(),
            base_delay: self.base_delay.as_duration(),
            max_delay: self.max_delay.as_duration(),
            additional_delay_window: self.additional_delay_window.as_duration(),
        }
    }
}

impl ServicenowHeaderParams {
    /// The `ServiceNow` response-header policy of these parameters.
    ///
    /// ```
    /// use retrylab::policy::servicenow::DelayUnit;
    /// use retrylab::scenario::{HeaderUnit, ServicenowHeaderParams};
    ///
    /// let mut params = ServicenowHeaderParams::default();
    /// params.unit = HeaderUnit::Milliseconds;
    /// assert_eq!(params.config().unit, DelayUnit::Milliseconds);
    /// ```
    pub fn config(&self) -> ServicenowHeaderConfig {
        ServicenowHeaderConfig {
            max_retries: self.max_retries,
            response_codes: self.response_codes.clone(),
            header: self.header.clone(),
            unit: match self.unit {
                HeaderUnit::Seconds => DelayUnit::Seconds,
                HeaderUnit::Milliseconds => DelayUnit::Milliseconds,
            },
            additional_delay_window: self.additional_delay_window.as_duration(),
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

fn retry_after(r: RetryAfterPolicy) -> RetryAfterRule {
    match r {
        RetryAfterPolicy::Honour => RetryAfterRule::Honour,
        RetryAfterPolicy::Ignore => RetryAfterRule::Ignore,
    }
}

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
