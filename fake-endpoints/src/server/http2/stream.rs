//! One HTTP/2 stream: its request read and admitted as an HTTP/1 request is, and its answer
//! sent as HEADERS and DATA frames, paced like HTTP/1's body when the step trickles.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use ::h2::RecvStream;
use ::h2::server::SendResponse;
use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, DATE};
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri};

use super::frames::{connection_specific, send_all};
use crate::endpoint::Endpoint;
use crate::endpoint::admission::{Admission, Arrival};
use crate::endpoint::task::Answer;
use crate::http::detach::RequestHead;
use crate::http::response::SentResponse;
use crate::ledger::{RequestId, ResponseOutcome, ResponseRecord};
use crate::script::step::Fail;
use crate::script::trickle::Pace;
use crate::server::common::{
    AbandonGuard, HeadRecord, file_body_cut_short, kill_mode, record_head,
};
use crate::server::conn::{ConnShared, FlushHook, KillMode};

use super::fault::{self, Faults, GoAway};

/// Serves stream `seq` of the connection (its `seq`-th request) from its request to its
/// answer's last DATA frame, or until the client resets it.
pub(super) async fn serve(
    endpoint: Endpoint,
    conn: Arc<ConnShared>,
    seq: u32,
    request: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    faults: Arc<Faults>,
) {
    let stream_id = u32::from(respond.stream_id());
    // The bytes read when the stream was accepted end with its HEADERS frame (or with what
    // came after it in the same read): the request's place in the inbound stream, as close
    // as frames interleaved from several streams allow.
    let accepted_at = conn.read();
    let mut in_flight = InFlight {
        conn: &conn,
        answered: false,
    };
    let (mut parts, body) = request.into_parts();
    // The ledger keeps the origin form (`/path?query`), as an HTTP/1 request sends it; the
    // authority HTTP/2 carries in `:authority` is the endpoint's own name.
    parts.uri = origin_form(&parts.uri);
    let no_body = parts.method == Method::HEAD;
    let head = endpoint.inner.ledger.keep_head(parts);
    let Some(body) = read_body(&endpoint, &conn, &head, body).await else {
        return;
    };
    let inbound = accepted_at.saturating_sub(1)..conn.read().max(accepted_at);
    let admitted = endpoint.admit(Arrival {
        conn_id: conn.conn_id,
        seq,
        stream_id: Some(stream_id),
        inbound,
        head,
        body,
    });
    // Refused by the gate, which promises that nothing answers, or not admitted by a crashed
    // endpoint: the stream waits for the client to reset it (or the connection to close).
    let Some((id, admission)) = admitted else {
        reset_by_client(&mut respond).await;
        return;
    };
    let mut guard = AbandonGuard::new(&endpoint, &conn, id);
    let outcome = match admission {
        Admission::Ready(response) => Answer::Respond(response, Duration::ZERO),
        Admission::Done(outcome) => outcome,
        Admission::Pending(mut rx) => {
            // The answer first: a step that answers as the client resets the stream has
            // answered.
            let answered = poll_fn(|cx| {
                if let Poll::Ready(result) = Pin::new(&mut rx).poll(cx) {
                    return Poll::Ready(Some(result));
                }
                if respond.poll_reset(cx).is_ready() {
                    return Poll::Ready(None);
                }
                Poll::Pending
            })
            .await;
            match answered {
                Some(Ok(outcome)) => outcome,
                // The step task ended without an answer (the endpoint crashed) or was
                // dropped (the runtime is shutting down): nothing will ever answer.
                Some(Err(_)) => {
                    reset_by_client(&mut respond).await;
                    return;
                }
                // The client reset the stream: the guard records the request abandoned.
                None => return,
            }
        }
    };
    guard.armed = false;
    let answer = match outcome {
        Answer::Respond(response, trickle) => (response, None, trickle),
        Answer::Truncate(response, fail, trickle) => (response, Some(fail), trickle),
        Answer::Fail(fail) => {
            let written = conn.written();
            conn.ledger.push_response(ResponseRecord {
                request: id,
                conn_id: conn.conn_id,
                at_ms: conn.clock.now_ms(),
                end_ms: None,
                outcome: ResponseOutcome::Failed(fail),
                retry_after: Vec::new(),
                outbound: written..written,
                grpc: None,
            });
            // `close` and `reset` end the whole connection, every stream on it, as they end
            // an HTTP/1 connection; `hang` leaves the stream open until the client resets
            // it. A stream reset ends this stream alone; an abrupt GOAWAY, the connection.
            match fail {
                Fail::Hang => {}
                Fail::RstStream { code, .. } => {
                    fault::reset_before_head(&mut respond, code);
                    return;
                }
                Fail::GoAway { code } => {
                    faults.ask(code.map_or(GoAway::Graceful, GoAway::Abrupt));
                }
                fail if fail.is_reset() => conn.kill(KillMode::Reset),
                _ => conn.kill(KillMode::Fin),
            }
            reset_by_client(&mut respond).await;
            return;
        }
    };
    let (response, fail, trickle) = answer;
    let dated = endpoint.inner.date_header;
    let Some(hook) = respond_with(
        &conn,
        id,
        &response,
        fail,
        (trickle, no_body, dated),
        respond,
        &faults,
    )
    .await
    else {
        return;
    };
    conn.arm(hook);
    in_flight.answered = true;
}

/// Counts the stream done for the idle timer when it ends without a response whose flush
/// would.
struct InFlight<'a> {
    conn: &'a ConnShared,
    answered: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.conn.end_unanswered();
        }
    }
}

/// The request target in origin form.
fn origin_form(uri: &Uri) -> Uri {
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    // A path and query already parsed out of a URI always parse again.
    Uri::try_from(target).unwrap_or_else(|_| Uri::from_static("/"))
}

/// Reads a request's whole body, giving its bytes back to the flow-control window as they
/// arrive. A body the client stops sending part way (it reset the stream or closed the
/// connection) is filed as unreadable, with how much of it arrived, and gives `None`.
async fn read_body(
    endpoint: &Endpoint,
    conn: &ConnShared,
    head: &RequestHead,
    mut body: RecvStream,
) -> Option<Bytes> {
    let mut received = BytesMut::new();
    loop {
        match poll_fn(|cx| body.poll_data(cx)).await {
            None => return Some(received.freeze()),
            Some(Ok(data)) => {
                // Only fails once the stream is gone, which the next poll reports.
                let _ = body.flow_control().release_capacity(data.len());
                received.extend_from_slice(&data);
            }
            Some(Err(_)) => {
                file_body_cut_short(
                    endpoint,
                    conn.conn_id,
                    head,
                    received.len(),
                    "the stream was reset",
                );
                return None;
            }
        }
    }
}

/// Waits until the client resets the stream (or the connection ends it).
async fn reset_by_client(respond: &mut SendResponse<Bytes>) {
    let _ = poll_fn(|cx| respond.poll_reset(cx)).await;
}

/// Sends `sent` on the stream and records it: its head at once, its body whole or paced by
/// `trickle`. Gives the hook that completes the record once the last byte is flushed, or
/// `None` when the stream went away first. A `fail` with a byte count cuts the connection
/// after that many bytes, frames included, as HTTP/1's cut counts the bytes on the wire.
/// With `dated`, the head carries a `Date` read at the instant it is recorded.
async fn respond_with(
    conn: &Arc<ConnShared>,
    id: RequestId,
    sent: &SentResponse,
    fail: Option<Fail>,
    (trickle, no_body, dated): (Duration, bool, bool),
    mut respond: SendResponse<Bytes>,
    faults: &Faults,
) -> Option<FlushHook> {
    let HeadRecord { hook, date } = record_head(conn, id, sent, fail, dated);
    if let Some(Fail::GoAway { code: None }) = fail {
        faults.ask(GoAway::Graceful);
    }
    let body = if no_body || !may_have_body(sent.status) {
        Bytes::new()
    } else {
        sent.body.clone()
    };
    let pace = Pace::new(body.len(), trickle);
    if let Some(f) = fail {
        if let Some(bytes) = f.after_bytes() {
            // As on HTTP/1: a trickled body is cut while it is still being handed over, so
            // the cut itself completes the record.
            conn.cut_after(bytes, kill_mode(f), pace.map(|_| hook));
        }
    }
    if let Some(reply) = &sent.grpc {
        // A gRPC answer: its message and trailers, sent whole (grpc.rs).
        super::grpc::send(sent, reply, date, respond).await?;
        return Some(hook);
    }
    let mut head = response_head(sent, body.len(), no_body);
    if let Some(date) = date {
        head.headers_mut().insert(DATE, date);
    }
    if let Some(Fail::RstStream {
        code,
        body_bytes: Some(n),
    }) = fail
    {
        // The head, part of the body, and the reset: never the stream's end.
        let mut stream = respond.send_response(head, false).ok()?;
        fault::reset_mid_body(&mut stream, body, n, code).await?;
        return Some(hook);
    }
    let mut stream = respond.send_response(head, body.is_empty()).ok()?;
    if body.is_empty() {
        return Some(hook);
    }
    match pace {
        None => send_all(&mut stream, body, true).await?,
        Some(pace) => {
            let started = tokio::time::Instant::now();
            for k in 1..=pace.chunks {
                let due = started + Duration::from_millis(pace.offset_ms(k));
                tokio::time::sleep_until(due).await;
                send_all(&mut stream, body.slice(pace.bytes(k)), k == pace.chunks).await?;
            }
        }
    }
    Some(hook)
}

/// Whether a response with `status` carries a body (RFC 9110 section 6.4.1).
fn may_have_body(status: StatusCode) -> bool {
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED)
}

/// The head HTTP/2 sends for `sent`: its status and headers but the connection-specific ones
/// HTTP/2 forbids (RFC 9113 section 8.2.2: h2 refuses to send them), and a `content-length`
/// of the whole body unless the step wrote its own, so a client can tell a body cut short.
fn response_head(sent: &SentResponse, body_len: usize, no_body: bool) -> Response<()> {
    let mut response = Response::new(());
    *response.status_mut() = sent.status;
    let headers = response.headers_mut();
    for (name, value) in &sent.headers {
        if !connection_specific(name, value) {
            headers.append(name.clone(), value.clone());
        }
    }
    if !no_body && may_have_body(sent.status) && !headers.contains_key(CONTENT_LENGTH) {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(body_len));
    }
    response
}
