//! Idempotency-key deduplication: its configuration ([`Dedupe`]), and the table that applies
//! it as a pure state machine (time is passed in).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};

use crate::http::response::{Respond, SentResponse};
use crate::ledger::{DedupeOutcome, RequestId};

/// Which response a deduplicated request gets once the key has committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Replay {
    /// The response of the request that committed (or, if that one sent none, the first
    /// response sent after the commit).
    #[default]
    FirstCommitted,
}

/// Idempotency-key deduplication, as payment APIs do it.
///
/// The in-flight and mismatch answers are responses, not only statuses, so an endpoint can
/// answer as a real API does: a JSON error body, a `Retry-After` on the in-flight conflict.
///
/// ```
/// use retrylab_endpoints::{secs, Dedupe, Step};
///
/// let dedupe = Dedupe::header("Idempotency-Key").in_flight_status(429).ttl(secs(86_400));
/// assert_eq!(dedupe.mismatch.status.as_u16(), 422);
/// let stripe = Dedupe::header("Idempotency-Key")
///     .in_flight(Step::status(409).retry_after(1).body(r#"{"error":{"type":"idempotency_error"}}"#).respond);
/// assert_eq!(stripe.in_flight.body, r#"{"error":{"type":"idempotency_error"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dedupe {
    /// The request header carrying the key.
    pub header: HeaderName,
    /// What a later request with a committed key gets.
    pub replay: Replay,
    /// The answer to a request whose key is still in flight (default a bare 409).
    pub in_flight: Respond,
    /// The answer to a request reusing a key with a different body (default a bare 422).
    pub mismatch: Respond,
    /// How long a committed key is remembered; `None` = forever.
    pub ttl: Option<Duration>,
}

impl Dedupe {
    /// Deduplicate on `header`, with the defaults (replay first committed, 409, 422, no ttl).
    ///
    /// # Panics
    /// If `header` is not a valid header name.
    pub fn header<N>(header: N) -> Self
    where
        N: TryInto<HeaderName>,
        N::Error: Debug,
    {
        let header = match header.try_into() {
            Ok(name) => name,
            Err(e) => panic!("invalid dedupe header name: {e:?}"),
        };
        Self {
            header,
            replay: Replay::FirstCommitted,
            in_flight: Respond::new(StatusCode::CONFLICT),
            mismatch: Respond::new(StatusCode::UNPROCESSABLE_ENTITY),
            ttl: None,
        }
    }

    /// Status for a request whose key is in flight.
    ///
    /// # Panics
    /// If `status` is outside 100..=999.
    pub fn in_flight_status(mut self, status: u16) -> Self {
        self.in_flight = Respond::new(status_code(status));
        self
    }

    /// The whole answer to a request whose key is in flight.
    pub fn in_flight(mut self, respond: Respond) -> Self {
        self.in_flight = respond;
        self
    }

    /// Status for a request reusing a key with another body.
    ///
    /// # Panics
    /// If `status` is outside 100..=999.
    pub fn mismatch_status(mut self, status: u16) -> Self {
        self.mismatch = Respond::new(status_code(status));
        self
    }

    /// The whole answer to a request reusing a key with another body.
    pub fn mismatch(mut self, respond: Respond) -> Self {
        self.mismatch = respond;
        self
    }

    /// Forget committed keys after `ttl`.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

fn status_code(status: u16) -> StatusCode {
    match StatusCode::from_u16(status) {
        Ok(status) => status,
        Err(_) => panic!("invalid HTTP status code {status}"),
    }
}

/// What to do with a request carrying a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DedupeDecision {
    /// Run the step: the key is new (or expired).
    Proceed,
    /// Run the step, but its commit is not a new effect: `of` committed the key and left no
    /// response to replay.
    ProceedAfterCommit {
        /// The request that committed.
        of: RequestId,
    },
    /// Answer with the in-flight response.
    RejectInFlight {
        /// The request in flight with the key.
        of: RequestId,
    },
    /// Answer with the mismatch response.
    RejectMismatch {
        /// The request whose body the key holds.
        of: RequestId,
    },
    /// Answer with the stored response.
    Replay {
        /// The request whose response is replayed: the one that committed, or, when that one
        /// left no response, the rerun that answered after it.
        of: RequestId,
        /// Its response.
        response: Arc<SentResponse>,
    },
}

impl DedupeDecision {
    /// The ledger's view of this decision.
    pub fn outcome(&self) -> DedupeOutcome {
        match self {
            Self::Proceed => DedupeOutcome::First,
            Self::ProceedAfterCommit { of } => DedupeOutcome::AfterCommit { of: *of },
            Self::RejectInFlight { of } => DedupeOutcome::InFlight { of: *of },
            Self::RejectMismatch { of } => DedupeOutcome::Mismatch { of: *of },
            Self::Replay { of, .. } => DedupeOutcome::Replay { of: *of },
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    /// The body of the first request; later ones must match it.
    body: Bytes,
    /// That first request, which a mismatch names.
    first: RequestId,
    in_flight: Option<RequestId>,
    committed_by: Option<RequestId>,
    /// The response replayed for the key, and the request that sent it (not always the one
    /// that committed: a rerun after a commit that left no response answers for the key).
    response: Option<(RequestId, Arc<SentResponse>)>,
    expires_at_ms: Option<u64>,
}

/// Keys and their state. Lifecycle of a key: `begin` (first request, in flight) -> `commit`
/// (its effect) -> `finish` (its response, stored for replay). A key whose request finishes
/// without committing is forgotten, so a retry runs again.
///
/// ```
/// use retrylab_endpoints::{Dedupe, DedupeDecision, DedupeTable, RequestId, SentResponse};
/// use bytes::Bytes;
/// use http::{HeaderValue, StatusCode};
/// use std::sync::Arc;
///
/// let mut table = DedupeTable::new(Dedupe::header("Idempotency-Key"));
/// let key = HeaderValue::from_static("k1");
/// let body = Bytes::from_static(b"{}");
/// assert_eq!(table.begin(&key, &body, RequestId(0), 0), DedupeDecision::Proceed);
/// assert_eq!(table.begin(&key, &body, RequestId(1), 5), DedupeDecision::RejectInFlight { of: RequestId(0) });
/// assert!(table.commit(&key, RequestId(0), 10));
/// let ok = Arc::new(SentResponse::status_only(StatusCode::CREATED));
/// table.finish(&key, RequestId(0), Some(ok.clone()));
/// assert_eq!(table.begin(&key, &body, RequestId(2), 20), DedupeDecision::Replay { of: RequestId(0), response: ok });
/// ```
#[derive(Clone, Debug)]
pub struct DedupeTable {
    config: Dedupe,
    entries: BTreeMap<HeaderValue, Entry>,
    /// The in-flight and mismatch answers, rendered once where they can be.
    in_flight: Canned,
    mismatch: Canned,
}

/// A rejection as it is sent: rendered once, unless its `Retry-After` is an HTTP-date, which
/// is the virtual wall clock at the moment it is sent plus an offset.
#[derive(Clone, Debug)]
enum Canned {
    Rendered(Arc<SentResponse>),
    AtSend(Respond),
}

impl Canned {
    fn new(respond: &Respond) -> Self {
        match respond.prerendered() {
            Some(response) => Canned::Rendered(response),
            None => Canned::AtSend(respond.clone()),
        }
    }

    fn at(&self, now: SystemTime) -> Arc<SentResponse> {
        match self {
            Canned::Rendered(response) => Arc::clone(response),
            Canned::AtSend(respond) => Arc::new(respond.render(now)),
        }
    }
}

impl DedupeTable {
    /// An empty table.
    pub fn new(config: Dedupe) -> Self {
        Self {
            in_flight: Canned::new(&config.in_flight),
            mismatch: Canned::new(&config.mismatch),
            config,
            entries: BTreeMap::new(),
        }
    }

    /// What dedupe answers a request it decided `decision` for, when the virtual wall clock
    /// reads `now`: the configured in-flight or mismatch response, or the replayed one;
    /// `None` when the request runs its step.
    ///
    /// ```
    /// use retrylab_endpoints::{Dedupe, DedupeTable, RequestId, Step};
    /// use bytes::Bytes;
    /// use http::HeaderValue;
    /// use std::time::UNIX_EPOCH;
    ///
    /// let config = Dedupe::header("Idempotency-Key").in_flight(Step::status(409).retry_after(1).respond);
    /// let mut table = DedupeTable::new(config);
    /// let key = HeaderValue::from_static("k1");
    /// let first = table.begin(&key, &Bytes::new(), RequestId(0), 0);
    /// assert!(table.answer(first, UNIX_EPOCH).is_none()); // it runs its step
    /// let second = table.begin(&key, &Bytes::new(), RequestId(1), 5);
    /// let answer = table.answer(second, UNIX_EPOCH).unwrap();
    /// assert_eq!((answer.status.as_u16(), answer.retry_after().unwrap().as_bytes()), (409, &b"1"[..]));
    /// ```
    pub fn answer(&self, decision: DedupeDecision, now: SystemTime) -> Option<Arc<SentResponse>> {
        match decision {
            DedupeDecision::Proceed | DedupeDecision::ProceedAfterCommit { .. } => None,
            DedupeDecision::RejectInFlight { .. } => Some(self.in_flight.at(now)),
            DedupeDecision::RejectMismatch { .. } => Some(self.mismatch.at(now)),
            DedupeDecision::Replay { response, .. } => Some(response),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Dedupe {
        &self.config
    }

    /// A request `id` with `key` and `body` arrives at `now_ms`.
    pub fn begin(
        &mut self,
        key: &HeaderValue,
        body: &Bytes,
        id: RequestId,
        now_ms: u64,
    ) -> DedupeDecision {
        let expired = self.entries.get(key).is_some_and(|e| {
            e.in_flight.is_none() && e.expires_at_ms.is_some_and(|at| at <= now_ms)
        });
        if expired {
            self.entries.remove(key);
        }
        let Some(entry) = self.entries.get_mut(key) else {
            self.entries.insert(
                key.clone(),
                Entry {
                    body: body.clone(),
                    first: id,
                    in_flight: Some(id),
                    committed_by: None,
                    response: None,
                    expires_at_ms: None,
                },
            );
            return DedupeDecision::Proceed;
        };
        // A different body is a client bug whatever the key's state, so it is checked first.
        if entry.body != *body {
            return DedupeDecision::RejectMismatch { of: entry.first };
        }
        if let Some(of) = entry.in_flight {
            return DedupeDecision::RejectInFlight { of };
        }
        match (entry.committed_by, &entry.response) {
            (Some(_), Some((of, response))) => DedupeDecision::Replay {
                of: *of,
                response: Arc::clone(response),
            },
            (Some(of), None) => {
                entry.in_flight = Some(id);
                DedupeDecision::ProceedAfterCommit { of }
            }
            // Uncommitted entries are removed at finish; treat a stray one as new.
            (None, _) => {
                entry.in_flight = Some(id);
                DedupeDecision::Proceed
            }
        }
    }

    /// Request `id` commits at `now_ms`. Returns whether that is a new effect (`false` when the
    /// key had already committed).
    pub fn commit(&mut self, key: &HeaderValue, id: RequestId, now_ms: u64) -> bool {
        let Some(entry) = self.entries.get_mut(key) else {
            return true;
        };
        if entry.committed_by.is_some() {
            return false;
        }
        entry.committed_by = Some(id);
        entry.expires_at_ms = self.config.ttl.map(|ttl| {
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            now_ms.saturating_add(ttl_ms)
        });
        true
    }

    /// Request `id` finished with `response` (`None`: it failed without a response).
    pub fn finish(
        &mut self,
        key: &HeaderValue,
        id: RequestId,
        response: Option<Arc<SentResponse>>,
    ) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        if entry.in_flight != Some(id) {
            return;
        }
        entry.in_flight = None;
        if entry.committed_by.is_none() {
            self.entries.remove(key);
            return;
        }
        if entry.response.is_none() {
            entry.response = response.map(|response| (id, response));
        }
    }

    /// The server crashed: every request in flight ends without a response, as
    /// [`finish`](DedupeTable::finish) with `None` would end it. Committed keys stay (the
    /// table stands for a durable store), so a retry of one is not a new effect; the others
    /// are forgotten, so a retry runs again.
    ///
    /// ```
    /// use retrylab_endpoints::{Dedupe, DedupeDecision, DedupeTable, RequestId};
    /// use bytes::Bytes;
    /// use http::HeaderValue;
    ///
    /// let mut table = DedupeTable::new(Dedupe::header("Idempotency-Key"));
    /// let (a, b) = (HeaderValue::from_static("a"), HeaderValue::from_static("b"));
    /// let body = Bytes::new();
    /// table.begin(&a, &body, RequestId(0), 0);
    /// table.commit(&a, RequestId(0), 0); // committed on arrival, then the crash
    /// table.begin(&b, &body, RequestId(1), 0); // in flight, never committed
    /// table.crash();
    /// assert_eq!(table.begin(&a, &body, RequestId(2), 5), DedupeDecision::ProceedAfterCommit { of: RequestId(0) });
    /// assert_eq!(table.begin(&b, &body, RequestId(3), 5), DedupeDecision::Proceed);
    /// ```
    pub fn crash(&mut self) {
        self.entries.retain(|_, entry| {
            entry.in_flight = None;
            entry.committed_by.is_some()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::secs;
    use http::StatusCode;

    fn key() -> HeaderValue {
        HeaderValue::from_static("k")
    }

    fn body(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    fn ok() -> Arc<SentResponse> {
        Arc::new(SentResponse::status_only(StatusCode::OK))
    }

    #[test]
    fn in_flight_then_replay() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key"));
        assert_eq!(
            t.begin(&key(), &body("a"), RequestId(0), 0),
            DedupeDecision::Proceed
        );
        assert_eq!(
            t.begin(&key(), &body("a"), RequestId(1), 1),
            DedupeDecision::RejectInFlight { of: RequestId(0) }
        );
        assert!(t.commit(&key(), RequestId(0), 2));
        // Committed but not yet answered: still in flight.
        assert_eq!(
            t.begin(&key(), &body("a"), RequestId(2), 2),
            DedupeDecision::RejectInFlight { of: RequestId(0) }
        );
        t.finish(&key(), RequestId(0), Some(ok()));
        let replay = t.begin(&key(), &body("a"), RequestId(3), 3);
        assert_eq!(
            replay,
            DedupeDecision::Replay {
                of: RequestId(0),
                response: ok()
            }
        );
        assert_eq!(replay.outcome(), DedupeOutcome::Replay { of: RequestId(0) });
    }

    #[test]
    fn mismatch_wins_over_any_state() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key"));
        t.begin(&key(), &body("a"), RequestId(0), 0);
        assert_eq!(
            t.begin(&key(), &body("b"), RequestId(1), 0),
            DedupeDecision::RejectMismatch { of: RequestId(0) }
        );
        t.commit(&key(), RequestId(0), 0);
        t.finish(&key(), RequestId(0), Some(ok()));
        assert_eq!(
            t.begin(&key(), &body("b"), RequestId(2), 0),
            DedupeDecision::RejectMismatch { of: RequestId(0) }
        );
    }

    #[test]
    fn uncommitted_finish_forgets_the_key() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key"));
        t.begin(&key(), &body("a"), RequestId(0), 0);
        t.finish(&key(), RequestId(0), Some(ok()));
        assert_eq!(
            t.begin(&key(), &body("other"), RequestId(1), 1),
            DedupeDecision::Proceed
        );
    }

    #[test]
    fn commit_without_response_lets_the_next_run_but_not_commit_again() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key"));
        t.begin(&key(), &body("a"), RequestId(0), 0);
        assert!(t.commit(&key(), RequestId(0), 0));
        t.finish(&key(), RequestId(0), None);
        let next = t.begin(&key(), &body("a"), RequestId(1), 1);
        assert_eq!(
            next,
            DedupeDecision::ProceedAfterCommit { of: RequestId(0) }
        );
        assert!(!t.commit(&key(), RequestId(1), 1));
        t.finish(&key(), RequestId(1), Some(ok()));
        // The replayed response is the rerun's, so the replay names the rerun, not the
        // request that committed and left nothing to replay.
        assert_eq!(
            t.begin(&key(), &body("a"), RequestId(2), 2),
            DedupeDecision::Replay {
                of: RequestId(1),
                response: ok()
            }
        );
    }

    #[test]
    fn ttl_expires_committed_keys() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key").ttl(secs(10)));
        t.begin(&key(), &body("a"), RequestId(0), 0);
        t.commit(&key(), RequestId(0), 1_000);
        t.finish(&key(), RequestId(0), Some(ok()));
        assert!(matches!(
            t.begin(&key(), &body("a"), RequestId(1), 10_999),
            DedupeDecision::Replay { .. }
        ));
        assert_eq!(
            t.begin(&key(), &body("b"), RequestId(2), 11_000),
            DedupeDecision::Proceed
        );
    }

    #[test]
    fn no_ttl_remembers_forever() {
        let mut t = DedupeTable::new(Dedupe::header("idempotency-key"));
        t.begin(&key(), &body("a"), RequestId(0), 0);
        t.commit(&key(), RequestId(0), 0);
        t.finish(&key(), RequestId(0), Some(ok()));
        assert!(matches!(
            t.begin(&key(), &body("a"), RequestId(1), u64::MAX),
            DedupeDecision::Replay { .. }
        ));
    }
}
