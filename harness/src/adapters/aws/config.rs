//! The one helper: an SDK configuration built explicitly for a call of a run.

use aws_credential_types::Credentials;
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_smithy_async::rt::sleep::TokioSleep;
use aws_smithy_runtime::client::retries::RetryPartition;
use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_smithy_types::retry::RetryConfig;
use aws_types::SdkConfig;
use aws_types::region::Region;

use super::connector::SdkHttpClient;
use super::time::VirtualTimeSource;
use crate::Env;

/// The region of [`AwsSdkConfig`].
pub const REGION: &str = "us-east-1";
/// The access key id of [`AwsSdkConfig`]'s static credentials (requests are signed with them;
/// the endpoints do not check signatures).
pub const ACCESS_KEY_ID: &str = "AKIDRETRYLAB";
/// The secret key of [`AwsSdkConfig`]'s static credentials.
pub const SECRET_ACCESS_KEY: &str = "retrylab-secret-key";

/// The SDK's behaviour version the configuration pins (the newest of aws-smithy-runtime-api
/// 1.20): retries on by default, a connect timeout of 3.1 s, stalled-stream protection of
/// uploads on by default (turned off here).
pub fn behavior_version() -> BehaviorVersion {
    BehaviorVersion::v2026_01_12()
}

/// The AWS SDK for Rust configuration of a run, and its retry partition. Get one with
/// [`Env::aws_sdk_config`], or build a client from it once per run with
/// [`Env::aws_sdk_client`].
///
/// `sdk_config` holds, set explicitly and nothing read from the environment, profile files
/// or IMDS (no aws-config default chain):
/// - static credentials ([`ACCESS_KEY_ID`], [`SECRET_ACCESS_KEY`]) and region [`REGION`];
/// - `endpoint_url`: the scenario's operation endpoint, `http://<endpoint>`;
/// - the HTTP client, [`SdkHttpClient`]: each request is an attempt of the call that sent it;
/// - sleeps on tokio's paused clock (aws-smithy-async's `TokioSleep`) and the time source
///   [`VirtualTimeSource`];
/// - retry mode standard (`RetryConfig::standard()`: 3 attempts, backoff base 1 s, at most
///   20 s, full jitter); override it on the service's config builder (`.retry_config(..)`);
/// - stalled-stream protection off: it would run on virtual time (it reads the time source
///   and sleeps above), and `trickle` can script a body slow enough to trip it, but no
///   scenario tests it yet, so it stays off; a body that stalls is ended by the SDK's
///   operation timeouts, when set;
/// - the behaviour version [`behavior_version()`], so that a newer SDK's defaults do not
///   change a pinned verdict unnoticed.
///
/// `retry_partition` is the run's own retry quota and rate limiter (the SDK keeps its
/// default one in a process-wide static: a second run in the process would inherit the
/// first run's quota). The partition lives on each service's config builder, not on
/// `SdkConfig`, so a service client takes both in one line, in the closure of
/// [`Env::aws_sdk_client`]:
///
/// ```text
/// let sqs = env.aws_sdk_client("sqs", |aws| aws_sdk_sqs::Client::from_conf(
///     aws_sdk_sqs::config::Builder::from(&aws.sdk_config).retry_partition(aws.retry_partition).build(),
/// ));
/// ```
///
/// (`tests/src/clients/aws_sdk.rs` in the repository runs this against SQS scenarios.) The
/// first use in a run also seeds the generator the SDK draws its jitter and invocation ids
/// from, so that the same scenario and seed give the same trace.
///
/// ```
/// # use retrylab::prelude::*;
/// let scenario = Scenario::builder("two calls")
///     .endpoint("queue", endpoint().script([status(200)]))
///     .operation(post("queue", "/").calls(2))
///     .build()
///     .unwrap();
///
/// let report = scenario.run(|env: Env| async move {
///     let aws = env.aws_sdk_config();
///     assert_eq!(aws.sdk_config.endpoint_url(), Some("http://queue"));
///     assert_eq!(aws.sdk_config.region().map(|r| r.as_ref()), Some("us-east-1"));
///     assert!(aws.sdk_config.http_client().is_some() && aws.sdk_config.time_source().is_some());
///     Ok::<_, ()>(format!("{:?}", aws.retry_partition))
/// });
///
/// // Both calls see the same configuration. That they share one token bucket shows in
/// // what the quota allows across calls (`tests/tests/aws.rs`, 27 calls, 77 attempts).
/// let calls = &report.trace().calls;
/// assert_eq!(calls[0].result, calls[1].result);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AwsSdkConfig {
    /// The shared SDK configuration, for `<service>::config::Builder::from(&sdk_config)`.
    pub sdk_config: SdkConfig,
    /// The run's retry partition, for the service config builder's `.retry_partition(..)`.
    pub retry_partition: RetryPartition,
}

impl AwsSdkConfig {
    /// The configuration for `env`'s run, with `retry_partition`.
    pub(super) fn build(env: &Env, retry_partition: RetryPartition) -> AwsSdkConfig {
        let endpoint = env.operation().endpoint;
        let credentials = Credentials::new(
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
            None,
            None,
            "retrylab static credentials",
        );
        let sdk_config = SdkConfig::builder()
            .behavior_version(behavior_version())
            .region(Region::from_static(REGION))
            .credentials_provider(SharedCredentialsProvider::new(credentials))
            .endpoint_url(env.url(&endpoint))
            .http_client(SdkHttpClient::new())
            .sleep_impl(TokioSleep::new())
            .time_source(VirtualTimeSource::new(env))
            .retry_config(RetryConfig::standard())
            .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
            .build();
        AwsSdkConfig {
            sdk_config,
            retry_partition,
        }
    }
}
