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

mod bounds;
mod brackets;
mod builder;
mod client;
mod contradictions;
mod duration;
mod embedded;
mod endpoint;
mod epoch;
mod error;
mod expect;
pub(crate) mod file;
mod headers;
mod http;
mod latency;
mod limits;
mod locations;
mod model;
mod network;
mod operation;
pub(crate) mod parse;
mod parser_messages;
#[cfg(feature = "schema")]
mod schema;
mod search;
mod step;
mod suggest;
mod support;
mod syntax;
mod turmoil;
mod vacuous;
mod validate;
mod values;
mod vocabulary;

pub use bounds::{
    MAX_AFTER_BYTES, MAX_ATTEMPTS, MAX_BODY_BYTES, MAX_CALLS, MAX_CLIENTS, MAX_CODES,
    MAX_CONCURRENCY, MAX_DURATION, MAX_ENDPOINT_NAME_CHARS, MAX_ENDPOINTS, MAX_ERROR_CODE,
    MAX_FAULTS, MAX_HEADER_BYTES, MAX_HEADERS, MAX_KEPT_REQUEST_BYTES, MAX_RATE,
    MAX_REPORTED_ERRORS, MAX_RETRY_AFTER_SECONDS, MAX_ROUTES, MAX_SEARCH_CASES, MAX_SEEDS,
    MAX_STEPS, MAX_SWEEP_CALLS, MAX_TOLERANCE, MAX_WALL,
};
pub use builder::{CODE_FILE, ScenarioBuilder};
pub use client::{
    AwsJitter, AwsParams, AwsSdk, ClientSpec, DEFAULT_MAX_ATTEMPTS, ExponentialParams, FixedParams,
    GrpcCode, GrpcConnectionBackoffParams, GrpcJitterModel, GrpcMethodConfig, GrpcMethodName,
    GrpcRetryParams, GrpcRetryPolicy, GrpcRetryThrottling, GrpcServiceConfig, HeaderUnit, Jitter,
    LinearParams, PolicyError, PolicySpec, ProtoDuration, RetryAfterPolicy, RetryCondition,
    RocketmqParams, ServicenowExponentialParams, ServicenowHeaderParams, SnsBackoffFunction,
    SnsDeliveryPolicy, SnsEndpointType, SnsParams, SnsRequestPolicy, SnsRetryPolicy,
    SnsThrottlePolicy,
};
pub use duration::{DurationError, DurationOrNone, Millis, OffsetMillis};
pub(crate) use endpoint::millitokens;
pub use endpoint::{
    ConnectAction, ConnectStepSpec, DedupeAnswerSpec, DedupeReplay, DedupeSpec, EndpointKind,
    EndpointSpec, KeepAliveSpec, MatchSpec, RouteSpec, ScriptScope, ThrottlePreset, WhenEmptySpec,
};
pub(crate) use error::visible;
pub use error::{Location, ScenarioError, ScenarioErrors};
pub use expect::{
    AmplificationSpec, AtMostSpec, ConsumerSpec, EffectsSpec, Expectations, HeaderCheckSpec,
    IdempotentBy, InvalidRetryAfter, JitterCheckSpec, MaxRateSpec, Outcome, RetryAfterCheckSpec,
    RetryAfterHonour, RetryWavesSpec, StopReason,
};
pub use file::MAX_FILE_BYTES;
pub use headers::HeadersSpec;
pub use latency::{ExponentialLatencySpec, LatencySpec, LognormalSpec};
pub use limits::{LimitsSpec, RunLimits, ScenarioStatus, SeedRange};
pub use locations::SourceInfo;
pub use model::Scenario;
pub use network::{FaultSpec, NetworkSpec, ScriptState};
pub use operation::{IdempotencyKeySpec, OperationSpec};
#[cfg(feature = "schema")]
pub use schema::json_schema;
pub use search::{SearchSpec, VarySpec};
pub use step::{CommitSpec, DateFormat, FailSpec, RetryAfterSpec, StepSpec, TimelineStep};
pub use turmoil::{BackendKind, LossSpec, TurmoilCrashSpec, TurmoilSpec, WindowSpec};
pub use values::{BoundSpec, CountSpec, DurationRange, Probability, ValueError};
pub use vocabulary::{
    at_least, at_most, endpoint, expect, exponential, fail, fixed, get, linear, ms, post, secs,
    status, within,
};
