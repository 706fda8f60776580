//! The AWS SDK for Rust (aws-sdk-sqs 1.119.0 on aws-smithy-runtime 1.16.2, aws-runtime
//! 1.10.2) on retrylab's `aws` adapter: each call sends one SQS `SendMessage` with a
//! service client built once per run with `env.aws_sdk_client`.
//!
//! The SDK decides everything: what is retried, the backoff, the retry quota. The adapter
//! gives it the network, virtual time, static credentials and the run's own retry partition;
//! the service client takes them in one line:
//!
//! ```
//! # use retrylab::prelude::*;
//! let scenario = Scenario::builder("one throttle, then sent")
//!     .endpoint("queue", endpoint().script([
//!         status(400).body(r#"{"__type":"ThrottlingException"}"#),
//!         status(200).body("{}"),
//!     ]))
//!     .operation(post("queue", "/"))
//!     .build()
//!     .unwrap();
//!
//! let report = scenario.run(|env: Env| async move {
//!     let sqs = env.aws_sdk_client("sqs", |aws| aws_sdk_sqs::Client::from_conf(
//!         aws_sdk_sqs::config::Builder::from(&aws.sdk_config).retry_partition(aws.retry_partition).build(),
//!     ));
//!     sqs.send_message().queue_url("http://queue/1/q").message_body("hi").send().await
//!         .map(|_| "sent")
//!         .map_err(|e| format!("{e:?}"))
//! });
//!
//! assert_eq!(report.trace().attempts.len(), 2); // the throttle is retried
//! ```
//!
//! | name | retry configuration |
//! |---|---|
//! | `aws_sdk_sqs` | the SDK's standard mode as configured: `RetryConfig::standard()`, 3 attempts, full jitter |
//! | `aws_sdk_sqs_no_jitter` | the same with `with_use_static_exponential_base(true)` (the jitter factor fixed at 1, as the SDK's own tests fix it), so delays are exact |
//! | `aws_sdk_sqs_100_attempts` | no jitter, 100 attempts: only the retry quota stops a call |

use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use retrylab::Env;

/// The queue every call sends to (the endpoint is the scenario's, whatever the URL says).
pub const QUEUE_URL: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/retrylab";

/// Sends one message with the run's SQS client on `retry` (and the adapter's
/// configuration): `Ok("sent")`, or the SDK's error in a few deterministic words
/// ([`describe`]).
pub async fn send_message(env: &Env, retry: RetryConfig) -> Result<&'static str, String> {
    let sqs = env.aws_sdk_client("sqs", |aws| {
        let config = aws_sdk_sqs::config::Builder::from(&aws.sdk_config)
            .retry_partition(aws.retry_partition)
            .retry_config(retry)
            .build();
        aws_sdk_sqs::Client::from_conf(config)
    });
    sqs.send_message()
        .queue_url(QUEUE_URL)
        .message_body("retrylab")
        .send()
        .await
        .map(|_| "sent")
        .map_err(|error| describe(&error))
}

/// The SDK's error as its kind and, for a service error, the error code and status: the
/// SDK's own `Debug` holds the whole response, request ids and all.
pub fn describe<E: ProvideErrorMetadata, R>(error: &SdkError<E, R>) -> String {
    match error {
        SdkError::ServiceError(service) => {
            let code = service.err().code().unwrap_or("no code");
            format!("service error {code}")
        }
        SdkError::DispatchFailure(failure) => {
            let kind = match failure.as_connector_error() {
                Some(e) if e.is_timeout() => "timeout",
                Some(e) if e.is_io() => "io",
                Some(e) if e.is_user() => "user",
                _ => "other",
            };
            format!("dispatch failure ({kind})")
        }
        SdkError::TimeoutError(_) => "operation timeout".to_owned(),
        SdkError::ResponseError(_) => "response error".to_owned(),
        SdkError::ConstructionFailure(_) => "construction failure".to_owned(),
        _ => "unknown error".to_owned(),
    }
}

/// `RetryConfig::standard()`: 3 attempts, backoff `b × min(1s × 2^(i-1), 20s)`, `b` uniform
/// in `[0, 1)`.
pub async fn standard(env: Env) -> Result<&'static str, String> {
    send_message(&env, RetryConfig::standard()).await
}

/// [`standard`] with the jitter factor fixed at 1.
pub async fn no_jitter(env: Env) -> Result<&'static str, String> {
    let retry = RetryConfig::standard().with_use_static_exponential_base(true);
    send_message(&env, retry).await
}

/// No jitter and 100 attempts per call: the retry quota is what stops a call.
pub async fn hundred_attempts(env: Env) -> Result<&'static str, String> {
    let retry = RetryConfig::standard()
        .with_use_static_exponential_base(true)
        .with_max_attempts(100);
    send_message(&env, retry).await
}
