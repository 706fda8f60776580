//! The AWS SDK for Rust on the harness (feature `aws`): the SDK's HTTP client over the
//! simulated network, its clock and sleeps on virtual time, and one helper,
//! [`Env::aws_sdk_config`](crate::Env::aws_sdk_config), that builds its configuration
//! explicitly.
//!
//! | piece | what |
//! |---|---|
//! | [`SdkHttpClient`] | an `aws_smithy_runtime_api` `HttpClient` whose [`SdkConnector`] sends each request through `env.http_client()` of the call that sent it: one attempt on the trace, tagged with its call, the body streaming from the attempt; the SDK's connect and read timeouts on virtual time |
//! | `TokioSleep` | aws-smithy-async's `AsyncSleep` on tokio, which follows the paused clock |
//! | [`VirtualTimeSource`] | a `TimeSource` reading `env.now_system()` |
//! | [`AwsSdkConfig`] | an `SdkConfig` with all of the above, static credentials, a region, the scenario's endpoint, a pinned behaviour version, nothing read from the environment; and a retry partition of the run's own |
//!
//! A client under test gets its service client with
//! [`env.aws_sdk_client(label, build)`](crate::Env::aws_sdk_client): built once per run from
//! `env.aws_sdk_config()`, as a process builds it once, so the retry quota and the retry
//! strategy's state carry over from call to call and start afresh in every run; each of its
//! requests is an attempt of the call that sent it. See [`AwsSdkConfig`] for the one line
//! that gives a service client the configuration and the partition.
//!
//! The AWS crates need rustc 1.94.1 (the rest of retrylab builds with 1.85).
//!
//! What the adapter cannot do is listed in docs/architecture.md (section "The AWS SDK
//! adapter").

mod config;
mod connector;
mod per_run;
mod time;

pub use config::{ACCESS_KEY_ID, AwsSdkConfig, REGION, SECRET_ACCESS_KEY, behavior_version};
pub use connector::{SdkConnector, SdkHttpClient};
pub use per_run::{FASTRAND_SEED_LABEL, RETRY_PARTITION_NAME};
pub use time::VirtualTimeSource;
