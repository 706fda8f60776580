//! Scenario files: types, parsing, validation.
//!
//! A scenario is a YAML file or a value built in code. Every way in
//! ([`Scenario::load`], [`Scenario::from_yaml_str`], [`Scenario::builder`]) runs the same
//! validation, and every error is located: `file:line:col path: message`.
//!
//! ```
//! use retrylab::scenario::Scenario;
//!
//! let yaml = r#"
//! version: 1
//! name: 429 with Retry-After
//! endpoints:
//!   api:
//!     script:
//!       - { status: 429, retry_after: 2 }
//!       - { status: 200 }
//! operation: { endpoint: api, method: POST, path: /orders }
//! client:
//!   exponential: { initial: 100ms, max_attempts: 3 }
//! expect:
//!   outcome: success
//!   gaps: [ { at_least: 2s } ]
//! "#;
//! let scenario = Scenario::from_yaml_str(yaml, "429.yaml").unwrap();
//! assert_eq!(scenario.expect.check_names(), ["outcome", "gaps"]);
//! ```
//!
//! The rest of this page is the format's reference (`docs/scenario-format.md` in the
//! repository): every key, its default, and whether this version runs it.
#![doc = ""]
#![doc = include_str!("../../docs/scenario-format.md")]

mod build;
pub(crate) mod load;
pub(crate) mod model;
pub(crate) mod run_limits;
pub(crate) mod to_policy;
pub(crate) mod validate;
pub(crate) mod yaml;

pub use build::builder::{CODE_FILE, ScenarioBuilder};
pub use build::vocabulary::{
    at_least, at_most, endpoint, expect, exponential, fail, fixed, get, linear, ms, post, secs,
    status, within,
};
pub use model::checks::{
    AmplificationSpec, AtMostSpec, ConsumerSpec, EffectsSpec, HeaderCheckSpec, IdempotentBy,
    InvalidRetryAfter, JitterCheckSpec, MaxRateSpec, Outcome, RetryAfterCheckSpec,
    RetryAfterHonour, RetryWavesSpec, StopReason,
};
pub use model::client::{
    AwsJitter, AwsParams, AwsSdk, ClientSpec, CommandClient, DEFAULT_MAX_ATTEMPTS,
    ExponentialParams, FixedParams, GrpcCode, GrpcConnectionBackoffParams, GrpcJitterModel,
    GrpcMethodConfig, GrpcMethodName, GrpcRetryParams, GrpcRetryPolicy, GrpcRetryThrottling,
    GrpcServiceConfig, HeaderUnit, Jitter, LinearParams, PolicySpec, ProcessPer, ProtoDuration,
    RetryAfterPolicy, RetryCondition, RocketmqParams, ServicenowExponentialParams,
    ServicenowHeaderParams, SnsBackoffFunction, SnsDeliveryPolicy, SnsEndpointType, SnsParams,
    SnsRequestPolicy, SnsRetryPolicy, SnsThrottlePolicy,
};
pub use model::connection::{ConnectAction, ConnectStepSpec, KeepAliveSpec};
pub use model::dedupe::{DedupeAnswerSpec, DedupeReplay, DedupeSpec};
pub use model::duration::{DurationError, DurationOrNone, Millis, OffsetMillis};
pub(crate) use model::endpoint::millitokens;
pub use model::endpoint::{
    EndpointKind, EndpointSpec, MatchSpec, Protocol, RouteSpec, ScriptScope, ThrottlePreset,
    WhenEmptySpec,
};
pub use model::expect::Expectations;
pub use model::grpc::{GrpcStatusSpec, PushbackSpec};
pub use model::headers::HeadersSpec;
pub use model::latency::{ExponentialLatencySpec, LatencySpec, LognormalSpec};
pub use model::limits::{LimitsSpec, RunLimits, ScenarioStatus, SeedRange};
pub use model::network::{FaultSpec, NetworkSpec, ScriptState};
pub use model::operation::{IdempotencyKeySpec, OperationSpec};
pub use model::retry_after::{DateFormat, RetryAfterSpec};
pub use model::scenario::Scenario;
#[cfg(feature = "schema")]
pub use model::scenario::json_schema;
pub use model::search::{SearchSpec, VarySpec};
pub use model::step::{CommitSpec, FailSpec, StepSpec, TimelineStep};
pub use model::turmoil::{BackendKind, LossSpec, TurmoilCrashSpec, TurmoilSpec, WindowSpec};
pub use model::values::{BoundSpec, CountSpec, DurationRange, Probability, ValueError};
pub use to_policy::PolicyError;
pub(crate) use yaml::error::visible;
pub use yaml::error::{Location, ScenarioError, ScenarioErrors};
pub use yaml::locations::SourceInfo;
