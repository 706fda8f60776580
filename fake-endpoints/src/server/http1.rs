//! Serving one connection with hyper's HTTP/1 server.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, DATE};
use http::{HeaderValue, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use super::body::ResponseBody;
use super::common::{
    AbandonGuard, End, HeadRecord, file_body_cut_short, file_unreadable, kill_mode, record_head,
};
use super::conn::{ConnInfo, ConnShared, KillMode};
use crate::endpoint::Endpoint;
use crate::endpoint::admission::{Admission, Arrival};
use crate::endpoint::task::Answer;
use crate::http::detach::RequestHead;
use crate::http::response::SentResponse;
use crate::ledger::{RequestId, ResponseOutcome, ResponseRecord};
use crate::script::step::Fail;
use crate::script::trickle::Pace;

/// Files bytes hyper could not read as a request on connection `conn_id`: the client's, not
/// the endpoint's, and answered by no step, so the run can say so.
fn unreadable(inner: &crate::endpoint::Inner, conn_id: u64, error: &hyper::Error) {
    let what = if error.is_parse_too_large() {
        "a request head larger than the endpoint reads (hyper's limit)".to_owned()
    } else if error.is_parse() {
        format!("bytes that are not an HTTP/1.1 request ({error})")
    } else if error.is_incomplete_message() {
        // A client that sent its request and then closed the connection (it gave up
        // waiting) ends it the same way: only a connection on which no request arrived held
        // half a one.
        let requests = inner
            .ledger
            .with(|l| l.requests.iter().any(|r| r.conn_id == conn_id));
        if requests {
            return;
        }
        "half a request: the connection closed before the request ended".to_owned()
    } else {
        return;
    };
    file_unreadable(inner, conn_id, what);
}

/// Reads a request's whole body. A body the client stops sending part way (it closed or reset
/// the connection) is filed as unreadable, with how much of it arrived, and gives `None`.
async fn read_body(
    endpoint: &Endpoint,
    conn: &ConnShared,
    head: &RequestHead,
    mut body: Incoming,
) -> Option<Bytes> {
    let mut received = BytesMut::new();
    loop {
        match body.frame().await {
            None => return Some(received.freeze()),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    received.extend_from_slice(&data);
                }
            }
            Some(Err(_)) => {
                file_body_cut_short(
                    endpoint,
                    conn.conn_id,
                    head,
                    received.len(),
                    "the connection closed",
                );
                return None;
            }
        }
    }
}

/// Serves one accepted connection with hyper's HTTP/1 server until it closes, and says how
/// it ended. The transport (`io`, which counts bytes for `shared`) is dropped before this
/// returns: for a kill, that drop is the close, and a reset is asked of `conn` before it.
///
/// hyper's HTTP/1 server drives the connection with keep-alive on, no `Date` header and no
/// header read timeout; the endpoint closes it only as its `keep_alive` says or as a step
/// fails.
pub(super) async fn serve<T>(
    endpoint: &Endpoint,
    io: T,
    shared: &Arc<ConnShared>,
    conn: &ConnInfo,
) -> End
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let inner = &*endpoint.inner;
    let service = EndpointService {
        endpoint: endpoint.clone(),
        conn: Arc::clone(shared),
    };
    let mut builder = http1::Builder::new();
    builder
        .keep_alive(true)
        .auto_date_header(false)
        .header_read_timeout(None::<Duration>);
    let io = TokioIo::new(io);
    let mut connection = pin!(builder.serve_connection(io, service));
    let idle_timeout = inner.keep_alive.idle_timeout;
    // Reset to the idle deadline before it is ever polled.
    let mut idle = pin!(tokio::time::sleep(Duration::ZERO));
    let mut shutting_down = false;

    // Polled in a fixed order (kill, connection, idle timer) so that outcomes never
    // depend on a random branch choice.
    let end = poll_fn(|cx| {
        if let Some(kill) = shared.poll_kill(cx.waker()) {
            return Poll::Ready(End::Kill(kill));
        }
        if let Poll::Ready(result) = connection.as_mut().poll(cx) {
            if let Err(error) = result {
                unreadable(inner, conn.conn_id, &error);
            }
            return Poll::Ready(End::Done);
        }
        // Steps, bodies and flushes run inside the connection's poll and may have
        // asked for a kill just now (the waker is registered already).
        if let Some(kill) = shared.take_kill() {
            return Poll::Ready(End::Kill(kill));
        }
        if let (Some(timeout), false) = (idle_timeout, shutting_down) {
            if let Some(since) = shared.idle_since() {
                let deadline = since + timeout;
                if idle.deadline() != deadline {
                    idle.as_mut().reset(deadline);
                }
                if idle.as_mut().poll(cx).is_ready() {
                    connection.as_mut().graceful_shutdown();
                    shutting_down = true;
                    if connection.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(End::Done);
                    }
                }
            }
        }
        Poll::Pending
    })
    .await;
    if let End::Kill(KillMode::Reset) = end {
        // Before the connection (and the transport with it) is dropped on return, so the
        // transport aborts instead of closing cleanly.
        conn.control.reset();
    }
    end
}

#[derive(Clone)]
struct EndpointService {
    endpoint: Endpoint,
    conn: Arc<ConnShared>,
}

type ServiceFuture =
    Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

impl Service<Request<Incoming>> for EndpointService {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = ServiceFuture;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let seq = self.conn.begin_request();
        // The head is copied out, and hyper's parts dropped, here rather than in the future:
        // hyper reads the connection again before it first polls the future, and while any
        // slice of its read buffer (the target, a header value) is alive it cannot reuse the
        // buffer and allocates a fresh one for that read.
        let (parts, body) = request.into_parts();
        let head = self.endpoint.inner.ledger.keep_head(parts);
        Box::pin(handle(
            self.endpoint.clone(),
            Arc::clone(&self.conn),
            seq,
            head,
            body,
        ))
    }
}

/// One request, from its head to the response handed to hyper.
async fn handle(
    endpoint: Endpoint,
    conn: Arc<ConnShared>,
    seq: u32,
    head: RequestHead,
    body: Incoming,
) -> Result<Response<ResponseBody>, Infallible> {
    let Some(body) = read_body(&endpoint, &conn, &head, body).await else {
        // The client went away mid-body. hyper would wait for this future forever on a
        // connection that can never carry another request, so the endpoint closes it.
        conn.kill(KillMode::Fin);
        return std::future::pending().await;
    };
    let inbound = conn.take_inbound_range();
    let admitted = endpoint.admit(Arrival {
        conn_id: conn.conn_id,
        seq,
        stream_id: None,
        inbound,
        head,
        body,
    });
    // Refused by the gate, which promises that nothing answers, or not admitted by a crashed
    // endpoint, whose connections the crash resets: the request waits for its connection to
    // close.
    let Some((id, admission)) = admitted else {
        return std::future::pending().await;
    };
    let mut guard = AbandonGuard::new(&endpoint, &conn, id);
    let outcome = match admission {
        Admission::Ready(response) => Answer::Respond(response, Duration::ZERO),
        Admission::Done(outcome) => outcome,
        Admission::Pending(rx) => match rx.await {
            Ok(outcome) => outcome,
            // The step task ended without an answer (the endpoint crashed) or was dropped
            // (the runtime is shutting down): nothing will ever answer.
            Err(_) => return std::future::pending().await,
        },
    };
    guard.armed = false;
    let close = endpoint
        .inner
        .keep_alive
        .max_requests
        .is_some_and(|max| seq >= max);
    match outcome {
        Answer::Respond(response, trickle) => {
            let dated = endpoint.inner.date_header;
            Ok(respond(&conn, id, &response, None, trickle, close, dated))
        }
        Answer::Truncate(response, fail, trickle) => {
            let dated = endpoint.inner.date_header;
            Ok(respond(
                &conn,
                id,
                &response,
                Some(fail),
                trickle,
                close,
                dated,
            ))
        }
        Answer::Fail(fail) => {
            let written = conn.written();
            let index = conn.ledger.push_response(ResponseRecord {
                request: id,
                conn_id: conn.conn_id,
                at_ms: conn.clock.now_ms(),
                end_ms: None,
                outcome: ResponseOutcome::Failed(fail),
                retry_after: Vec::new(),
                outbound: written..written,
                grpc: None,
            });
            match fail {
                Fail::Hang => {
                    // The client leaving drops this future: the instant it gave up (its own
                    // timeout), which is when an attempt rebuilt from this record ended.
                    let _left = HangEnd {
                        conn: &conn,
                        index,
                        written,
                    };
                    return std::future::pending().await;
                }
                fail if fail.is_reset() => conn.kill(KillMode::Reset),
                _ => conn.kill(KillMode::Fin),
            }
            // Never answer: for close and reset the serving loop drops the connection (and this
            // future); for hang the connection stays open until the client leaves.
            std::future::pending().await
        }
    }
}

/// Builds the hyper response for `sent`, records its head, and wires its completion; with
/// `dated`, adds a `Date` header read at the instant the head is recorded.
fn respond(
    conn: &Arc<ConnShared>,
    id: RequestId,
    sent: &SentResponse,
    fail: Option<Fail>,
    trickle: Duration,
    close: bool,
    dated: bool,
) -> Response<ResponseBody> {
    let HeadRecord { hook, date } = record_head(conn, id, sent, fail, dated);
    let full_len = sent.body.len() as u64;
    let chunk = sent.body.clone();
    let pace = Pace::new(chunk.len(), trickle);
    if let Some(f) = fail {
        if let Some(bytes) = f.after_bytes() {
            // `after_bytes` counts the response as written on the wire, head included. A
            // trickled body is cut while it is still being handed over, so the cut itself
            // completes the record; a whole body completes it when its last byte is handed.
            conn.cut_after(bytes, kill_mode(f), pace.map(|_| hook));
        }
    }
    let body = match pace {
        Some(pace) => ResponseBody::paced(chunk, pace, Arc::clone(conn), hook),
        None => ResponseBody::new(chunk, full_len, Arc::clone(conn), hook),
    };
    let mut response = Response::new(body);
    *response.status_mut() = sent.status;
    let headers = response.headers_mut();
    for (name, value) in &sent.headers {
        headers.append(name.clone(), value.clone());
    }
    if let Some(date) = date {
        headers.insert(DATE, date);
    }
    if close {
        // hyper closes the connection after a response carrying `connection: close`.
        headers.append(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Records when a `fail: hang` request's connection went away, as its record's `end_ms`.
struct HangEnd<'a> {
    conn: &'a ConnShared,
    index: usize,
    written: u64,
}

impl Drop for HangEnd<'_> {
    fn drop(&mut self) {
        let now = self.conn.clock.now_ms();
        self.conn
            .ledger
            .finish_response(self.index, now, self.written);
    }
}
