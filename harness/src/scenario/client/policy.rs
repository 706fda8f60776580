//! From a scenario's `client:` (or `expect.conforms_to:`) to the [`Policy`] it names.
//!
//! The mapping lives with the spec, not with the run: the run's plan, the reference client
//! and the `conforms_to` check all need it, and `policy/` knows nothing of scenarios.

use std::time::Duration;

use super::SnsBackoffFunction;
use super::{AwsJitter, AwsParams, ClientSpec, Jitter, RetryAfterPolicy, RetryCondition};
use super::{SnsEndpointType, SnsParams};
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::policy::sns::{SnsBackoff, SnsConfig};
use crate::policy::{
    ExponentialConfig, FibonacciConfig, FixedConfig, LinearConfig, NoRetryConfig, Policy,
    RetryAfterRule, RetryOn, RetryOnItem,
};

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
    /// A policy whose model is not built yet.
    #[error("the `{0}` policy is not supported yet")]
    NotSupported(&'static str),
}

impl ClientSpec {
    /// The policy this value describes, or why there is none (a `custom` client, or a
    /// policy not built yet; both are reported before a run starts).
    ///
    /// ```
    /// use retrylab::scenario::{ClientSpec, ExponentialParams};
    ///
    /// let policy = ClientSpec::Exponential(ExponentialParams::default()).policy().unwrap();
    /// assert_eq!(policy.name(), "exponential");
    /// assert_eq!(policy.max_attempts(), Some(3));
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
            _ => false,
        };
        had_jitter.then_some(plain)
    }
}

fn from_spec(spec: &ClientSpec) -> Result<Box<dyn Policy>, PolicyError> {
    let policy = match spec {
        ClientSpec::NoRetry => NoRetryConfig::default().into_policy(),
        ClientSpec::Fixed(p) => FixedConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            delay: p.delay.as_duration(),
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        ClientSpec::Exponential(p) => ExponentialConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: p.initial.as_duration(),
            multiplier: p.multiplier,
            max_delay: p.max_delay.as_duration(),
            jitter: p.jitter,
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        ClientSpec::Linear(p) => LinearConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: p.initial.as_duration(),
            step: p.step.as_duration(),
            max_delay: p.max_delay.as_duration(),
            jitter: p.jitter,
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        // Fibonacci's delays are `initial × fib(n)`: its `step` is not used.
        ClientSpec::Fibonacci(p) => FibonacciConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: p.initial.as_duration(),
            max_delay: p.max_delay.as_duration(),
            jitter: p.jitter,
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        ClientSpec::AwsStandard(p) => aws(AwsMode::Standard, p).into_policy(),
        ClientSpec::AwsStandard21(p) => aws(AwsMode::Standard21, p).into_policy(),
        ClientSpec::AwsAdaptive(p) => aws(AwsMode::Adaptive, p).into_policy(),
        ClientSpec::SnsDelivery(p) => p.config().into_policy(),
        ClientSpec::Custom(name) => return Err(PolicyError::Custom(name.clone())),
        other => return Err(PolicyError::NotSupported(other.name())),
    };
    Ok(policy)
}

/// The AWS policy a scenario's `aws_*` parameters describe.
fn aws(mode: AwsMode, p: &AwsParams) -> AwsConfig {
    AwsConfig {
        mode,
        max_attempts: p.max_attempts,
        initial_tokens: p.initial_tokens,
        max_backoff: p.max_backoff.as_duration(),
        jitter: p.jitter,
        service: p.service.clone(),
        long_polling: p.long_polling,
        sdk: p.sdk,
    }
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
