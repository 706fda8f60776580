//! A gRPC answer on one HTTP/2 stream (the gRPC over HTTP/2 protocol): a head with
//! `content-type: application/grpc`, the length-prefixed response message, and the status in
//! trailers; or, for an error without a message, a trailers-only response whose head carries
//! the status and ends the stream.
//!
//! Kept apart from `stream.rs`, which hands a response here when its step answers in gRPC.

use ::h2::server::SendResponse;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, DATE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};

use super::frames::{connection_specific, send_all};
use crate::http::grpc::GrpcReply;
use crate::http::response::SentResponse;

/// Sends `reply` on the stream, with the step's own headers in the head, and `date` as its
/// `Date` when the endpoint dates its answers (as every answer on real sockets is). `None`
/// when the stream went away first.
pub(super) async fn send(
    sent: &SentResponse,
    reply: &GrpcReply,
    date: Option<HeaderValue>,
    mut respond: SendResponse<Bytes>,
) -> Option<()> {
    let mut head = Response::new(());
    // A gRPC response is always HTTP 200: the outcome is the grpc-status.
    *head.status_mut() = StatusCode::OK;
    let headers = head.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    for (name, value) in &sent.headers {
        if !connection_specific(name, value) {
            headers.append(name.clone(), value.clone());
        }
    }
    if let Some(date) = date {
        headers.insert(DATE, date);
    }
    if reply.trailers_only() {
        for (name, value) in reply.status_fields() {
            headers.append(name, value);
        }
        respond.send_response(head, true).ok()?;
        return Some(());
    }
    let mut stream = respond.send_response(head, false).ok()?;
    send_all(&mut stream, reply.framed_reply(), false).await?;
    let mut trailers = HeaderMap::new();
    for (name, value) in reply.status_fields() {
        trailers.append(name, value);
    }
    stream.send_trailers(trailers).ok()
}
