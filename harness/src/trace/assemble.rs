//! The trace of one run, assembled at its end from what the client surfaces recorded, what
//! the network logged and what the endpoints' ledgers hold; attempts of clients that only use
//! `env.connector()` are reconstructed from the network's segments and the ledgers, and on
//! the real backend, which has no segment log, from the instants the endpoints recorded.

use std::collections::BTreeMap;

use retrylab_endpoints::wire::{self, HAND_OFF_HEADER_NAME, TagHeaders as _};
use retrylab_endpoints::{
    CloseKind, DedupeOutcome, Endpoint, LedgerSnapshot, RequestId, RequestRecord, ResponseOutcome,
};

use super::call_windows::CallWindows;
use super::record::Recorder;
use super::{
    AnsweredBy, Attempt, AttemptOutcome, Call, ConnEvent, ConnEventKind, ConnUse, Effect, EndKind,
    FaultEvent, FaultEventKind, Interner, LateRequest, Message, Name, Side, Trace, seconds,
};
use crate::backend::sim::{ConnId, Dir, NetEvent, NetLog, SegmentKind};
use crate::backend::{LinkFault, Net};
use crate::policy::RetryAfterValue;

/// What a run leaves behind, besides the trace.
pub(crate) struct Assembled {
    /// The run's trace.
    pub(crate) trace: Trace,
    /// Requests that matched no route, one sentence each (answered 404).
    pub(crate) unmatched: Vec<String>,
    /// Each endpoint's ledger, by endpoint name, in the scenario's order.
    pub(crate) ledgers: Vec<(String, LedgerSnapshot)>,
    /// The (client, call) of each request of each ledger (in the order of `ledgers`, by
    /// request index): `None` for a hand-off, and for a request no call of its client could
    /// be found for, which no check may count for a call it did not belong to.
    pub(crate) request_calls: Vec<Vec<Option<(u32, u32)>>>,
}

/// Assembles the trace from every source. `header` is the trace header (backend, seed, the
/// pinned configuration); `clients` the run's client instances (`operation.clients`), which
/// tells the harness's idempotency keys from look-alikes.
pub(crate) fn assemble(
    header: Vec<(String, String)>,
    end_ms: u64,
    clients: u32,
    calls: Vec<Call>,
    recorder: Recorder,
    network: &Net,
    endpoints: &[(String, Endpoint)],
) -> Assembled {
    let endpoint_names: Vec<Name> = endpoints
        .iter()
        .map(|(name, _)| recorder.intern(name))
        .collect();
    let ledgers: Vec<LedgerSnapshot> = endpoints
        .iter()
        // Moved out, not copied: the run is over and the report owns the records from here.
        .map(|(_, endpoint)| endpoint.ledger().take())
        .collect();
    let log = network.take_log();
    let decisions = recorder.take_decisions();
    let clients_of_conns = recorder.take_clients_of_conns();
    let fleet = calls.iter().any(|c| c.client_id != 0);
    // A fleet's calls by (client, call), looked up once per tagged request: they are filed
    // in the order they started, so no call's id is its index.
    let fleet_calls: BTreeMap<(u32, u32), usize> = if fleet {
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.client_id, c.call_id), i))
            .collect()
    } else {
        BTreeMap::new()
    };
    let (mut attempts, names) = recorder.finish();
    let mut interner = Interner::from_names(names);
    let mut effects = Vec::new();
    let mut messages = Vec::new();
    let mut late_requests = Vec::new();
    let mut unmatched = Vec::new();
    let mut request_calls = Vec::with_capacity(ledgers.len());
    // Rebuilt attempts that started before any call of their client had: no call to give.
    let mut unattributed = Vec::new();
    // Built on first use: only clients that bypass the harness surfaces need it.
    let mut segments: Option<SegmentIndex> = None;
    // Without a segment log (real sockets, turmoil), attempts are rebuilt from the
    // endpoints' instants.
    let from_endpoints = !network.logs_segments();
    let windows = CallWindows::new(&calls);

    for (index, ledger) in ledgers.iter().enumerate() {
        let endpoint = endpoint_names[index];
        let responses = ResponseIndex::new(ledger);
        // The attempt each request of this ledger was, by request index: dedupe's answers
        // name earlier requests, which the timeline shows as attempts.
        let mut attempt_of: Vec<Option<u32>> = Vec::with_capacity(ledger.requests.len());
        let mut call_of: Vec<Option<(u32, u32)>> = Vec::with_capacity(ledger.requests.len());
        for request in &ledger.requests {
            let attempt_id = wire::attempt_tag(&request.headers);
            let call_id = wire::call_tag(&request.headers);
            let answered_by = answered_by(ledger, request, &attempt_of);
            if request.route.is_none() {
                // A rate limiter answers before routing: such a request got its answer.
                let answered = if answered_by == Some(AnsweredBy::RateLimited) {
                    "answered by the rate limiter"
                } else {
                    "answered 404"
                };
                unmatched.push(format!(
                    "{} {} at {} on `{}` matched no route ({answered})",
                    request.method,
                    request.uri,
                    seconds(request.at_ms),
                    interner.name(endpoint)
                ));
            }
            // By the parsed name: no case folding over every header of every request.
            if request.headers.first_value(&HAND_OFF_HEADER_NAME).is_some() {
                // A built-in client's dead-letter hand-off: an effect, not an attempt.
                attempt_of.push(None);
                call_of.push(None);
                continue;
            }
            match attempt_id.and_then(|id| attempts.get_mut((id as usize).checked_sub(1)?)) {
                Some(attempt) => {
                    attempt_of.push(Some(attempt.id));
                    call_of.push(Some((attempt.client_id, attempt.call_id)));
                    // A request resent on another connection is the same attempt: the
                    // answer it shows is that of its last request.
                    attempt.answered_by = answered_by;
                    if attempt.conn_id.is_none() {
                        attempt.conn_id = Some(request.conn_id);
                        attempt.conn = if request.seq == 1 {
                            ConnUse::New
                        } else {
                            ConnUse::Reused
                        };
                    }
                }
                None => {
                    let response = responses.get(request.id.index());
                    let instants = if from_endpoints {
                        Instants::Endpoint
                    } else {
                        Instants::Segments(segments.get_or_insert_with(|| SegmentIndex::new(&log)))
                    };
                    let id = attempts.len() as u32 + 1;
                    let mut attempt = reconstruct(instants, &mut interner, request, response, id);
                    // The client that opened the connection made the request (client 0
                    // unless a fleet's other client did); the call is that client's call
                    // running when it started.
                    let client = clients_of_conns.get(&request.conn_id).copied().unwrap_or(0);
                    attempt.client_id = client;
                    let call = windows.call_at(client, attempt.start_ms);
                    match call {
                        Some(call) => attempt.call_id = call,
                        // Its `call_id` stays 0, and the index leaves it out of call 0.
                        None => unattributed.push(id),
                    }
                    attempt.answered_by = answered_by;
                    attempts.push(attempt);
                    attempt_of.push(Some(id));
                    call_of.push(call.map(|call| (client, call)));
                    // Without a call tag a request names no call; one that arrived while no
                    // call of its client was running came from one of its calls that had
                    // returned (a task it left behind, say). Other clients' calls, running
                    // or not, say nothing about it.
                    let returned = call_id
                        .is_none()
                        .then(|| windows.returned_before(client, request.at_ms))
                        .flatten();
                    if let Some(call_id) = returned {
                        late_requests.push(LateRequest {
                            at_ms: request.at_ms,
                            endpoint,
                            client_id: client,
                            call_id,
                            attempt_id: Some(id),
                        });
                    }
                }
            }
            if let Some(call_id) = call_id {
                // The call of the request's client: in a fleet, every client has a call 0,
                // and the harness's surfaces send the client's tag beside the call's.
                let client_id = if fleet {
                    wire::client_tag(&request.headers).unwrap_or(0)
                } else {
                    0
                };
                let call = if fleet {
                    fleet_calls
                        .get(&(client_id, call_id))
                        .and_then(|&i| calls.get(i))
                } else {
                    call_by_id(&calls, call_id)
                };
                let returned = call.and_then(|c| c.end_ms);
                if returned.is_some_and(|end| request.at_ms > end) {
                    late_requests.push(LateRequest {
                        at_ms: request.at_ms,
                        endpoint,
                        client_id,
                        call_id,
                        attempt_id,
                    });
                }
            }
        }
        request_calls.push(call_of);
        // Which call and attempt each request's effect went to: a stored message goes to the
        // same ones.
        let mut attributed = BTreeMap::new();
        for effect in &ledger.effects {
            let request = ledger.request(effect.request);
            let attempt_id = request.and_then(|r| wire::attempt_tag(&r.headers));
            // docs/scenario-format.md#expectations: by idempotency key (the keys `env.operation()` hands out
            // name their call), else by the harness's call tag, else by call window.
            // The client by the same sources, in the same order: a harness key names both,
            // the harness's surfaces send the client's tag with the call's, and otherwise the
            // client that opened the request's connection made it (0 unless a fleet runs).
            let key_text = effect.key.as_ref().and_then(|k| k.to_str().ok());
            // A key names its client and call only when it is one the run handed out: of a
            // client the run had (`key-7-3` in a fleet of 5, or in a run of one client, is
            // some other key), and then both come from it.
            let owner = key_text
                .and_then(|k| Some((wire::client_of_key(k, clients)?, wire::call_of_key(k)?)));
            let client_id = owner
                .map(|(client, _)| client)
                .or_else(|| request.and_then(|r| wire::client_tag(&r.headers)))
                .or_else(|| request.and_then(|r| clients_of_conns.get(&r.conn_id).copied()))
                .unwrap_or(0);
            let call_id = owner
                .map(|(_, call)| call)
                .or_else(|| {
                    effect
                        .call_tag
                        .as_ref()
                        .and_then(|v| v.to_str().ok()?.parse().ok())
                })
                .or_else(|| windows.call_at(client_id, effect.at_ms));
            let key = effect
                .key
                .as_ref()
                .map(|k| interner.intern(&String::from_utf8_lossy(k.as_bytes())));
            effects.push(Effect {
                at_ms: effect.at_ms,
                endpoint,
                client_id,
                call_id,
                attempt_id,
                key,
            });
            attributed.insert(effect.request, (call_id, attempt_id));
        }
        for message in &ledger.messages {
            // A broker stores a message with the effect of the same request, so this finds
            // one; were it ever missing, the message would be as unattributed as that effect,
            // and the message checks report it as such (`consumer` and `duplicates` fail on a
            // message they cannot attribute, `distinct_keys` lists it), never pass over it.
            let (call_id, attempt_id) = attributed
                .get(&message.request)
                .copied()
                .unwrap_or((None, None));
            messages.push(Message {
                at_ms: message.at_ms,
                endpoint,
                topic: interner.intern(&message.topic),
                key: message.key.as_deref().map(|k| interner.intern(k)),
                id: interner.intern(&message.id),
                call_id,
                attempt_id,
            });
        }
    }

    // Ordered by harness-assigned ids, never by observation order (docs/architecture.md#attempts-time-and-ordering).
    let order = |a: &Attempt| (a.start_ms, a.conn_id.unwrap_or(u64::MAX), a.id);
    // Usually in order already, and a stable sort would first allocate scratch room for half
    // the attempts (at the run's peak of memory) to find that out.
    if !attempts.is_sorted_by_key(order) {
        attempts.sort_by_key(order);
    }
    unattributed.sort_unstable();
    renumber(&mut attempts, &unattributed);
    effects.sort_by_key(|e| (e.at_ms, e.attempt_id));
    // Stable: each broker's messages stay in the order it stored them.
    messages.sort_by_key(|m| m.at_ms);
    late_requests.sort_by_key(|l| (l.at_ms, l.client_id, l.attempt_id));
    let connections = if from_endpoints {
        endpoint_connection_events(&ledgers, &endpoint_names)
    } else {
        connection_events(&log, &mut interner)
    };
    let mut faults = fault_events(&log, &mut interner);
    // turmoil's faults, which the network applies between steps, join the sim network's.
    for record in network.take_link_faults() {
        faults.push(FaultEvent {
            at_ms: record.at_ms,
            endpoint: interner.intern(&record.endpoint),
            kind: match record.fault {
                LinkFault::Held => FaultEventKind::Held,
                LinkFault::Released => FaultEventKind::Released,
                LinkFault::Partitioned => FaultEventKind::Partitioned,
                LinkFault::Repaired => FaultEventKind::Healed,
                LinkFault::Crashed => FaultEventKind::Crashed,
                LinkFault::Bounced => FaultEventKind::Restarted,
            },
        });
    }
    faults.sort_by_key(|f| f.at_ms);

    Assembled {
        trace: Trace {
            header,
            names: interner.into_names(),
            attempts,
            connections,
            faults,
            effects,
            messages,
            calls,
            late_requests,
            decisions,
            unattributed,
            end_ms,
        },
        unmatched,
        ledgers: endpoints
            .iter()
            .map(|(name, _)| name.clone())
            .zip(ledgers)
            .collect(),
        request_calls,
    }
}

/// Who answered `request`, when not a step: the rate limiter, a broker that refused it, or
/// dedupe (naming the attempt,
/// by `attempt_of` the earlier requests' attempts, that its answer refers to).
fn answered_by(
    ledger: &LedgerSnapshot,
    request: &RequestRecord,
    attempt_of: &[Option<u32>],
) -> Option<AnsweredBy> {
    if ledger.rate_limited.binary_search(&request.id).is_ok() {
        return Some(AnsweredBy::RateLimited);
    }
    if ledger.refused.binary_search(&request.id).is_ok() {
        return Some(AnsweredBy::RefusedByBroker);
    }
    // Dedupe only ever names a request that arrived earlier.
    let of = |id: RequestId| attempt_of.get(id.index()).copied().flatten();
    match request.dedupe {
        DedupeOutcome::NotApplied | DedupeOutcome::First => None,
        DedupeOutcome::Replay { of: id } => Some(AnsweredBy::Replay { of: of(id) }),
        DedupeOutcome::InFlight { of: id } => Some(AnsweredBy::InFlight { of: of(id) }),
        DedupeOutcome::Mismatch { of: id } => Some(AnsweredBy::Mismatch { of: of(id) }),
        DedupeOutcome::AfterCommit { of: id } => Some(AnsweredBy::Rerun { of: of(id) }),
    }
}

/// Responses by request index (a ledger lists them in completion order).
struct ResponseIndex<'a> {
    by_request: Vec<Option<&'a retrylab_endpoints::ResponseRecord>>,
}

impl<'a> ResponseIndex<'a> {
    fn new(ledger: &'a LedgerSnapshot) -> ResponseIndex<'a> {
        let mut by_request = vec![None; ledger.requests.len()];
        for response in &ledger.responses {
            if let Some(slot) = by_request.get_mut(response.request.index()) {
                *slot = Some(response);
            }
        }
        ResponseIndex { by_request }
    }

    fn get(&self, index: usize) -> Option<&'a retrylab_endpoints::ResponseRecord> {
        self.by_request.get(index).copied().flatten()
    }
}

/// The call with this id: calls are recorded in id order, so this is usually its index.
fn call_by_id(calls: &[Call], call_id: u32) -> Option<&Call> {
    match calls.get(call_id as usize) {
        Some(call) if call.call_id == call_id => Some(call),
        _ => calls.iter().find(|c| c.call_id == call_id),
    }
}

/// Where a rebuilt attempt's instants come from.
#[derive(Clone, Copy)]
enum Instants<'a> {
    /// The sim network's segments: what the client sent and received, and when.
    Segments(&'a SegmentIndex),
    /// The real backend: only the endpoint's own instants exist (the request's arrival, the
    /// head handed to the connection, the last byte written).
    Endpoint,
}

/// An attempt rebuilt from the endpoint's record and the network's segments, for a client that
/// only used `env.connector()`: start = the request's first byte left the client, head = the
/// response's first byte reached it, end = its last byte did. On the real backend, start is
/// the request's arrival, head the instant the endpoint handed the head to the connection and
/// end the instant it wrote the last byte.
fn reconstruct(
    instants: Instants<'_>,
    interner: &mut Interner,
    request: &retrylab_endpoints::RequestRecord,
    response: Option<&retrylab_endpoints::ResponseRecord>,
    id: u32,
) -> Attempt {
    let conn = ConnId(request.conn_id);
    let start_ms = match instants {
        // docs/architecture.md#attempts-time-and-ordering: start is the connect start on a
        // new connection, the request's first byte on a reused one.
        Instants::Segments(segments) => (request.seq == 1)
            .then(|| segments.connect_start(conn))
            .flatten()
            .unwrap_or_else(|| {
                segments
                    .segment_at(conn, Dir::ClientToServer, request.inbound.start)
                    .map_or(request.at_ms, |s| s.0)
            }),
        Instants::Endpoint => request.at_ms,
    };
    // A response cut after its head keeps the head's status, and its body broke.
    let mut body_error = None;
    let (head_ms, end_ms, outcome) = match response.map(|r| (r, r.outcome)) {
        Some((r, ResponseOutcome::Sent { status })) => {
            let (head, end) = match instants {
                Instants::Segments(segments) => {
                    let head = segments
                        .segment_at(conn, Dir::ServerToClient, r.outbound.start)
                        .map(|s| s.1);
                    let last = r.outbound.end.saturating_sub(1).max(r.outbound.start);
                    let end = segments
                        .segment_at(conn, Dir::ServerToClient, last)
                        .map(|s| s.1);
                    (head, end)
                }
                Instants::Endpoint => (Some(r.at_ms), r.end_ms),
            };
            (head, end.or(head), AttemptOutcome::Status(status.as_u16()))
        }
        Some((r, ResponseOutcome::Truncated { status, fail })) => {
            let head = match instants {
                Instants::Segments(segments) => segments
                    .segment_at(conn, Dir::ServerToClient, r.outbound.start)
                    .map(|s| s.1),
                Instants::Endpoint => Some(r.at_ms),
            };
            body_error = Some(if fail.is_reset() {
                AttemptOutcome::Reset
            } else {
                AttemptOutcome::Closed
            });
            (head, head, AttemptOutcome::Status(status.as_u16()))
        }
        Some((r, ResponseOutcome::Failed(fail))) => {
            let outcome = match fail {
                retrylab_endpoints::Fail::Reset | retrylab_endpoints::Fail::ResetAfter { .. } => {
                    AttemptOutcome::Reset
                }
                retrylab_endpoints::Fail::Hang => AttemptOutcome::Abandoned,
                _ => AttemptOutcome::Closed,
            };
            (None, Some(r.at_ms), outcome)
        }
        Some((r, ResponseOutcome::Abandoned)) => (None, Some(r.at_ms), AttemptOutcome::Abandoned),
        // The crash reset the connection from the endpoint's side.
        Some((r, ResponseOutcome::Crashed)) => (None, Some(r.at_ms), AttemptOutcome::Reset),
        None => (None, None, AttemptOutcome::Unfinished),
    };
    let path = request
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    Attempt {
        id,
        // The caller attributes the attempt to its client and call.
        client_id: 0,
        call_id: 0,
        n: 0,
        conn_id: Some(request.conn_id),
        conn: if request.seq == 1 {
            ConnUse::New
        } else {
            ConnUse::Reused
        },
        method: interner.intern(request.method.as_str()),
        path: interner.intern(&path),
        start_ms,
        head_ms,
        end_ms,
        outcome,
        end: match (end_ms, body_error) {
            (None, _) => EndKind::Unfinished,
            (Some(_), Some(_)) => EndKind::Error,
            (Some(_), None) => EndKind::Body,
        },
        body_error,
        // Recorded as the harness's own client records what it was told, so a rebuilt
        // attempt is judged on the same text.
        retry_after: response
            .and_then(|r| RetryAfterValue::recorded_text_of(&r.retry_after))
            .map(|text| interner.intern(&text)),
        resent: false,
        reconstructed: true,
        answered_by: None,
    }
}

/// The network log's connect starts and data segments by connection, for rebuilding attempts
/// (a scan of the whole log per rebuilt attempt would be quadratic in long runs).
struct SegmentIndex {
    /// The first `ConnectStart` instant of each connection.
    connect_start: BTreeMap<u64, u64>,
    /// Data segments of each (connection, direction), in log order, which is byte order.
    data: BTreeMap<(u64, Dir), Vec<DataSegment>>,
}

/// A data segment's byte range and instants.
#[derive(Clone, Copy)]
struct DataSegment {
    start: u64,
    end: u64,
    sent_at: u64,
    deliver_at: u64,
}

impl SegmentIndex {
    fn new(log: &NetLog) -> SegmentIndex {
        let mut connect_start = BTreeMap::new();
        let mut data: BTreeMap<(u64, Dir), Vec<DataSegment>> = BTreeMap::new();
        for event in log.events() {
            match *event {
                NetEvent::ConnectStart { at, conn, .. } => {
                    connect_start.entry(conn.0).or_insert(at);
                }
                NetEvent::Segment(s) if s.kind == SegmentKind::Data => {
                    data.entry((s.conn.0, s.dir))
                        .or_default()
                        .push(DataSegment {
                            start: s.offset,
                            end: s.offset + u64::from(s.len),
                            sent_at: s.sent_at,
                            deliver_at: s.deliver_at,
                        });
                }
                _ => {}
            }
        }
        SegmentIndex {
            connect_start,
            data,
        }
    }

    fn connect_start(&self, conn: ConnId) -> Option<u64> {
        self.connect_start.get(&conn.0).copied()
    }

    /// (`sent_at`, `deliver_at`) of the data segment of `conn` in `dir` that carries byte
    /// `offset`.
    fn segment_at(&self, conn: ConnId, dir: Dir, offset: u64) -> Option<(u64, u64)> {
        let segments = self.data.get(&(conn.0, dir))?;
        // Segments of one direction follow each other without gaps or overlaps, each at
        // least one byte long, so the first one ending past `offset` is the only candidate.
        let s = segments.get(segments.partition_point(|s| s.end <= offset))?;
        (s.start <= offset && offset < s.end).then_some((s.sent_at, s.deliver_at))
    }
}

/// Gives reconstructed attempts their position within their call, keeping surface attempts'.
/// Unattributed ones (`unattributed`, sorted ids) have no call to hold a position in: they
/// keep 0.
fn renumber(attempts: &mut [Attempt], unattributed: &[u32]) {
    let mut next: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for attempt in attempts.iter() {
        if !attempt.reconstructed {
            let n = next
                .entry((attempt.client_id, attempt.call_id))
                .or_insert(0);
            *n = (*n).max(attempt.n);
        }
    }
    for attempt in attempts
        .iter_mut()
        .filter(|a| a.reconstructed && unattributed.binary_search(&a.id).is_err())
    {
        let n = next
            .entry((attempt.client_id, attempt.call_id))
            .or_insert(0);
        *n += 1;
        attempt.n = *n;
    }
}

/// Connection events of the real backend, from what the endpoints recorded: each accepted
/// connection, and how and by whom it was closed; ordered by (instant, `conn_id`, seq).
fn endpoint_connection_events(ledgers: &[LedgerSnapshot], names: &[Name]) -> Vec<ConnEvent> {
    let mut events = Vec::new();
    for (ledger, endpoint) in ledgers.iter().zip(names) {
        for connect in &ledger.connects {
            events.push(ConnEvent {
                at_ms: connect.at_ms,
                conn_id: connect.conn_id,
                endpoint: *endpoint,
                kind: ConnEventKind::Connected,
            });
        }
        for close in &ledger.closes {
            let kind = match close.how {
                CloseKind::Fin => ConnEventKind::Fin(close.by),
                // A transport error other than a reset (a broken pipe) is an abortive end too.
                CloseKind::Reset | CloseKind::Error(_) => ConnEventKind::Rst(close.by),
            };
            events.push(ConnEvent {
                at_ms: close.at_ms,
                conn_id: close.conn_id,
                endpoint: *endpoint,
                kind,
            });
        }
    }
    // Stable: a connection's accept comes before its close at the same instant.
    events.sort_by_key(|e| (e.at_ms, e.conn_id));
    events
}

/// Fault events from the network log, in the order they happened (which is time order).
fn fault_events(log: &NetLog, interner: &mut Interner) -> Vec<FaultEvent> {
    log.events()
        .iter()
        .filter_map(|event| {
            let (at_ms, host, kind) = match *event {
                NetEvent::Partition { at, host } => (at, host, FaultEventKind::Partitioned),
                NetEvent::Heal { at, host } => (at, host, FaultEventKind::Healed),
                NetEvent::Crash { at, host } => (at, host, FaultEventKind::Crashed),
                NetEvent::Restart { at, host } => (at, host, FaultEventKind::Restarted),
                _ => return None,
            };
            Some(FaultEvent {
                at_ms,
                endpoint: interner.intern(log.host_name(host).unwrap_or("?")),
                kind,
            })
        })
        .collect()
}

/// Connection events from the network log, ordered by (instant, `conn_id`), then in the log's
/// order.
fn connection_events(log: &NetLog, interner: &mut Interner) -> Vec<ConnEvent> {
    // Connection ids are assigned from 1 in connect order, so a vector indexes them densely.
    let mut host_of: Vec<Option<Name>> = Vec::new();
    // Each host's name, interned once rather than once per connection.
    let mut host_names: Vec<Option<Name>> = Vec::new();
    let mut events = Vec::new();
    for event in log.events() {
        let (at_ms, conn, kind) = match *event {
            NetEvent::ConnectStart { at, conn, host } => {
                let h = host.0 as usize;
                if host_names.len() <= h {
                    host_names.resize(h + 1, None);
                }
                let name = *host_names[h]
                    .get_or_insert_with(|| interner.intern(log.host_name(host).unwrap_or("?")));
                let c = usize::try_from(conn.0).unwrap_or(usize::MAX);
                if host_of.len() <= c {
                    host_of.resize(c.saturating_add(1), None);
                }
                host_of[c] = Some(name);
                (at, conn, ConnEventKind::Connect)
            }
            NetEvent::Connected { at, conn } => (at, conn, ConnEventKind::Connected),
            NetEvent::Refused { at, conn } => (at, conn, ConnEventKind::Refused),
            NetEvent::ConnectAbandoned { at, conn } => (at, conn, ConnEventKind::ConnectAbandoned),
            NetEvent::Segment(segment) => {
                let side = match segment.dir {
                    Dir::ClientToServer => Side::Client,
                    Dir::ServerToClient => Side::Server,
                };
                match segment.kind {
                    SegmentKind::Fin => (segment.sent_at, segment.conn, ConnEventKind::Fin(side)),
                    SegmentKind::Rst => (segment.sent_at, segment.conn, ConnEventKind::Rst(side)),
                    SegmentKind::Data => continue,
                }
            }
            _ => continue,
        };
        let endpoint = usize::try_from(conn.0)
            .ok()
            .and_then(|c| host_of.get(c).copied().flatten())
            .unwrap_or(Name(0));
        events.push(ConnEvent {
            at_ms,
            conn_id: conn.0,
            endpoint,
            kind,
        });
    }
    // Stable, so events of one connection at one instant keep the log's order: sorted in
    // place, without a copy numbered by position (a run's largest temporary). A run of one
    // connection at a time logs them in this order already, and then the sort's buffer is
    // not allocated at all.
    if !events.is_sorted_by_key(|e| (e.at_ms, e.conn_id)) {
        events.sort_by_key(|e| (e.at_ms, e.conn_id));
    }
    events
}
