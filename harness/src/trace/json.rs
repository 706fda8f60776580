//! The trace as a structured document: stable field order (declaration order), names
//! resolved, instants in whole milliseconds. What `retrylab run --format json` prints and
//! what tools diff.

use serde::Serialize;

use super::index::TraceIndex;
use super::render::answer_label;
use crate::trace::{
    AnsweredBy, AttemptOutcome, CallResult, ConnEventKind, ConnUse, DecisionKind, EndKind,
    FaultEventKind, GrpcAnswer, Name, Trace,
};

#[derive(Serialize)]
struct TraceDoc<'a> {
    header: Vec<(&'a str, &'a str)>,
    calls: Vec<CallDoc<'a>>,
    attempts: Vec<AttemptDoc<'a>>,
    decisions: Vec<DecisionDoc<'a>>,
    connections: Vec<ConnDoc<'a>>,
    faults: Vec<FaultDoc<'a>>,
    effects: Vec<EffectDoc<'a>>,
    /// Only when a broker stored messages, so that other traces read as before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    messages: Vec<MessageDoc<'a>>,
    late_requests: Vec<LateDoc<'a>>,
    /// Only when some attempt could be attributed to no call, so that other traces read as
    /// before.
    #[serde(skip_serializing_if = "<[u32]>::is_empty")]
    unattributed_attempts: &'a [u32],
    end_ms: u64,
    /// Only when more than one client made calls, so that other traces read as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    fleet: Option<super::FleetView>,
}

#[derive(Serialize)]
struct CallDoc<'a> {
    client_id: u32,
    call_id: u32,
    start_ms: u64,
    end_ms: Option<u64>,
    outcome: &'static str,
    value: Option<&'a str>,
}

#[derive(Serialize)]
struct AttemptDoc<'a> {
    id: u32,
    client_id: u32,
    call_id: u32,
    n: u32,
    conn_id: Option<u64>,
    conn: ConnUse,
    /// Only on HTTP/2, so an HTTP/1.1 trace's JSON reads as it always has.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_id: Option<u32>,
    method: &'a str,
    path: &'a str,
    start_ms: u64,
    head_ms: Option<u64>,
    end_ms: Option<u64>,
    gap_ms: Option<u64>,
    outcome: AttemptOutcome,
    end: EndKind,
    body_error: Option<AttemptOutcome>,
    retry_after: Option<&'a str>,
    resent: bool,
    reconstructed: bool,
    /// The timeline's label of the answer, without its parentheses.
    label: Option<String>,
    answered_by: Option<AnsweredBy>,
    /// Only for a gRPC answer, so other traces' JSON reads as it always has: its status's
    /// name (`UNAVAILABLE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    grpc_status: Option<&'static str>,
    /// The raw `grpc-retry-pushback-ms` of a gRPC answer that had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    grpc_pushback: Option<&'a str>,
    /// The `grpc-message` of a gRPC answer that had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    grpc_message: Option<&'a str>,
}

#[derive(Serialize)]
struct DecisionDoc<'a> {
    attempt_id: u32,
    at_ms: u64,
    decision: &'static str,
    delay_ms: Option<u64>,
    from: Option<&'static str>,
    stop_reason: Option<&'static str>,
    state: Option<&'a str>,
}

#[derive(Serialize)]
struct ConnDoc<'a> {
    at_ms: u64,
    conn_id: u64,
    endpoint: &'a str,
    event: ConnEventKind,
}

#[derive(Serialize)]
struct FaultDoc<'a> {
    at_ms: u64,
    endpoint: &'a str,
    event: FaultEventKind,
}

#[derive(Serialize)]
struct EffectDoc<'a> {
    at_ms: u64,
    endpoint: &'a str,
    /// Only in a fleet's trace, so that other traces read as before.
    #[serde(skip_serializing_if = "is_zero")]
    client_id: u32,
    call_id: Option<u32>,
    attempt_id: Option<u32>,
    key: Option<&'a str>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Serialize)]
struct MessageDoc<'a> {
    at_ms: u64,
    endpoint: &'a str,
    topic: &'a str,
    key: Option<&'a str>,
    id: &'a str,
    call_id: Option<u32>,
    attempt_id: Option<u32>,
}

#[derive(Serialize)]
struct LateDoc<'a> {
    at_ms: u64,
    endpoint: &'a str,
    client_id: u32,
    call_id: u32,
    attempt_id: Option<u32>,
}

impl Trace {
    /// The trace as JSON: every record, names resolved, fields in a fixed order.
    ///
    /// ```
    /// let trace = retrylab::trace::Trace::default();
    /// let json = trace.to_json();
    /// assert!(json.starts_with(r#"{"header":[],"calls":[],"attempts":[]"#));
    /// ```
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serializing it cannot fail.
        self.with_doc(|doc| serde_json::to_string(doc).unwrap_or_default())
    }

    /// [`Trace::to_json`] as a JSON value, for a document that holds the trace among other
    /// things: no text to write and parse back. An error would be one of the harness.
    ///
    /// ```
    /// let trace = retrylab::trace::Trace::default();
    /// let value = trace.to_json_value().unwrap();
    /// assert_eq!(value["attempts"], serde_json::json!([]));
    /// ```
    pub fn to_json_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        self.with_doc(|doc| serde_json::to_value(doc))
    }

    /// Builds the trace's document and hands it to `write`.
    fn with_doc<T>(&self, write: impl FnOnce(&TraceDoc<'_>) -> T) -> T {
        let name = |n: Name| self.name(n);
        let index = TraceIndex::new(self);
        let doc = TraceDoc {
            header: self
                .header
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
            calls: self.call_docs(),
            attempts: self.attempt_docs(&index),
            decisions: self.decision_docs(),
            connections: self
                .connections
                .iter()
                .map(|c| ConnDoc {
                    at_ms: c.at_ms,
                    conn_id: c.conn_id,
                    endpoint: name(c.endpoint),
                    event: c.kind,
                })
                .collect(),
            faults: self
                .faults
                .iter()
                .map(|f| FaultDoc {
                    at_ms: f.at_ms,
                    endpoint: name(f.endpoint),
                    event: f.kind,
                })
                .collect(),
            effects: self
                .effects
                .iter()
                .map(|e| EffectDoc {
                    at_ms: e.at_ms,
                    endpoint: name(e.endpoint),
                    client_id: e.client_id,
                    call_id: e.call_id,
                    attempt_id: e.attempt_id,
                    key: e.key.map(name),
                })
                .collect(),
            messages: self
                .messages
                .iter()
                .map(|m| MessageDoc {
                    at_ms: m.at_ms,
                    endpoint: name(m.endpoint),
                    topic: name(m.topic),
                    key: m.key.map(name),
                    id: name(m.id),
                    call_id: m.call_id,
                    attempt_id: m.attempt_id,
                })
                .collect(),
            late_requests: self
                .late_requests
                .iter()
                .map(|l| LateDoc {
                    at_ms: l.at_ms,
                    endpoint: name(l.endpoint),
                    client_id: l.client_id,
                    call_id: l.call_id,
                    attempt_id: l.attempt_id,
                })
                .collect(),
            unattributed_attempts: &self.unattributed,
            end_ms: self.end_ms,
            fleet: self.fleet(),
        };
        write(&doc)
    }

    /// The calls, with their outcomes in words.
    fn call_docs(&self) -> Vec<CallDoc<'_>> {
        self.calls
            .iter()
            .map(|c| {
                let (outcome, value) = match &c.result {
                    CallResult::Success(v) => ("success", Some(v.as_str())),
                    CallResult::Failure(e) => ("failure", Some(e.as_str())),
                    CallResult::Stopped => ("stopped", None),
                    CallResult::Panicked(m) => ("panicked", Some(m.as_str())),
                };
                CallDoc {
                    client_id: c.client_id,
                    call_id: c.call_id,
                    start_ms: c.start_ms,
                    end_ms: c.end_ms,
                    outcome,
                    value,
                }
            })
            .collect()
    }

    /// The attempts, with their gaps and the labels of answers given by dedupe or a rate
    /// limiter.
    fn attempt_docs<'a>(&'a self, index: &TraceIndex<'a>) -> Vec<AttemptDoc<'a>> {
        let name = |n: Name| self.name(n);
        self.attempts
            .iter()
            .enumerate()
            .map(|(i, a)| AttemptDoc {
                id: a.id,
                client_id: a.client_id,
                call_id: a.call_id,
                n: a.n,
                conn_id: a.conn_id,
                conn: a.conn,
                stream_id: a.stream_id,
                method: name(a.method),
                path: name(a.path),
                start_ms: a.start_ms,
                head_ms: a.head_ms,
                end_ms: a.end_ms,
                gap_ms: index.gap(i),
                outcome: a.outcome,
                end: a.end,
                body_error: a.body_error,
                retry_after: a.retry_after.map(name),
                resent: a.resent,
                reconstructed: a.reconstructed,
                label: answer_label(
                    a,
                    a.answered_by
                        .and_then(AnsweredBy::of)
                        .and_then(|id| index.attempt(id)),
                ),
                answered_by: a.answered_by,
                grpc_status: a.grpc.map(GrpcAnswer::name),
                grpc_pushback: a.grpc.and_then(|g| g.pushback).map(name),
                grpc_message: a.grpc.and_then(|g| g.message).map(name),
            })
            .collect()
    }

    /// The reference client's decisions, in words.
    fn decision_docs(&self) -> Vec<DecisionDoc<'_>> {
        let name = |n: Name| self.name(n);
        self.decisions
            .iter()
            .map(|d| {
                let (decision, delay_ms, from, stop_reason) = match d.kind {
                    DecisionKind::Retry { delay_ms, from } => {
                        ("retry", Some(delay_ms), Some(from.as_str()), None)
                    }
                    DecisionKind::Stop(reason) => ("stop", None, None, Some(reason.as_str())),
                };
                DecisionDoc {
                    attempt_id: d.attempt_id,
                    at_ms: d.at_ms,
                    decision,
                    delay_ms,
                    from,
                    stop_reason,
                    state: d.state.map(name),
                }
            })
            .collect()
    }
}
