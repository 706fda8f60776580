//! The trace: what happened, in virtual time (docs/architecture.md#attempts-time-and-ordering).
//!
//! Records are small `Copy`-friendly structs with interned names, appended while the
//! simulation runs; text is only produced when a trace is rendered (a timeline for humans, a
//! YAML document for snapshots). Every record carries the ids the checks need: `client_id`,
//! `call_id`, `conn_id`, and whether an attempt used a new or a reused connection.

use std::io;

use serde::Serialize;

use crate::policy::Observed;

pub(crate) mod assemble;
mod call_windows;
mod events;
pub(crate) mod index;
pub(crate) mod instants;
mod rebuild;
pub(crate) mod redaction;
mod render;

pub use fleet::{Bucket, FleetView};
pub use instants::seconds;
pub(crate) use interner::Interner;
mod fleet;
pub(crate) mod interner;
mod io_kind;
mod json;
mod long_poll;
pub(crate) mod record;
mod wall_clock;

pub use io_kind::IoKind;
pub(crate) use long_poll::{LongPoll, Spent};
pub(crate) use wall_clock::{EPOCH_KEY, epoch_entry};

/// An interned string: an index into [`Trace::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Name(pub u32);

/// How an attempt got its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnUse {
    /// The attempt opened a new connection.
    New,
    /// The attempt reused a pooled connection.
    Reused,
    /// No connection is known (the connect failed, or the request never left the client).
    Unknown,
}

/// What one attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// A response head arrived with this status.
    Status(u16),
    /// The connect was answered with a reset.
    Refused,
    /// The client gave up while connecting (black-hole, partition).
    ConnectAbandoned,
    /// The connection was reset before the response completed.
    Reset,
    /// The connection was closed (FIN) before a response head arrived.
    Closed,
    /// The client gave up waiting for the response head (its own timeout, or it dropped the
    /// request future).
    Abandoned,
    /// Another transport error, by kind.
    Io(IoKind),
    /// HTTP/2: the server reset the attempt's stream with `RST_STREAM` and this code (before
    /// the head, or, as a `body_error`, in the middle of the body).
    StreamReset(retrylab_endpoints::H2Code),
    /// HTTP/2: a GOAWAY with this code arrived whose last stream id is below the attempt's
    /// stream: the server never processed the request (RFC 9113 section 6.8).
    GoAway(retrylab_endpoints::H2Code),
    /// The run ended while the attempt was still waiting.
    Unfinished,
}

impl AttemptOutcome {
    /// The policy's view of this outcome; `None` for an attempt the run cut short
    /// (`Unfinished`), which no policy can judge.
    ///
    /// A client that gave up (while connecting or while waiting for the head) timed out from
    /// the policy's point of view; a reset or a close before the head are transport errors of
    /// kind `ConnectionReset` and `UnexpectedEof`.
    pub fn observed(self) -> Option<Observed> {
        Some(match self {
            AttemptOutcome::Status(status) => Observed::Status(status),
            AttemptOutcome::Refused => Observed::Refused,
            AttemptOutcome::ConnectAbandoned | AttemptOutcome::Abandoned => Observed::Timeout,
            AttemptOutcome::Reset => Observed::Transport(io::ErrorKind::ConnectionReset),
            AttemptOutcome::Closed => Observed::Transport(io::ErrorKind::UnexpectedEof),
            AttemptOutcome::Io(kind) => Observed::Transport(kind.0),
            // A retry policy sees the stream's end as its connection's would look: a reset.
            // A client that retries transparently reads `refused_stream` and GOAWAY before
            // any policy does (`AttemptOutcome::is_unprocessed`).
            AttemptOutcome::StreamReset(_) | AttemptOutcome::GoAway(_) => {
                Observed::Transport(io::ErrorKind::ConnectionReset)
            }
            AttemptOutcome::Unfinished => return None,
        })
    }

    /// Whether the server never processed the attempt's request, so that it is safe to retry
    /// it whatever its method (RFC 9113 section 8.7): its stream was refused with
    /// `REFUSED_STREAM`, or was above a GOAWAY's last stream id. gRPC (A6) retries these
    /// transparently, outside the retry policy's count.
    pub fn is_unprocessed(&self) -> bool {
        matches!(
            self,
            AttemptOutcome::StreamReset(retrylab_endpoints::H2Code::REFUSED_STREAM)
                | AttemptOutcome::GoAway(_)
        )
    }

    /// The HTTP status, when a response head arrived.
    pub fn status(&self) -> Option<u16> {
        match self {
            AttemptOutcome::Status(status) => Some(*status),
            _ => None,
        }
    }
}

/// How an attempt ended, once it had started receiving (or failed to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    /// The last body byte was delivered.
    Body,
    /// The client dropped the response before its end.
    Dropped,
    /// A transport error surfaced.
    Error,
    /// The run ended first.
    Unfinished,
}

/// Who decided an attempt's answer: the endpoint's dedupe (a replay, a rejection, or a rerun
/// of a step after a commit), its rate limiter, or a broker that refused the request
/// (docs/scenario-format.md#timeline-labels). `of` is the harness-wide id of the attempt the
/// answer refers to, `None` when that request was no attempt of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnsweredBy {
    /// Dedupe replayed the response attempt `of` got: the attempt that committed the key, or
    /// the rerun that answered after a commit that left no response.
    Replay {
        /// The attempt whose response was replayed.
        of: Option<u32>,
    },
    /// Dedupe's in-flight answer: attempt `of` holds the key and has not finished.
    InFlight {
        /// The attempt in flight.
        of: Option<u32>,
    },
    /// Dedupe's mismatch answer: the key came with attempt `of`'s body, and this one differs.
    Mismatch {
        /// The attempt whose body the key holds.
        of: Option<u32>,
    },
    /// The key committed with attempt `of`, which left no response to replay: the step ran
    /// again, and committed no second effect.
    Rerun {
        /// The attempt that committed.
        of: Option<u32>,
    },
    /// The rate limiter found its bucket empty and answered.
    RateLimited,
    /// A broker answered the request itself, as no send it takes (a wrong method, path or
    /// topic: 404; a bad body: 400): no step saw it.
    RefusedByBroker,
}

impl AnsweredBy {
    /// The attempt the answer refers to, if it names one.
    pub fn of(self) -> Option<u32> {
        match self {
            AnsweredBy::Replay { of }
            | AnsweredBy::InFlight { of }
            | AnsweredBy::Mismatch { of }
            | AnsweredBy::Rerun { of } => of,
            AnsweredBy::RateLimited | AnsweredBy::RefusedByBroker => None,
        }
    }
}

/// One attempt: one HTTP request issued by the client (docs/architecture.md#attempts-time-and-ordering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// Harness-wide attempt number, from 1, in start order.
    pub id: u32,
    /// Which client instance issued it (0 unless a fleet runs).
    pub client_id: u32,
    /// Which logical call it belongs to (0-based, per run).
    pub call_id: u32,
    /// Its position within the call, from 1.
    pub n: u32,
    /// The connection it used, when known.
    pub conn_id: Option<u64>,
    /// New or reused connection.
    pub conn: ConnUse,
    /// The HTTP/2 stream it was sent on, as the endpoint read it (`None` on HTTP/1.1, and
    /// for a request no endpoint read).
    pub stream_id: Option<u32>,
    /// Request method.
    pub method: Name,
    /// Request path (with query).
    pub path: Name,
    /// `start(n)`: the call instant, in ms since the run started.
    pub start_ms: u64,
    /// `head(n)`: the response head reached the client.
    pub head_ms: Option<u64>,
    /// `end(n)`: last body byte, drop, or error.
    pub end_ms: Option<u64>,
    /// What it came to.
    pub outcome: AttemptOutcome,
    /// How it ended.
    pub end: EndKind,
    /// The transport failure that broke the body after the head arrived (the outcome keeps
    /// the head's status).
    pub body_error: Option<AttemptOutcome>,
    /// The raw `Retry-After` value of the response, when there was one.
    pub retry_after: Option<Name>,
    /// The raw `x-amz-retry-after` value of the response (its first field line, as the AWS
    /// policies read it), when there was one; `None` on a rebuilt attempt, whose endpoint
    /// records only `Retry-After`.
    pub amz_retry_after: Option<Name>,
    /// hyper-util resent the request on another connection (the pooled one was closed).
    pub resent: bool,
    /// Reconstructed from the network and ledger rather than seen on a harness surface.
    pub reconstructed: bool,
    /// Who answered, when it was the endpoint's dedupe or rate limiter rather than a step.
    pub answered_by: Option<AnsweredBy>,
    /// The gRPC status the endpoint sent (in trailers, or in a trailers-only head) and its
    /// pushback; `None` for a plain HTTP answer.
    pub grpc: Option<GrpcAnswer>,
}

/// What a gRPC answer told the client, as the endpoint sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcAnswer {
    /// The `grpc-status`, 0 to 16.
    pub code: u8,
    /// The raw `grpc-retry-pushback-ms`, when there was one.
    pub pushback: Option<Name>,
    /// The `grpc-message` as text (before its percent-encoding), when there was one.
    pub message: Option<Name>,
}

impl GrpcAnswer {
    /// The answer a ledger's response record holds, with its pushback interned.
    pub(crate) fn of(
        response: &retrylab_endpoints::ResponseRecord,
        interner: &mut Interner,
    ) -> Option<GrpcAnswer> {
        let reply = response.grpc.as_ref()?;
        Some(GrpcAnswer {
            code: reply.code.code(),
            pushback: reply
                .pushback
                .as_ref()
                .map(|v| interner.intern(&String::from_utf8_lossy(v.as_bytes()))),
            message: reply.message.as_deref().map(|m| interner.intern(m)),
        })
    }

    /// The status's name as gRPC spells it (`UNAVAILABLE`).
    pub fn name(self) -> &'static str {
        retrylab_endpoints::GrpcCode::new(u32::from(self.code))
            .map_or("UNKNOWN", retrylab_endpoints::GrpcCode::name)
    }
}

/// Who closed a connection.
pub use retrylab_endpoints::Side;

/// What happened to a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnEventKind {
    /// The client started connecting.
    Connect,
    /// The connect completed.
    Connected,
    /// The endpoint refused it (RST after one round trip).
    Refused,
    /// The client gave up before the connect completed.
    ConnectAbandoned,
    /// An attempt reused the connection.
    Reused,
    /// A FIN was sent.
    Fin(Side),
    /// An RST was sent.
    Rst(Side),
    /// HTTP/2: the endpoint sent a GOAWAY. The streams above `last_stream_id` were never
    /// processed; graceful lets the others finish, abrupt closes the connection under them.
    GoAway {
        /// The highest stream id the endpoint had accepted.
        last_stream_id: u32,
        /// Its error code (`no_error` when graceful).
        code: retrylab_endpoints::H2Code,
        /// Whether the streams in flight finish.
        graceful: bool,
    },
}

/// One connection event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConnEvent {
    /// When, in ms since the run started.
    pub at_ms: u64,
    /// Which connection.
    pub conn_id: u64,
    /// The endpoint it goes to.
    pub endpoint: Name,
    /// What happened.
    pub kind: ConnEventKind,
}

/// A scheduled network fault starting or ending (`network.faults`, sim backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FaultEvent {
    /// When, in ms since the run started.
    pub at_ms: u64,
    /// The endpoint it hit.
    pub endpoint: Name,
    /// What happened.
    pub kind: FaultEventKind,
}

/// What a fault did to an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FaultEventKind {
    /// A partition cut the endpoint off.
    Partitioned,
    /// The partition healed.
    Healed,
    /// The endpoint crashed: its connections were reset.
    Crashed,
    /// The endpoint came back after a crash.
    Restarted,
    /// On turmoil, `turmoil.hold` began: messages to and from the endpoint wait.
    Held,
    /// The hold ended: the messages that waited go on.
    Released,
}

impl FaultEventKind {
    /// The word the timeline and snapshots use.
    pub fn text(self) -> &'static str {
        match self {
            FaultEventKind::Partitioned => "partitioned",
            FaultEventKind::Healed => "healed",
            FaultEventKind::Crashed => "crashed",
            FaultEventKind::Restarted => "restarted",
            FaultEventKind::Held => "held",
            FaultEventKind::Released => "released",
        }
    }
}

/// A committed effect at an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    /// When it was committed.
    pub at_ms: u64,
    /// Which endpoint committed it.
    pub endpoint: Name,
    /// The client of the call it is attributed to (0 unless a fleet runs).
    pub client_id: u32,
    /// The call it is attributed to, when known.
    pub call_id: Option<u32>,
    /// The attempt whose request caused it, when known.
    pub attempt_id: Option<u32>,
    /// The idempotency key it carried.
    pub key: Option<Name>,
}

/// A message a broker stored (each is also one of the trace's effects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// When it was stored.
    pub at_ms: u64,
    /// Which broker stored it.
    pub endpoint: Name,
    /// Its topic.
    pub topic: Name,
    /// Its key, if the send gave one.
    pub key: Option<Name>,
    /// The id the broker gave it.
    pub id: Name,
    /// The call it is attributed to, when known (as its effect is).
    pub call_id: Option<u32>,
    /// The attempt whose send stored it, when known.
    pub attempt_id: Option<u32>,
}

/// How a logical call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Which client instance.
    pub client_id: u32,
    /// The call id (0-based).
    pub call_id: u32,
    /// When the closure was called.
    pub start_ms: u64,
    /// When it returned, if it did.
    pub end_ms: Option<u64>,
    /// `Ok` or `Err`, with the `Debug` text of the value (rendered once per call).
    pub result: CallResult,
}

/// The value a call's closure returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallResult {
    /// `Ok(value)`.
    Success(String),
    /// `Err(error)`.
    Failure(String),
    /// The run stopped before the call returned.
    Stopped,
    /// The call's future panicked (the message); the run ended there.
    Panicked(String),
}

/// What the reference client decided after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionKind {
    /// Retry after `delay_ms`, measured from the attempt's `from` instant.
    Retry {
        /// The delay, in whole ms.
        delay_ms: u64,
        /// `end`, `head` or `start` of the attempt.
        from: crate::policy::Anchor,
    },
    /// Stop, for this reason.
    Stop(crate::policy::StopReason),
}

/// A decision of the reference client, with the policy state after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecisionRecord {
    /// The attempt it follows.
    pub attempt_id: u32,
    /// When it was taken.
    pub at_ms: u64,
    /// What was decided.
    pub kind: DecisionKind,
    /// The policy's state after the decision (e.g. a retry quota), when it has one.
    pub state: Option<Name>,
}

/// A request that reached an endpoint after its call had returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateRequest {
    /// Arrival instant.
    pub at_ms: u64,
    /// The endpoint.
    pub endpoint: Name,
    /// The client whose call it belongs to (0 unless a fleet runs).
    pub client_id: u32,
    /// The call it belongs to.
    pub call_id: u32,
    /// The attempt, when known.
    pub attempt_id: Option<u32>,
}

/// The whole timeline of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Pinned configuration, printed first (client and server settings, seed, backend).
    pub header: Vec<(String, String)>,
    /// Interned names.
    pub names: Vec<String>,
    /// Attempts, ordered by (start, `conn_id`, id).
    pub attempts: Vec<Attempt>,
    /// Connection events, ordered by (instant, `conn_id`, seq).
    pub connections: Vec<ConnEvent>,
    /// Network faults starting and ending, in the order they happened.
    pub faults: Vec<FaultEvent>,
    /// Committed effects.
    pub effects: Vec<Effect>,
    /// Messages the brokers stored, in the order they were stored (by instant, then by
    /// endpoint).
    pub messages: Vec<Message>,
    /// Calls, in call order.
    pub calls: Vec<Call>,
    /// Requests that arrived after their call returned.
    pub late_requests: Vec<LateRequest>,
    /// Decisions of the reference client, in order.
    pub decisions: Vec<DecisionRecord>,
    /// Attempts (by id, ascending) rebuilt from what the endpoints received, that started
    /// before any call of their client had: no call can be named for them. Their `call_id`
    /// is 0 and their `n` 0, and no check counts them for a call (they are left out of every
    /// call's attempts); the report lists them.
    pub unattributed: Vec<u32>,
    /// The virtual instant the run ended.
    pub end_ms: u64,
}

impl Trace {
    /// Whether the run was on real sockets (the header says `backend: real`): its instants
    /// are measured in real time, not exact.
    pub(crate) fn on_real_sockets(&self) -> bool {
        self.header
            .iter()
            .any(|(key, value)| key == "backend" && value == "real")
    }

    /// The text of an interned name.
    pub fn name(&self, name: Name) -> &str {
        self.names.get(name.0 as usize).map_or("?", String::as_str)
    }

    /// The attempts of one call, in order. Unattributed attempts are no call's, though
    /// their `call_id` reads 0.
    pub fn call_attempts(&self, call_id: u32) -> impl Iterator<Item = &Attempt> {
        self.attempts
            .iter()
            .filter(move |a| a.call_id == call_id && !self.is_unattributed(a.id))
    }

    /// Whether the attempt `id` is one no call could be named for (see
    /// [`Trace::unattributed`]); a binary search, as the ids are kept sorted.
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// let report = Scenario::builder("every attempt has its call")
    ///     .endpoint("api", endpoint().script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(100)).max_attempts(2))
    ///     .build()
    ///     .unwrap()
    ///     .run_builtin();
    /// let trace = report.trace();
    /// assert!(trace.attempts.iter().all(|a| !trace.is_unattributed(a.id)));
    /// assert_eq!(trace.call_attempts(0).count(), 2);
    /// ```
    pub fn is_unattributed(&self, id: u32) -> bool {
        !self.unattributed.is_empty() && self.unattributed.binary_search(&id).is_ok()
    }

    /// `gap(n+1) = start(n+1) - end(n)` within the call of `attempt`, or `None` for the first
    /// attempt of a call (or when the previous attempt never ended), and for an
    /// unattributed attempt, which has no call to have a gap in.
    pub fn gap_before(&self, attempt: &Attempt) -> Option<u64> {
        if self.is_unattributed(attempt.id) {
            return None;
        }
        let previous = self
            .call_attempts(attempt.call_id)
            .filter(|a| a.client_id == attempt.client_id && a.n + 1 == attempt.n)
            .last()?;
        let end = previous.end_ms?;
        Some(attempt.start_ms.saturating_sub(end))
    }
}

#[cfg(test)]
mod tests;
