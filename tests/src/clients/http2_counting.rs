//! `grpc_counts_refused_streams`: the reference client with the `grpc_retry` policy of
//! [`service_config`], except that it counts a stream the server refused (`REFUSED_STREAM`,
//! or above a GOAWAY's last stream id) as an attempt, and waits the policy's backoff after
//! it, where gRPC's A6 retries it transparently, at once and outside `maxAttempts`.
//!
//! `scenarios/http2/refused-stream-counted-caught.yaml` catches it: the refused stream
//! takes the last of its three attempts, so it gives up where the policy has one left.

use retrylab::Env;
use retrylab::client::ReferenceClient;
use retrylab::policy::GrpcRetryConfig;

/// The service config's retry policy, gRPC's defaults as the harness writes them: 3
/// attempts, backoff 0.1s doubling up to 1s, UNAVAILABLE retried, the current A6 jitter.
pub fn service_config() -> GrpcRetryConfig {
    GrpcRetryConfig::default()
}

/// The defect: every attempt counts, a refused stream too.
pub async fn counts_refused_streams(env: Env) -> Result<u16, String> {
    ReferenceClient::new(service_config().into_policy())
        .transparent_retries(false)
        .call(&env)
        .await
        .map_err(|e| e.to_string())
}
