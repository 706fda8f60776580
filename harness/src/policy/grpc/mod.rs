//! gRPC (docs/retry-behaviours.md#3-grpc): the connection backoff protocol,
//! `grpc_connection_backoff` ([`GrpcConnectionBackoff`]), and the A6 retry policy of a service
//! config, `grpc_retry` ([`GrpcRetry`]).
//!
//! gRPC is modelled over HTTP/1: the simulated server speaks HTTP/1, so the status travels as
//! a `grpc-status` response header ([`status`]) and pushback as a `grpc-retry-pushback-ms`
//! response header. Trailers are not modelled.

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
