//! gRPC (docs/retry-behaviours.md#3-grpc): the connection backoff protocol,
//! `grpc_connection_backoff` ([`GrpcConnectionBackoff`]), and the A6 retry policy of a service
//! config, `grpc_retry` ([`GrpcRetry`]).
//!
//! Both read the response metadata the reference client hands them: the head's fields, then
//! the trailers'. Real gRPC (`protocol: http2` endpoints with `grpc:` steps) sends the status
//! ([`status`]) and pushback (`grpc-retry-pushback-ms`) in trailers, or in the head of a
//! trailers-only answer; the HTTP/1 model writes them as response headers.

mod connection;
mod pushback;
mod retry;
pub mod status;
mod throttle;

#[cfg(test)]
mod tests;

pub use connection::{
    GrpcConnectionBackoff, GrpcConnectionConfig, INITIAL_BACKOFF, JITTER, MAX_BACKOFF,
    MIN_CONNECT_TIMEOUT, MULTIPLIER,
};
pub use pushback::PUSHBACK_HEADER;
pub use retry::{
    A6_JITTER, A6Jitter, GrpcRetry, GrpcRetryConfig, MAX_ATTEMPTS_CAP, PREVIOUS_ATTEMPTS_HEADER,
};
pub use throttle::RetryThrottling;
