//! From a scenario's `client:` (or `expect.conforms_to:`) to a [`Policy`].

use std::time::Duration;

use super::{
    ExponentialConfig, FibonacciConfig, FixedConfig, Jitter, LinearConfig, NoRetryConfig, Policy,
    RetryAfter, RetryOn, RetryOnItem,
};
use crate::scenario::{self, ClientSpec, RetryAfterPolicy, RetryCondition};

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
        ClientSpec::Custom(name) => {
            return Err(format!(
                "`custom: {name}` is a client registered in Rust, not a policy"
            ))
        }
        other => {
            return Err(format!(
                "the `{}` policy is not supported yet",
                policy_name(other)
            ))
        }
    };
    Ok(policy)
}

/// The `attempt_timeout` a `client:` value sets, if any.
pub fn attempt_timeout(spec: &ClientSpec) -> Option<Duration> {
    let timeout = match spec {
        ClientSpec::Fixed(p) => p.attempt_timeout,
        ClientSpec::Exponential(p) => p.attempt_timeout,
        ClientSpec::Linear(p) | ClientSpec::Fibonacci(p) => p.attempt_timeout,
        _ => None,
    };
    timeout.map(|t| t.as_duration())
}

/// The YAML key of a policy.
pub fn policy_name(spec: &ClientSpec) -> &'static str {
    match spec {
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
