//! The ledger: an append-only record, in virtual milliseconds, of what an endpoint saw and did.

use std::io;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, Uri};

use crate::http::detach::{Recent, RequestHead};
use crate::http::grpc::GrpcReply;
use crate::http::headers::RequestHeaders;
use crate::script::connect::ConnectAction;
use crate::script::step::{Branch, Fail};

/// A request's position in [`LedgerSnapshot::requests`] (0-based, in arrival order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

impl RequestId {
    /// The index into [`LedgerSnapshot::requests`].
    pub fn index(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// A connection attempt and the schedule's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectRecord {
    /// The harness-assigned connection id.
    pub conn_id: u64,
    /// When the attempt reached the endpoint.
    pub at_ms: u64,
    /// What the schedule decided.
    pub action: ConnectAction,
}

/// What idempotency-key deduplication did with a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DedupeOutcome {
    /// No dedupe configured, no key header, or no route matched.
    #[default]
    NotApplied,
    /// First request with its key: it ran its step.
    First,
    /// Rejected: the key was in flight, with request `of`.
    InFlight {
        /// The request in flight with the key.
        of: RequestId,
    },
    /// Rejected: the key was seen with another body, the body of request `of`.
    Mismatch {
        /// The request whose body the key holds.
        of: RequestId,
    },
    /// Answered with the stored response of request `of` (the one that committed the key, or
    /// the rerun that answered after a commit that left no response); no step, no effect.
    Replay {
        /// The request whose response was replayed.
        of: RequestId,
    },
    /// The key had committed (by `of`) without a response to replay: the request ran its step,
    /// and its commit is not a new effect.
    AfterCommit {
        /// The request that committed the key.
        of: RequestId,
    },
}

impl DedupeOutcome {
    /// Whether dedupe answered the request without running a step.
    pub fn short_circuited(self) -> bool {
        matches!(
            self,
            Self::InFlight { .. } | Self::Mismatch { .. } | Self::Replay { .. }
        )
    }
}

/// A request as the endpoint read it.
#[derive(Clone, Debug)]
pub struct RequestRecord {
    /// Its id.
    pub id: RequestId,
    /// The connection it came on (0 under a wiremock responder, which is not told).
    pub conn_id: u64,
    /// Its 1-based position on that connection (0 under a wiremock responder).
    pub seq: u32,
    /// Its HTTP/2 stream id (odd, from 1); `None` on HTTP/1.1.
    pub stream_id: Option<u32>,
    /// When it had been read completely (head and body).
    pub at_ms: u64,
    /// The method.
    pub method: Method,
    /// The request target (shared with the requests before it that had the same one).
    pub uri: Arc<Uri>,
    /// The headers, as received (kept compactly: see [`RequestHeaders`]).
    pub headers: RequestHeaders,
    /// The body (shared with the request before it when the same bytes).
    pub body: Bytes,
    /// Approximate byte range in the connection's inbound stream: from the end of the previous
    /// request to the bytes read when this one was complete (exact unless the client pipelines;
    /// empty under a wiremock responder).
    pub inbound: Range<u64>,
    /// The index of the matched route; `None` = unmatched (answered 404).
    pub route: Option<usize>,
    /// The index of the step that ran, in the route's script or timeline; `None` if none ran
    /// (a 404, a dedupe answer) or if the request arrived in no window of a timeline (answered
    /// with a bare 200).
    pub step: Option<usize>,
    /// The branches its random step took, in order (a branch may choose again); empty when
    /// the step was not random.
    pub branches: Vec<Branch>,
    /// What dedupe did.
    pub dedupe: DedupeOutcome,
}

impl RequestRecord {
    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.uri.path()
    }
}

/// How a request ended on the server side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResponseOutcome {
    /// A complete response.
    Sent {
        /// Its status.
        status: StatusCode,
    },
    /// A head and part of the body, then FIN or RST (`Fail::CloseAfter`/`ResetAfter`).
    Truncated {
        /// The status of the head that went out.
        status: StatusCode,
        /// The failure.
        fail: Fail,
    },
    /// No response: `Fail::Close`, `Fail::Reset` or `Fail::Hang`.
    Failed(Fail),
    /// The connection closed before the step answered (the client gave up); the step itself
    /// still ran to its end, commit included.
    Abandoned,
    /// The endpoint crashed before it answered ([`Endpoint::crash`](crate::Endpoint::crash)):
    /// the step stopped there, and what it committed on arrival stays.
    Crashed,
}

/// The end of a request: a response, a failure, or abandonment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseRecord {
    /// The request answered.
    pub request: RequestId,
    /// Its connection (0 under a wiremock responder).
    pub conn_id: u64,
    /// When the head was handed to the connection, or the failure or abandonment happened
    /// (under a wiremock responder: when the step's latency ended and wiremock sends the head).
    pub at_ms: u64,
    /// When the last byte was flushed to the connection; for `fail: hang`, when the
    /// connection went away (the client gave up, or the run ended); `None` if neither
    /// happened yet, or if the server does not report it (a wiremock responder).
    pub end_ms: Option<u64>,
    /// What happened.
    pub outcome: ResponseOutcome,
    /// Every `Retry-After` field line the head carried, as sent and in order (none without
    /// one, or when no head was sent): what a client that only shows its requests was told
    /// to wait, disagreeing duplicates included.
    pub retry_after: Vec<HeaderValue>,
    /// Byte range in the connection's outbound stream (empty when nothing was sent, and under a
    /// wiremock responder).
    pub outbound: Range<u64>,
    /// The gRPC answer the response carried (its status, message and pushback, as sent in
    /// its trailers or trailers-only head); `None` for a plain HTTP response.
    pub grpc: Option<Arc<GrpcReply>>,
}

/// A committed effect: the side effect a retry could duplicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectRecord {
    /// The request whose step committed.
    pub request: RequestId,
    /// When.
    pub at_ms: u64,
    /// The idempotency key value, if the request had one.
    pub key: Option<HeaderValue>,
    /// The harness call tag (`x-retrylab-call`), if present.
    pub call_tag: Option<HeaderValue>,
}

/// A message a broker stored: a send whose step committed (see
/// [`Broker`](crate::Broker)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredMessage {
    /// The send that stored it.
    pub request: RequestId,
    /// When it was stored.
    pub at_ms: u64,
    /// Its topic.
    pub topic: Arc<str>,
    /// Its key, if the send gave one.
    pub key: Option<Arc<str>>,
    /// The id the broker gave it: `<endpoint>-<n>` for its `n`-th stored message.
    pub id: Arc<str>,
}

/// Which end of a connection: the one that connected, or the endpoint's (who closed a
/// connection first, in the ledger and the trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The client end (the one that connected).
    Client,
    /// The endpoint end.
    Server,
}

/// How a connection closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseKind {
    /// An orderly close.
    Fin,
    /// An abort.
    Reset,
    /// Another transport error, by kind (never its text, which is not deterministic).
    Error(io::ErrorKind),
}

/// The end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CloseRecord {
    /// The connection.
    pub conn_id: u64,
    /// When the first close was observed.
    pub at_ms: u64,
    /// Who closed first.
    pub by: Side,
    /// How.
    pub how: CloseKind,
}

/// A GOAWAY the endpoint sent on an HTTP/2 connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GoAwayRecord {
    /// The connection.
    pub conn_id: u64,
    /// When the endpoint asked for it.
    pub at_ms: u64,
    /// The highest stream id the endpoint had accepted then: the GOAWAY's last stream id,
    /// the streams above it never processed. A graceful GOAWAY is first sent with the
    /// highest id there is, and with this one a round trip later (h2's two-step shutdown).
    pub last_stream_id: u32,
    /// Its error code: `no_error` for a graceful one.
    pub code: crate::H2Code,
    /// Whether the streams in flight finish (graceful) or fail with the connection (abrupt).
    pub graceful: bool,
}

/// Bytes a client sent on a connection that the endpoint could not read as a request: not
/// HTTP/1.1 at all, or a request head the connection closed in the middle of (on a
/// connection that carried no request). They reached no script and got no answer.
///
/// ```
/// use retrylab_endpoints::{ConnInfo, Endpoint, EndpointConfig, VirtualClock};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let endpoint = Endpoint::new(EndpointConfig::http("api"), VirtualClock::new());
/// let (mut client, server) = tokio::io::duplex(1024);
/// let serving = tokio::spawn({
///     let endpoint = endpoint.clone();
///     async move { endpoint.serve(server, ConnInfo::without_reset(1)).await }
/// });
/// client.write_all(b"\x16\x03 not http\r\n\r\n").await.unwrap();
/// client.shutdown().await.unwrap();
/// let _ = client.read_to_end(&mut Vec::new()).await;
/// serving.await.unwrap();
/// let unreadable = endpoint.ledger().snapshot().unreadable;
/// assert_eq!(unreadable[0].conn_id, 1);
/// assert!(unreadable[0].what.starts_with("bytes that are not an HTTP/1.1 request"));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableRecord {
    /// The connection.
    pub conn_id: u64,
    /// When the endpoint gave up reading.
    pub at_ms: u64,
    /// What was wrong with the bytes, in a sentence.
    pub what: String,
}

/// Everything a ledger holds, as plain data. Each list is in append order, which is virtual-time
/// order.
#[derive(Clone, Debug, Default)]
pub struct LedgerSnapshot {
    /// Connection attempts.
    pub connects: Vec<ConnectRecord>,
    /// Requests, indexed by [`RequestId`].
    pub requests: Vec<RequestRecord>,
    /// Responses, failures and abandonments (at most one per request).
    pub responses: Vec<ResponseRecord>,
    /// Committed effects.
    pub effects: Vec<EffectRecord>,
    /// Connection closes.
    pub closes: Vec<CloseRecord>,
    /// Bytes the endpoint could not read as a request, in the order it gave up on them.
    pub unreadable: Vec<UnreadableRecord>,
    /// The requests the endpoint's rate limiter answered because they found its bucket
    /// empty, in arrival order: they consumed no step (their records keep the route they
    /// matched, with no step) and committed nothing.
    pub rate_limited: Vec<RequestId>,
    /// The requests a broker answered itself because they were not sends it takes (a wrong
    /// method, path or topic: 404; a bad body: 400), in arrival order: they consumed no step
    /// and stored nothing. A request its flow control answered is in
    /// [`rate_limited`](LedgerSnapshot::rate_limited) instead.
    pub refused: Vec<RequestId>,
    /// The messages a broker stored, in the order it stored them (empty on any other
    /// endpoint). Each is also one of its [`effects`](LedgerSnapshot::effects).
    pub messages: Vec<StoredMessage>,
    /// The GOAWAYs the endpoint sent on its HTTP/2 connections, in the order it sent them.
    pub goaways: Vec<GoAwayRecord>,
}

impl LedgerSnapshot {
    /// The request with this id.
    pub fn request(&self, id: RequestId) -> Option<&RequestRecord> {
        self.requests.get(id.index())
    }

    /// How the request with this id ended, if it has.
    pub fn response_to(&self, id: RequestId) -> Option<&ResponseRecord> {
        self.responses.iter().find(|r| r.request == id)
    }

    /// The effects committed under an idempotency key.
    pub fn effects_for_key<'a>(&'a self, key: &'a [u8]) -> impl Iterator<Item = &'a EffectRecord> {
        self.effects
            .iter()
            .filter(move |e| e.key.as_ref().is_some_and(|k| k.as_bytes() == key))
    }
}

/// A shared handle on an endpoint's ledger (cloning shares it).
///
/// ```
/// use retrylab_endpoints::{Endpoint, EndpointConfig, VirtualClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let endpoint = Endpoint::new(EndpointConfig::http("api"), VirtualClock::new());
/// endpoint.on_connect(1);
/// let ledger = endpoint.ledger();
/// assert_eq!(ledger.snapshot().connects.len(), 1);
/// assert_eq!(ledger.requests_received(), 0);
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    inner: Arc<Mutex<LedgerSnapshot>>,
    /// Kept apart from the records: it is consulted before a request's record is built.
    recent: Arc<Mutex<Recent>>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of everything recorded so far.
    pub fn snapshot(&self) -> LedgerSnapshot {
        self.lock().clone()
    }

    /// Moves everything recorded so far out, leaving the ledger empty (records pushed later
    /// start a new history). For the end of a run, where a copy would only be thrown away.
    ///
    /// ```
    /// use retrylab_endpoints::{Endpoint, EndpointConfig, VirtualClock};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let endpoint = Endpoint::new(EndpointConfig::http("api"), VirtualClock::new());
    /// endpoint.on_connect(1);
    /// let ledger = endpoint.ledger();
    /// assert_eq!(ledger.take().connects.len(), 1);
    /// assert!(ledger.snapshot().connects.is_empty());
    /// # }
    /// ```
    pub fn take(&self) -> LedgerSnapshot {
        std::mem::take(&mut *self.lock())
    }

    /// Read the records in place, without copying them.
    pub fn with<R>(&self, read: impl FnOnce(&LedgerSnapshot) -> R) -> R {
        read(&self.lock())
    }

    /// How many requests reached the endpoint.
    pub fn requests_received(&self) -> usize {
        self.lock().requests.len()
    }

    /// How many effects committed.
    pub fn effect_count(&self) -> usize {
        self.lock().effects.len()
    }

    fn lock(&self) -> MutexGuard<'_, LedgerSnapshot> {
        // A panic elsewhere while holding the lock leaves append-only data intact: keep going.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push_connect(&self, record: ConnectRecord) {
        self.lock().connects.push(record);
    }

    /// The id the next pushed request gets. Callers hold the endpoint's state lock across this
    /// and [`Ledger::push_request`], so ids follow script consumption order.
    pub(crate) fn next_request_id(&self) -> RequestId {
        RequestId(self.lock().requests.len() as u64)
    }

    /// What the record of a request with `parts` keeps of its head: copies, shared with the
    /// previous request's where they are the same bytes. Taken when the request is handed
    /// over, so that hyper can reuse its read buffer for the next read.
    pub(crate) fn keep_head(&self, parts: http::request::Parts) -> RequestHead {
        self.recent().head(parts)
    }

    /// What the record of a request keeps of its `body`: a copy, shared with the previous
    /// request's where it is the same bytes.
    pub(crate) fn keep_body(&self, body: &Bytes) -> Bytes {
        self.recent().body(body)
    }

    fn recent(&self) -> MutexGuard<'_, Recent> {
        // Only a cache: a panic while it was held leaves nothing a record relies on.
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push_request(&self, record: RequestRecord) {
        self.lock().requests.push(record);
    }

    /// Appends a response record and returns its index, for [`Ledger::finish_response`].
    pub(crate) fn push_response(&self, record: ResponseRecord) -> usize {
        let mut ledger = self.lock();
        ledger.responses.push(record);
        ledger.responses.len() - 1
    }

    /// The response's last byte was flushed at `end_ms`, `written` bytes into the stream.
    pub(crate) fn finish_response(&self, index: usize, end_ms: u64, written: u64) {
        if let Some(record) = self.lock().responses.get_mut(index) {
            record.end_ms = Some(end_ms);
            record.outbound.end = written.max(record.outbound.start);
        }
    }

    pub(crate) fn push_unreadable(&self, record: UnreadableRecord) {
        self.lock().unreadable.push(record);
    }

    pub(crate) fn push_effect(&self, record: EffectRecord) {
        self.lock().effects.push(record);
    }

    /// Stores a broker's message, a send to `topic` keyed `key`, giving it the id
    /// `make_id(n)` for the `n`-th message stored (from 1), and returns the id.
    pub(crate) fn push_message(
        &self,
        request: RequestId,
        at_ms: u64,
        topic: &Arc<str>,
        key: Option<&Arc<str>>,
        make_id: impl FnOnce(usize) -> Arc<str>,
    ) -> Arc<str> {
        let mut ledger = self.lock();
        let id = make_id(ledger.messages.len() + 1);
        ledger.messages.push(StoredMessage {
            request,
            at_ms,
            topic: Arc::clone(topic),
            key: key.cloned(),
            id: Arc::clone(&id),
        });
        id
    }

    pub(crate) fn push_rate_limited(&self, id: RequestId) {
        self.lock().rate_limited.push(id);
    }

    pub(crate) fn push_refused(&self, id: RequestId) {
        self.lock().refused.push(id);
    }

    pub(crate) fn push_goaway(&self, record: GoAwayRecord) {
        self.lock().goaways.push(record);
    }

    pub(crate) fn push_close(&self, record: CloseRecord) {
        self.lock().closes.push(record);
    }
}
