//! From a scenario's `client:` (or `expect.conforms_to:`) to a [`Policy`].

use std::time::Duration;

use super::aws::{AwsConfig, AwsJitter, AwsMode, AwsSdk};
use super::sns::{SnsBackoff, SnsConfig};
use super::{
    ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig, NoRetryConfig, Policy,
    RetryAfter, RetryOn, RetryOnItem,
};
use crate::scenario::{
    self, AwsParams, ClientSpec, RetryAfterPolicy, RetryCondition, SnsBackoffFunction,
    SnsEndpointType, SnsParams,
};

/// `max_attempts` when a generic policy's parameters leave it out (DESIGN section 7).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// The policy a `client:` value describes, or why there is none (a `custom` client, or a
/// policy not built yet — both are reported before a run starts).
///
/// ```
/// use retrylab::policy::from_spec;
/// use retrylab::scenario::{ClientSpec, ExponentialParams};
///
/// let policy = from_spec(&ClientSpec::Exponential(ExponentialParams::default())).unwrap();
/// assert_eq!(policy.name(), "exponential");
/// assert_eq!(policy.max_attempts(), Some(3));
/// ```
pub fn from_spec(spec: &ClientSpec) -> Result<Box<dyn Policy>, String> {
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
            jitter: jitter(p.jitter),
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        ClientSpec::Linear(p) => LinearConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: p.initial.as_duration(),
            step: p.step.as_duration(),
            max_delay: p.max_delay.as_duration(),
            jitter: jitter(p.jitter),
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        // Fibonacci's delays are `initial × fib(n)`: its `step` is not used.
        ClientSpec::Fibonacci(p) => FibonacciConfig {
            max_attempts: p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            initial: p.initial.as_duration(),
            max_delay: p.max_delay.as_duration(),
            jitter: jitter(p.jitter),
            retry_after: retry_after(p.retry_after),
            retry_on: retry_on(&p.retry_on),
        }
        .into_policy(),
        ClientSpec::AwsStandard(p) => aws(AwsMode::Standard, p).into_policy(),
        ClientSpec::AwsStandard21(p) => aws(AwsMode::Standard21, p).into_policy(),
        ClientSpec::AwsAdaptive(p) => aws(AwsMode::Adaptive, p).into_policy(),
        ClientSpec::SnsDelivery(p) => sns_config(p).into_policy(),
        ClientSpec::Custom(name) => {
            return Err(format!(
                "`custom: {name}` is a client registered in Rust, not a policy"
            ))
        }
        other => {
            return Err(format!(
                "the `{}` policy is not supported yet",
                other.name()
            ))
        }
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
        jitter: match p.jitter {
            scenario::AwsJitter::Random => AwsJitter::Random,
            scenario::AwsJitter::None => AwsJitter::None,
        },
        service: p.service.clone(),
        long_polling: p.long_polling,
        sdk: match p.sdk {
            scenario::AwsSdk::Botocore => AwsSdk::Botocore,
            scenario::AwsSdk::SmithyRs => AwsSdk::SmithyRs,
        },
    }
}

/// The SNS policy of `sns_delivery` parameters: a preset for `aws_managed` and
/// `customer_managed`, else the `healthyRetryPolicy` (SNS's default when absent) and the
/// `throttlePolicy` of `delivery_policy`.
///
/// ```
/// use retrylab::policy::sns_config;
/// use retrylab::scenario::{SnsEndpointType, SnsParams};
///
/// let preset = sns_config(&SnsParams { endpoint_type: SnsEndpointType::CustomerManaged, ..Default::default() });
/// assert_eq!(preset.num_retries, 50);
/// assert_eq!(sns_config(&SnsParams::default()).num_retries, 3);
/// ```
pub fn sns_config(p: &SnsParams) -> SnsConfig {
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

fn jitter(j: scenario::Jitter) -> Jitter {
    match j {
        scenario::Jitter::None => Jitter::None,
        scenario::Jitter::Full => Jitter::Full,
        scenario::Jitter::Equal => Jitter::Equal,
        scenario::Jitter::Decorrelated => Jitter::Decorrelated,
    }
}

fn retry_after(r: RetryAfterPolicy) -> RetryAfter {
    match r {
        RetryAfterPolicy::Honour => RetryAfter::Honour,
        RetryAfterPolicy::Ignore => RetryAfter::Ignore,
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
