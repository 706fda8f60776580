//! The SDK's HTTP client on the simulated network: every request the SDK sends is one
//! attempt of `env.http_client()`, and the response body the SDK reads is the attempt's.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::retry::ErrorKind;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tokio::time::Instant;

use crate::env::{AttemptBody, HttpClient as EnvHttpClient, HttpError};

/// An [`HttpClient`] for the AWS SDK for Rust that sends each request through
/// [`env.http_client()`](crate::Env::http_client) of the call that sent it: one attempt on the
/// trace, tagged with its call.
///
/// It belongs to the run, not to a call, so that an SDK client built once per run (as a
/// process builds one: its retry strategy holds state from call to call) still tags each
/// request with its call. The run names the call it is polling, and the SDK sends a request
/// from within that poll; a request sent from a task the client spawned is in no call, and
/// fails with a user error saying so.
///
/// The response reaches the SDK with its body still streaming from the attempt, so the
/// attempt ends when the SDK has read the body (as it does before classifying an error).
/// The SDK's `connect_timeout` and `read_timeout` (its `TimeoutConfig`, which the SDK hands
/// to [`HttpClient::http_connector`]) are kept as its own HTTP client keeps them, on virtual
/// time: the read timeout runs from sending the request to the response head, the connect
/// timeout until the request is on an open connection. Transport errors are classified as
/// the SDK's client classifies hyper's (an I/O error, a timeout, an incomplete message as a
/// transient error).
///
/// [`AwsSdkConfig`](super::AwsSdkConfig) puts one in its `SdkConfig`; use one in an SDK
/// config of your own, but know that only [`Env::aws_sdk_config`](crate::Env::aws_sdk_config)
/// and [`Env::aws_sdk_client`](crate::Env::aws_sdk_client) seed the generator the SDK draws
/// its jitter and invocation ids from (`fastrand`'s, per run): call one of them in the run
/// before the SDK's first request, or jittered delays differ from run to run:
///
/// ```
/// use retrylab::adapters::aws::SdkHttpClient;
/// # use retrylab::prelude::*;
/// # let scenario = Scenario::builder("sdk client")
/// #     .endpoint("api", endpoint().script([status(200)]))
/// #     .operation(post("api", "/"))
/// #     .build()
/// #     .unwrap();
///
/// scenario.run(|_env: Env| async move {
///     let config = aws_types::SdkConfig::builder().http_client(SdkHttpClient::new()).build();
///     assert!(config.http_client().is_some());
///     Ok::<_, ()>(())
/// });
/// ```
#[derive(Debug, Clone, Default)]
pub struct SdkHttpClient {
    _private: (),
}

impl SdkHttpClient {
    /// The SDK's HTTP client on the harness: each request is an attempt of the call that
    /// sent it.
    pub fn new() -> SdkHttpClient {
        SdkHttpClient::default()
    }
}

impl HttpClient for SdkHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(SdkConnector {
            connect_timeout: settings.connect_timeout(),
            read_timeout: settings.read_timeout(),
        })
    }
}

/// The [`HttpConnector`] an [`SdkHttpClient`] gives the SDK: the sending call's
/// `env.http_client()`, with the SDK's connect and read timeouts.
#[derive(Debug, Clone)]
pub struct SdkConnector {
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
}

/// The error of a request sent outside the poll of any call.
#[derive(Debug)]
struct NoCall;

impl fmt::Display for NoCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the SDK sent a request outside the poll of any call of the run (from a task \
             the client spawned, or after the run): the harness cannot tell which call it \
             belongs to; send it from the call's own future",
        )
    }
}

impl StdError for NoCall {}

impl HttpConnector for SdkConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        // Read now, while the sending call is being polled.
        let Some(env) = crate::env::polled_call() else {
            return HttpConnectorFuture::ready(Err(ConnectorError::user(Box::new(NoCall))));
        };
        let client = env.http_client();
        let this = self.clone();
        HttpConnectorFuture::new(async move {
            let request = harness_request(request).await?;
            let response = this.send(&client, request).await?;
            HttpResponse::try_from(response.map(SdkBody::from_body_1_x))
                .map_err(|error| ConnectorError::other(error.into(), None))
        })
    }
}

impl SdkConnector {
    /// One attempt, ended early by the connect or read timeout.
    async fn send(
        &self,
        client: &EnvHttpClient,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<AttemptBody>, ConnectorError> {
        let started = Instant::now();
        let (id, sending) = client.send(request);
        tokio::pin!(sending);
        let read_deadline = self
            .read_timeout
            .map(|after| (started + after, Timeout::read(after)));
        let connect_deadline = self
            .connect_timeout
            .map(|after| (started + after, Timeout::connect(after)));
        loop {
            // The connect timeout runs only until the request is on an open connection.
            let connecting =
                connect_deadline.filter(|_| !id.is_some_and(|id| client.is_connected(id)));
            let next = match (connecting, read_deadline) {
                (Some(c), Some(r)) => Some(if c.0 < r.0 { c } else { r }),
                (c, r) => c.or(r),
            };
            let Some((at, timeout)) = next else {
                return sending.await.map_err(connector_error);
            };
            // Biased: a response that arrives at the deadline's instant wins, as it would
            // have been read first.
            tokio::select! {
                biased;
                sent = &mut sending => return sent.map_err(connector_error),
                () = tokio::time::sleep_until(at) => {
                    let connected = id.is_some_and(|id| client.is_connected(id));
                    if timeout.kind == TimeoutKind::Read || !connected {
                        // Dropping `sending` ends the attempt as abandoned.
                        return Err(ConnectorError::timeout(timeout.into()));
                    }
                    // Connected in time: only the read timeout is left.
                }
            }
        }
    }
}

/// The SDK's request as the harness client takes it: the body in memory (the SDK's bodies
/// are in memory for every operation without a streaming input; a streaming one is read
/// whole first).
async fn harness_request(request: HttpRequest) -> Result<Request<Full<Bytes>>, ConnectorError> {
    let request = request
        .try_into_http1x()
        .map_err(|error| ConnectorError::user(error.into()))?;
    let (parts, body) = request.into_parts();
    let bytes = match body.bytes() {
        Some(bytes) => Bytes::copy_from_slice(bytes),
        None => body
            .collect()
            .await
            .map_err(ConnectorError::user)?
            .to_bytes(),
    };
    Ok(Request::from_parts(parts, Full::new(bytes)))
}

/// The harness client's error as the SDK's own HTTP client (aws-smithy-http-client)
/// classifies hyper's: a timeout, a user error, an I/O error (closed, canceled, refused,
/// reset, a failed connect), an incomplete message as a transient error, else unclassified.
fn connector_error(error: HttpError) -> ConnectorError {
    let classify: fn(aws_smithy_runtime_api::box_error::BoxError) -> ConnectorError =
        if let Some(hyper) = find_source::<hyper::Error>(&error) {
            if hyper.is_timeout() {
                ConnectorError::timeout
            } else if hyper.is_user() {
                ConnectorError::user
            } else if hyper.is_closed()
                || hyper.is_canceled()
                || find_source::<std::io::Error>(hyper).is_some()
            {
                ConnectorError::io
            } else if hyper.is_incomplete_message() {
                |error| ConnectorError::other(error, Some(ErrorKind::TransientError))
            } else {
                |error| ConnectorError::other(error, None)
            }
        } else if error.is_connect() || find_source::<std::io::Error>(&error).is_some() {
            ConnectorError::io
        } else {
            |error| ConnectorError::other(error, None)
        };
    classify(error.into())
}

fn find_source<'a, E: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        next = error.source();
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeoutKind {
    Connect,
    Read,
}

/// A connect or read timeout that expired, as the SDK's error says it.
#[derive(Debug, Clone, Copy)]
struct Timeout {
    kind: TimeoutKind,
    after: Duration,
}

impl Timeout {
    fn connect(after: Duration) -> Timeout {
        Timeout {
            kind: TimeoutKind::Connect,
            after,
        }
    }

    fn read(after: Duration) -> Timeout {
        Timeout {
            kind: TimeoutKind::Read,
            after,
        }
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            TimeoutKind::Connect => "HTTP connect",
            TimeoutKind::Read => "HTTP read",
        };
        write!(f, "{kind} timeout occurred after {:?}", self.after)
    }
}

impl StdError for Timeout {}
