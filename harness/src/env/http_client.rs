//! `env.http_client()`: hyper-util's legacy client on the simulated network, recording every
//! request as an attempt (docs/architecture.md#attempts-time-and-ordering).
//!
//! Each [`HttpClient::request`] is one attempt: `start` is the call instant, `head` the
//! instant the response head reached the client, `end` the first of: the last body byte
//! delivered, the response dropped, a transport error. The client also tags each request with
//! the `x-retrylab-client`, `x-retrylab-call` and `x-retrylab-attempt` headers, so effects and
//! late requests can be attributed to calls without guessing.

use std::error::Error as _;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::Either;
use http::{HeaderValue, Request, Response};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{CaptureConnection, Connected, capture_connection};

use retrylab_endpoints::wire::{
    self, ATTEMPT_HEADER_NAME, CALL_HEADER_NAME, CLIENT_HEADER_NAME, HAND_OFF_HEADER_NAME,
};

use super::connector::EnvConnector;
use crate::backend::sim::ConnId;
use crate::policy::RetryAfterValue;
use crate::trace::record::Recorder;
use crate::trace::{AttemptOutcome, EndKind, IoKind};

/// The error type of [`HttpClient::request`]: hyper-util's, unchanged.
pub type Error = hyper_util::client::legacy::Error;

/// An HTTP client whose every request is an attempt in the trace.
///
/// Obtain one with [`Env::http_client`](crate::Env::http_client). Clones share the
/// connection pool, which persists across the calls of one client instance.
///
/// ```
/// use http_body_util::{BodyExt, Full};
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
///
/// let scenario = Scenario::builder("one 503 then 200")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(503), StepSpec::status(200)]))
///     .operation(OperationSpec::get("api", "/"))
///     .build()
///     .unwrap();
/// let report = scenario.run(|env| async move {
///     let client = env.http_client();
///     let mut last = 0;
///     for _ in 0..2 {
///         let request = http::Request::get(env.url("api")).body(Full::default()).unwrap();
///         let response = client.request(request).await.map_err(|e| e.to_string())?;
///         last = response.status().as_u16();
///         response.into_body().collect().await.map_err(|e| e.to_string())?;
///     }
///     Ok::<_, String>(last)
/// });
/// assert_eq!(report.trace().attempts.len(), 2);
/// ```
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<EnvConnector, Full<Bytes>>,
    /// The connector `inner` uses, asked whether the run has ended.
    connector: EnvConnector,
    recorder: Recorder,
    client_id: u32,
    call_id: u32,
    /// `client_id` and `call_id` as tag header values, made once (cloning one is a reference
    /// count; formatting a number into a header value allocates twice).
    client_value: HeaderValue,
    call_value: HeaderValue,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("client_id", &self.client_id)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    pub(crate) fn new(
        inner: Client<EnvConnector, Full<Bytes>>,
        connector: EnvConnector,
        recorder: Recorder,
        client_id: u32,
        call_id: u32,
    ) -> HttpClient {
        HttpClient {
            inner,
            connector,
            recorder,
            client_id,
            call_id,
            client_value: wire::decimal(client_id),
            call_value: wire::decimal(call_id),
        }
    }

    /// Sends one request: one attempt.
    ///
    /// The returned response's body records the attempt's end when it is read to the end,
    /// fails, or is dropped.
    ///
    /// The attempt past `limits.max_client_attempts` is not sent: its future never completes,
    /// and the run ends at that instant. A client that kept its `Env` past its run gets an
    /// error saying the run has ended (in the error's source chain: hyper-util shows it with
    /// `{:?}`).
    pub fn request(
        &self,
        request: Request<Full<Bytes>>,
    ) -> impl Future<Output = Result<Response<AttemptBody>, Error>> + Send + 'static + use<> {
        self.send(request).1
    }

    /// Like [`request`](Self::request), also giving the attempt's id in the trace (`None`
    /// for a request that is no attempt of the run: past the attempt limit, or after the
    /// run).
    pub(crate) fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> (
        Option<u32>,
        impl Future<Output = Result<Response<AttemptBody>, Error>> + Send + 'static + use<>,
    ) {
        if self.connector.run_ended() {
            // Sent unrecorded: the run's records are closed, and the connector fails the
            // request with an error that says why.
            return (None, Either::Left(Either::Left(self.unrecorded(request))));
        }
        let path = request.uri().path_and_query().map_or("/", |p| p.as_str());
        let begun = self.recorder.begin(
            self.client_id,
            self.call_id,
            request.method().as_str(),
            path,
        );
        let Some(id) = begun else {
            // Past limits.max_client_attempts: never sent, so no endpoint counts it. The run
            // ends at this instant, and the client waits here until it is dropped with it
            // (an error would let a client that retries without pause spin instead).
            return (None, Either::Left(Either::Right(std::future::pending())));
        };
        let headers = request.headers_mut();
        // Names parsed once (a `&str` name is parsed and validated on every insert).
        headers.insert(CLIENT_HEADER_NAME.clone(), self.client_value.clone());
        headers.insert(CALL_HEADER_NAME.clone(), self.call_value.clone());
        headers.insert(ATTEMPT_HEADER_NAME.clone(), wire::decimal(id));
        let guard = AttemptGuard {
            recorder: self.recorder.clone(),
            id,
            done: false,
        };
        // hyper-util reports each connection it sends the request on; a second one means it
        // resent the request (the pooled connection closed before it was written).
        let capture = capture_connection(&mut request);
        let future = Current {
            inner: self.inner.request(request),
            recorder: self.recorder.clone(),
            id,
            capture,
            seen: None,
        };
        let response = async move {
            let mut guard = guard;
            match future.await {
                Ok(response) => {
                    let conn_id = response.extensions().get::<ConnId>().map(|c| c.0);
                    // All field lines, as the reference policies read them: recording only
                    // the first made the `retry_after` check bound a wait by one of two
                    // disagreeing values that a correct client ignores.
                    let retry_after = RetryAfterValue::recorded_text(response.headers());
                    // The first line, as the AWS policies read it, shown on the timeline.
                    let amz_retry_after = response
                        .headers()
                        .get(crate::policy::aws::RETRY_AFTER_HEADER)
                        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                    guard.recorder.head(
                        id,
                        response.status().as_u16(),
                        conn_id,
                        retry_after.as_deref(),
                        amz_retry_after.as_deref(),
                    );
                    guard.done = true;
                    let (parts, incoming) = response.into_parts();
                    let mut body = AttemptBody {
                        inner: incoming,
                        recorder: guard.recorder.clone(),
                        id,
                        ended: false,
                    };
                    // An empty body has ended with its head (docs/architecture.md#attempts-time-and-ordering: end is the
                    // last body byte delivered).
                    if body.inner.is_end_stream() {
                        body.finish(EndKind::Body, None);
                    }
                    Ok(Response::from_parts(parts, body))
                }
                Err(error) => {
                    if let Some(conn) = error.connect_info().and_then(conn_of) {
                        guard.recorder.failed_on(id, conn);
                    }
                    guard
                        .recorder
                        .end(id, EndKind::Error, Some(classify(&error)));
                    guard.done = true;
                    Err(error)
                }
            }
        };
        (Some(id), Either::Right(response))
    }

    /// Sends `request` without recording it, for a client that kept its `Env` past the run.
    fn unrecorded(
        &self,
        request: Request<Full<Bytes>>,
    ) -> impl Future<Output = Result<Response<AttemptBody>, Error>> + Send + 'static + use<> {
        let sending = self.inner.request(request);
        let recorder = self.recorder.clone();
        async move {
            let (parts, incoming) = sending.await?.into_parts();
            // Its attempt is no attempt of the run: the body records nothing.
            let body = AttemptBody {
                inner: incoming,
                recorder,
                id: 0,
                ended: true,
            };
            Ok(Response::from_parts(parts, body))
        }
    }
}

impl HttpClient {
    /// Sends a request that is not an attempt of the call (a built-in client's hand-off of a
    /// message it gave up on to a dead-letter endpoint). It carries [`HAND_OFF_HEADER`], so
    /// the trace does not rebuild it as an attempt either.
    pub(crate) async fn hand_off(&self, mut request: Request<Full<Bytes>>) -> Result<u16, Error> {
        let headers = request.headers_mut();
        headers.insert(
            HAND_OFF_HEADER_NAME.clone(),
            HeaderValue::from_static("dead-letter"),
        );
        headers.insert(CLIENT_HEADER_NAME.clone(), wire::decimal(self.client_id));
        headers.insert(CALL_HEADER_NAME.clone(), wire::decimal(self.call_id));
        let response = self.inner.request(request).await?;
        let status = response.status().as_u16();
        // Read to the end so the connection returns to the pool.
        let _ = http_body_util::BodyExt::collect(response.into_body()).await;
        Ok(status)
    }

    /// Whether attempt `id`'s request is on an open connection yet (for an adapter's connect
    /// timeout, which ends when it is).
    #[cfg(feature = "aws")]
    pub(crate) fn is_connected(&self, id: u32) -> bool {
        self.recorder.is_placed(id)
    }

    /// A copy of attempt `id` as recorded so far.
    pub(crate) fn recorded(&self, id: u32) -> Option<crate::trace::Attempt> {
        self.recorder.attempt(id)
    }

    /// Records the reference client's decision after attempt `id`.
    pub(crate) fn record_decision(
        &self,
        id: u32,
        kind: crate::trace::DecisionKind,
        state: Option<&str>,
    ) {
        self.recorder.decision(id, kind, state);
    }
}

impl tower_service::Service<Request<Full<Bytes>>> for HttpClient {
    type Response = Response<AttemptBody>;
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Full<Bytes>>) -> Self::Future {
        Box::pin(self.request(request))
    }
}

thread_local! {
    /// The map [`conn_of`] has a connection write its extras into, which it takes to read
    /// them: kept per thread and left empty after each use, so a read allocates no map.
    static EXTRAS: std::cell::RefCell<http::Extensions> =
        std::cell::RefCell::new(http::Extensions::new());
}

/// The [`ConnId`] `connected` carries as an extra, if it has one.
fn conn_of(connected: &Connected) -> Option<u64> {
    EXTRAS.with(|extras| {
        // Nothing below calls back into this function, so the map is free; were it not, a
        // map of its own gives the same answer.
        let Ok(mut extras) = extras.try_borrow_mut() else {
            return conn_of_in(connected, &mut http::Extensions::new());
        };
        conn_of_in(connected, &mut extras)
    })
}

/// [`conn_of`] with an empty map to write into, which it leaves empty.
fn conn_of_in(connected: &Connected, scratch: &mut http::Extensions) -> Option<u64> {
    connected.get_extras(scratch);
    let conn = scratch.get::<ConnId>().map(|c| c.0);
    scratch.clear();
    conn
}

/// Names a failed attempt by the kind of its error (never its text).
fn classify(error: &Error) -> AttemptOutcome {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return match io.kind() {
                io::ErrorKind::ConnectionRefused => AttemptOutcome::Refused,
                io::ErrorKind::ConnectionReset => AttemptOutcome::Reset,
                io::ErrorKind::UnexpectedEof => AttemptOutcome::Closed,
                kind => AttemptOutcome::Io(IoKind(kind)),
            };
        }
        if let Some(outcome) = h2_outcome(cause) {
            return outcome;
        }
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>() {
            if hyper.is_incomplete_message() || hyper.is_closed() || hyper.is_canceled() {
                // Keep looking for an io cause below; a bare one means EOF.
                if hyper.source().is_none() {
                    return AttemptOutcome::Closed;
                }
            }
        }
        source = cause.source();
    }
    AttemptOutcome::Io(IoKind(io::ErrorKind::Other))
}

/// HTTP/2's own end of a stream, from the server: hyper-util's legacy client hands the h2
/// error up as it came (a `SendRequest` error over hyper's, over h2's), and retries nothing
/// of it (`retry_canceled_requests` resends only a request that never reached h2: the
/// connection closed before the request was handed to it). A reset carries its code; a
/// GOAWAY's error reaches only the streams above its last stream id (the ones below fail
/// as the connection closes under them, with an io error).
fn h2_outcome(cause: &(dyn std::error::Error + 'static)) -> Option<AttemptOutcome> {
    let h2 = cause.downcast_ref::<h2::Error>()?;
    if !h2.is_remote() {
        return None;
    }
    let code = retrylab_endpoints::H2Code::from(h2.reason()?);
    if h2.is_reset() {
        Some(AttemptOutcome::StreamReset(code))
    } else if h2.is_go_away() {
        Some(AttemptOutcome::GoAway(code))
    } else {
        None
    }
}

/// Records the attempt's end as abandoned if its future is dropped before a head arrived.
struct AttemptGuard {
    recorder: Recorder,
    id: u32,
    done: bool,
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if !self.done {
            self.recorder
                .end(self.id, EndKind::Dropped, Some(AttemptOutcome::Abandoned));
        }
    }
}

pin_project_lite::pin_project! {
    /// Marks the attempt as current while hyper-util polls, so a connect it starts is its.
    struct Current<F> {
        #[pin]
        inner: F,
        recorder: Recorder,
        id: u32,
        capture: CaptureConnection,
        seen: Option<u64>,
    }
}

impl<F> Future for Current<F>
where
    F: Future<Output = Result<Response<Incoming>, Error>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        this.recorder.set_current(Some(*this.id));
        let result = this.inner.poll(cx);
        this.recorder.set_current(None);
        let conn = match &result {
            // hyper-util gives the response the extras of the connection it put in the
            // capture: reading them there spares the capture's allocations.
            Poll::Ready(Ok(response)) => response.extensions().get::<ConnId>().map(|c| c.0),
            _ => None,
        }
        .or_else(|| {
            let metadata = this.capture.connection_metadata();
            metadata.as_ref().and_then(conn_of)
        });
        if let Some(conn) = conn {
            if *this.seen != Some(conn) {
                // The connection the request is on: named even if the attempt is abandoned
                // before a head arrives; a change means hyper-util resent it.
                this.recorder.on_conn(*this.id, conn, this.seen.is_some());
                *this.seen = Some(conn);
            }
        }
        result
    }
}

/// A response body that records the end of its attempt.
///
/// Read it like any hyper body (`http_body_util::BodyExt::collect`).
pub struct AttemptBody {
    inner: Incoming,
    recorder: Recorder,
    id: u32,
    ended: bool,
}

impl std::fmt::Debug for AttemptBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttemptBody")
            .field("attempt", &self.id)
            .finish()
    }
}

impl Body for AttemptBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => self.finish(EndKind::Body, None),
            Poll::Ready(Some(Err(error))) => {
                let outcome = body_failure(error);
                self.finish(EndKind::Error, Some(outcome));
            }
            Poll::Ready(Some(Ok(_))) if self.inner.is_end_stream() => {
                self.finish(EndKind::Body, None)
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl AttemptBody {
    fn finish(&mut self, end: EndKind, failure: Option<AttemptOutcome>) {
        if !self.ended {
            self.ended = true;
            self.recorder.end(self.id, end, failure);
        }
    }
}

impl Drop for AttemptBody {
    fn drop(&mut self) {
        // An empty body (e.g. a 503 without content) has ended as soon as the head arrived.
        if self.inner.is_end_stream() {
            self.finish(EndKind::Body, None);
        } else {
            self.finish(EndKind::Dropped, None);
        }
    }
}

fn body_failure(error: &hyper::Error) -> AttemptOutcome {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(outcome) = h2_outcome(cause) {
            return outcome;
        }
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return match io.kind() {
                io::ErrorKind::ConnectionReset => AttemptOutcome::Reset,
                kind => AttemptOutcome::Io(IoKind(kind)),
            };
        }
        source = cause.source();
    }
    AttemptOutcome::Closed
}
