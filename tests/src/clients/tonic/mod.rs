//! [tonic](https://docs.rs/tonic/0.14.9) clients of the test service
//! ([`echo`]) on `env.tonic_channel()`, under three retry loops: a hand-written one that
//! honours gRFC A6's pushback, tower's `retry::Retry` with a `Policy`, and backon with an
//! `.adjust` that reads the pushback (feature `tonic`).
//!
//! Each call sends `SayRequest { text: "hi" }` with a 2s deadline (`grpc-timeout`), and
//! classifies the answer by its `tonic::Code`: `UNAVAILABLE` is retried, anything else ends
//! the call. tonic reads the status from the trailers, or from the head of a trailers-only
//! answer, and keeps the other fields of either in `Status::metadata`, where the pushback is.

pub mod echo;

use std::time::Duration;

use ::backon::{ExponentialBuilder, Retryable};
use ::tower::retry::{Policy, Retry};
use ::tower::{Service, ServiceExt};
use retrylab::Env;
use tonic::metadata::MetadataValue;
use tonic::{Code, Request, Status};

use echo::{EchoClient, SayRequest};

/// The deadline each attempt sends as `grpc-timeout`.
const DEADLINE: Duration = Duration::from_secs(2);

/// A request for attempt `n` (from 1): the deadline, and from the second attempt on the
/// `grpc-previous-rpc-attempts` gRFC A6 asks a retrying client to send.
fn request(n: u32) -> Request<SayRequest> {
    let mut request = Request::new(SayRequest {
        text: "hi".to_owned(),
    });
    request.set_timeout(DEADLINE);
    if n > 1 {
        request
            .metadata_mut()
            .insert("grpc-previous-rpc-attempts", MetadataValue::from(n - 1));
    }
    request
}

/// The server's pushback in a failed call's status: `grpc-retry-pushback-ms` as a whole
/// number of milliseconds, `None` when absent or malformed.
fn pushback(status: &Status) -> Option<Duration> {
    let value = status.metadata().get("grpc-retry-pushback-ms")?;
    let ms: u64 = value.to_str().ok()?.parse().ok()?;
    Some(Duration::from_millis(ms))
}

/// What a call returns: the reply's text, or the status code that ended it.
fn outcome(result: Result<tonic::Response<echo::SayResponse>, Status>) -> Result<String, String> {
    match result {
        Ok(response) => Ok(response.into_inner().text),
        Err(status) => Err(format!("{:?}", status.code())),
    }
}

/// A hand-written loop: up to 4 attempts; after `UNAVAILABLE` it waits the server's
/// pushback when there is one, else 100ms doubling, and sends `grpc-previous-rpc-attempts`.
pub async fn retry_loop(env: Env) -> Result<String, String> {
    let mut client = EchoClient::new(env.tonic_channel());
    let mut backoff = Duration::from_millis(100);
    let mut n = 1;
    loop {
        let result = client.say(request(n)).await;
        let status = match &result {
            Err(status) if status.code() == Code::Unavailable && n < 4 => status,
            _ => return outcome(result),
        };
        let delay = pushback(status).unwrap_or(backoff);
        backoff *= 2;
        n += 1;
        tokio::time::sleep(delay).await;
    }
}

/// tower's `Retry` around a service that makes one call: the [`UnavailablePolicy`] below
/// retries `UNAVAILABLE` 3 times, 100ms apart.
pub async fn tower_retry(env: Env) -> Result<String, String> {
    let client = EchoClient::new(env.tonic_channel());
    let service = ::tower::service_fn(move |n: u32| {
        let mut client = client.clone();
        async move { client.say(request(n)).await }
    });
    let mut retry = Retry::new(UnavailablePolicy { retries_left: 3 }, service);
    let result = match retry.ready().await {
        Ok(ready) => ready.call(1).await,
        Err(status) => Err(status),
    };
    outcome(result)
}

/// A tower `Policy` as its docs describe one: it is handed each result and returns a future
/// that delays the retry, or `None`. Its request is the attempt's number, so a retry
/// sends `grpc-previous-rpc-attempts`; it reads no pushback.
#[derive(Clone, Debug)]
pub struct UnavailablePolicy {
    retries_left: u32,
}

impl<T> Policy<u32, T, Status> for UnavailablePolicy {
    type Future = tokio::time::Sleep;

    fn retry(&mut self, n: &mut u32, result: &mut Result<T, Status>) -> Option<Self::Future> {
        match result {
            Err(status) if status.code() == Code::Unavailable && self.retries_left > 0 => {
                self.retries_left -= 1;
                *n += 1;
                Some(tokio::time::sleep(Duration::from_millis(100)))
            }
            _ => None,
        }
    }

    fn clone_request(&mut self, n: &u32) -> Option<u32> {
        Some(*n)
    }
}

/// backon's `ExponentialBuilder::default()` (1s, doubling, 3 retries) with an `.adjust`
/// that waits the server's pushback instead when there is one, as its docs do with
/// `Retry-After`.
pub async fn backon(env: Env) -> Result<String, String> {
    let client = EchoClient::new(env.tonic_channel());
    let attempts = std::sync::atomic::AtomicU32::new(0);
    let call = || {
        let mut client = client.clone();
        let n = attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        async move { client.say(request(n)).await }
    };
    let result = call
        .retry(ExponentialBuilder::default())
        .when(|status: &Status| status.code() == Code::Unavailable)
        .adjust(|status, delay| pushback(status).or(delay))
        .await;
    outcome(result)
}
