//! Responses: as a step declares one (its `Retry-After` still to be rendered at the moment it
//! is sent), and exactly as the endpoint sends it (and dedupe replays it).

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::header::RETRY_AFTER;
use http::{HeaderName, HeaderValue, StatusCode};

use super::grpc::GrpcReply;
use super::retry_after::RetryAfter;

/// A response as a step declares it, before the moment it is sent fixes its `Retry-After`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Respond {
    /// The status code.
    pub status: StatusCode,
    /// Headers in the order they are set; a name may repeat. `http::HeaderMap` (and so hyper)
    /// writes all values of a name together, at the position of its first occurrence.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, sent with a `content-length`.
    pub body: Bytes,
    /// A `Retry-After` header, appended after `headers` (so a step can also send a second one
    /// through `headers`).
    pub retry_after: Option<RetryAfter>,
    /// A gRPC answer: sent over HTTP/2 as a gRPC response (its message, then its status in
    /// trailers, or a trailers-only response) instead of `body`. `status` is then 200. An
    /// HTTP/1.1 connection (of an `auto` endpoint) gets the status and `headers` alone, as
    /// gRPC does not run there; scenarios allow gRPC steps on `http2` endpoints only.
    pub grpc: Option<Arc<GrpcReply>>,
}

impl Respond {
    /// A response with `status`, no headers and an empty body.
    pub fn new(status: StatusCode) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
            retry_after: None,
            grpc: None,
        }
    }

    /// The response as sent when the virtual wall clock reads `now`.
    pub fn render(&self, now: SystemTime) -> SentResponse {
        let mut headers = Vec::with_capacity(self.headers.len() + 1);
        headers.extend(self.headers.iter().cloned());
        if let Some(retry_after) = &self.retry_after {
            headers.push((RETRY_AFTER, retry_after.render(now)));
        }
        SentResponse {
            status: self.status,
            headers,
            body: self.body.clone(),
            grpc: self.grpc.clone(),
        }
    }

    /// The response rendered once in advance, or `None` when it depends on the moment it is
    /// sent (an HTTP-date `Retry-After` is the virtual wall clock then plus an offset).
    pub(crate) fn prerendered(&self) -> Option<Arc<SentResponse>> {
        match self.retry_after {
            Some(RetryAfter::HttpDate { .. }) => None,
            // Any instant renders the same response.
            _ => Some(Arc::new(self.render(std::time::UNIX_EPOCH))),
        }
    }
}

impl Default for Respond {
    fn default() -> Self {
        Self::new(StatusCode::OK)
    }
}

/// A response exactly as an endpoint sends it (and as dedupe replays it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentResponse {
    /// The status code.
    pub status: StatusCode,
    /// Headers in order, `Retry-After` already rendered.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body.
    pub body: Bytes,
    /// The gRPC answer it carries instead of `body`, if any (see [`Respond::grpc`]).
    pub grpc: Option<Arc<GrpcReply>>,
}

impl SentResponse {
    /// The `Retry-After` header it carries, if any.
    ///
    /// ```
    /// use retrylab_endpoints::Step;
    ///
    /// let step = Step::status(503).retry_after(2);
    /// let sent = step.respond.render(std::time::SystemTime::UNIX_EPOCH);
    /// assert_eq!(sent.retry_after().map(|v| v.as_bytes()), Some(&b"2"[..]));
    /// ```
    pub fn retry_after(&self) -> Option<&HeaderValue> {
        self.retry_after_lines().next()
    }

    /// Every `Retry-After` field line it carries, in order: a response may repeat the
    /// header, and a client should see that the lines disagree.
    ///
    /// ```
    /// use retrylab_endpoints::Step;
    ///
    /// let step = Step::status(503).header("retry-after", "2").header("retry-after", "5");
    /// let sent = step.respond.render(std::time::SystemTime::UNIX_EPOCH);
    /// let lines: Vec<&[u8]> = sent.retry_after_lines().map(|v| v.as_bytes()).collect();
    /// assert_eq!(lines, [&b"2"[..], &b"5"[..]]);
    /// ```
    pub fn retry_after_lines(&self) -> impl Iterator<Item = &HeaderValue> {
        self.headers
            .iter()
            .filter(|(name, _)| name == http::header::RETRY_AFTER)
            .map(|(_, value)| value)
    }

    /// A response with `status` and nothing else.
    pub fn status_only(status: StatusCode) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
            grpc: None,
        }
    }
}
