//! The trace of one run, assembled at its end from what the client surfaces recorded, what
//! the network logged and what the endpoints' ledgers hold; attempts of clients that only use
//! `env.connector()` are reconstructed from the network's segments and the ledgers, and on
//! the real backend, which has no segment log, from the instants the endpoints recorded.

use std::collections::BTreeMap;

use retrylab_endpoints::wire::{self, HAND_OFF_HEADER_NAME, TagHeaders as _};
use retrylab_endpoints::{DedupeOutcome, Endpoint, LedgerSnapshot, RequestId, RequestRecord};

use super::call_windows::CallWindows;
use super::events;
use super::rebuild::{InstantSource, SegmentIndex, reconstruct};
use super::record::Recorder;
use super::{
    AnsweredBy, Attempt, Call, ConnUse, Effect, GrpcAnswer, Interner, LateRequest, Message, Name,
    Trace, seconds,
};
use crate::backend::Net;
use crate::backend::sim::NetLog;

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
    let (attempts, names) = recorder.finish();
    let mut assembly = Assembly::new(
        &calls,
        clients,
        &clients_of_conns,
        &log,
        network,
        attempts,
        names,
    );
    let mut request_calls = Vec::with_capacity(ledgers.len());
    for (ledger, &endpoint) in ledgers.iter().zip(&endpoint_names) {
        request_calls.push(assembly.requests(endpoint, ledger));
        assembly.effects_and_messages(endpoint, ledger);
    }
    let Assembly {
        mut interner,
        mut attempts,
        mut effects,
        mut messages,
        mut late_requests,
        mut unattributed,
        unmatched,
        from_endpoints,
        ..
    } = assembly;

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
    let mut connections = if from_endpoints {
        events::endpoint_connection_events(&ledgers, &endpoint_names)
    } else {
        events::connection_events(&log, &mut interner)
    };
    events::add_goaways(&mut connections, &ledgers, &endpoint_names);
    let mut faults = events::fault_events(&log, &mut interner);
    faults.extend(events::link_fault_events(network, &mut interner));
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

/// The assembly in progress: what every ledger is read against, and what reading them has
/// gathered so far.
struct Assembly<'a> {
    calls: &'a [Call],
    /// Whether the run had a fleet: then every client has a call 0.
    fleet: bool,
    /// A fleet's calls by (client, call), looked up once per tagged request: they are filed
    /// in the order they started, so no call's id is its index.
    fleet_calls: BTreeMap<(u32, u32), usize>,
    windows: CallWindows,
    /// The run's client instances (`operation.clients`).
    clients: u32,
    /// The client that opened each connection.
    clients_of_conns: &'a BTreeMap<u64, u32>,
    log: &'a NetLog,
    /// Without a segment log (real sockets, turmoil), attempts are rebuilt from the
    /// endpoints' instants.
    from_endpoints: bool,
    /// Built on first use: only clients that bypass the harness surfaces need it.
    segments: Option<SegmentIndex>,
    interner: Interner,
    attempts: Vec<Attempt>,
    effects: Vec<Effect>,
    messages: Vec<Message>,
    late_requests: Vec<LateRequest>,
    unmatched: Vec<String>,
    /// Rebuilt attempts that started before any call of their client had: no call to give.
    unattributed: Vec<u32>,
}

impl<'a> Assembly<'a> {
    fn new(
        calls: &'a [Call],
        clients: u32,
        clients_of_conns: &'a BTreeMap<u64, u32>,
        log: &'a NetLog,
        network: &Net,
        attempts: Vec<Attempt>,
        names: Vec<String>,
    ) -> Assembly<'a> {
        let fleet = calls.iter().any(|c| c.client_id != 0);
        let fleet_calls = if fleet {
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| ((c.client_id, c.call_id), i))
                .collect()
        } else {
            BTreeMap::new()
        };
        Assembly {
            calls,
            fleet,
            fleet_calls,
            windows: CallWindows::new(calls),
            clients,
            clients_of_conns,
            log,
            from_endpoints: !network.logs_segments(),
            segments: None,
            interner: Interner::from_names(names),
            attempts,
            effects: Vec::new(),
            messages: Vec::new(),
            late_requests: Vec::new(),
            unmatched: Vec::new(),
            unattributed: Vec::new(),
        }
    }

    /// Reads the requests of one endpoint's ledger into attempts, and returns the (client,
    /// call) of each, by request index.
    fn requests(&mut self, endpoint: Name, ledger: &LedgerSnapshot) -> Vec<Option<(u32, u32)>> {
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
                self.unmatched_request(endpoint, request, answered_by);
            }
            // By the parsed name: no case folding over every header of every request.
            if request.headers.first_value(&HAND_OFF_HEADER_NAME).is_some() {
                // A built-in client's dead-letter hand-off: an effect, not an attempt.
                attempt_of.push(None);
                call_of.push(None);
                continue;
            }
            let (attempt, call) = match attempt_id
                .and_then(|id| self.attempts.get_mut((id as usize).checked_sub(1)?))
            {
                Some(attempt) => {
                    // A request resent on another connection is the same attempt: the
                    // answer it shows is that of its last request.
                    attempt.answered_by = answered_by;
                    // The stream of the last request too, on the connection it names below.
                    attempt.stream_id = request.stream_id;
                    attempt.grpc = responses
                        .get(request.id.index())
                        .and_then(|r| GrpcAnswer::of(r, &mut self.interner));
                    if attempt.conn_id.is_none() {
                        attempt.conn_id = Some(request.conn_id);
                        attempt.conn = if request.seq == 1 {
                            ConnUse::New
                        } else {
                            ConnUse::Reused
                        };
                    }
                    (attempt.id, Some((attempt.client_id, attempt.call_id)))
                }
                None => self.rebuilt(endpoint, request, &responses, answered_by, call_id),
            };
            attempt_of.push(Some(attempt));
            call_of.push(call);
            if let Some(call_id) = call_id {
                self.late_if_returned(endpoint, request, call_id, attempt_id);
            }
        }
        call_of
    }

    /// Notes a request that matched no route (answered 404, or by the rate limiter).
    fn unmatched_request(
        &mut self,
        endpoint: Name,
        request: &RequestRecord,
        answered_by: Option<AnsweredBy>,
    ) {
        // A rate limiter answers before routing: such a request got its answer.
        let answered = if answered_by == Some(AnsweredBy::RateLimited) {
            "answered by the rate limiter"
        } else {
            "answered 404"
        };
        self.unmatched.push(format!(
            "{} {} at {} on `{}` matched no route ({answered})",
            request.method,
            request.uri,
            seconds(request.at_ms),
            self.interner.name(endpoint)
        ));
    }

    /// The attempt a request the client surfaces did not record was, rebuilt (see
    /// [`rebuild`](super::rebuild)), with its client and call.
    fn rebuilt(
        &mut self,
        endpoint: Name,
        request: &RequestRecord,
        responses: &ResponseIndex<'_>,
        answered_by: Option<AnsweredBy>,
        call_id: Option<u32>,
    ) -> (u32, Option<(u32, u32)>) {
        let response = responses.get(request.id.index());
        let log = self.log;
        let instants = if self.from_endpoints {
            InstantSource::Endpoint
        } else {
            InstantSource::Segments(self.segments.get_or_insert_with(|| SegmentIndex::new(log)))
        };
        let id = self.attempts.len() as u32 + 1;
        let mut attempt = reconstruct(instants, &mut self.interner, request, response, id);
        // The client that opened the connection made the request (client 0 unless a fleet's
        // other client did); the call is that client's call running when it started.
        let client = self
            .clients_of_conns
            .get(&request.conn_id)
            .copied()
            .unwrap_or(0);
        attempt.client_id = client;
        // A request that names its call (a program forwarding `x-retrylab-call`) is that
        // call's, however its instants overlap others'; else the call running when it came.
        let call = call_id
            .filter(|&tagged| self.windows.has_call(client, tagged))
            .or_else(|| self.windows.call_at(client, attempt.start_ms));
        match call {
            Some(call) => attempt.call_id = call,
            // Its `call_id` stays 0, and the index leaves it out of call 0.
            None => self.unattributed.push(id),
        }
        attempt.answered_by = answered_by;
        self.attempts.push(attempt);
        // Without a call tag a request names no call; one that arrived while no call of its
        // client was running came from one of its calls that had returned (a task it left
        // behind, say). Other clients' calls, running or not, say nothing about it.
        let returned = call_id
            .is_none()
            .then(|| self.windows.returned_before(client, request.at_ms))
            .flatten();
        if let Some(call_id) = returned {
            self.late_requests.push(LateRequest {
                at_ms: request.at_ms,
                endpoint,
                client_id: client,
                call_id,
                attempt_id: Some(id),
            });
        }
        (id, call.map(|call| (client, call)))
    }

    /// Notes a request tagged with call `call_id` that arrived after that call returned.
    fn late_if_returned(
        &mut self,
        endpoint: Name,
        request: &RequestRecord,
        call_id: u32,
        attempt_id: Option<u32>,
    ) {
        // The call of the request's client: in a fleet, every client has a call 0, and the
        // harness's surfaces send the client's tag beside the call's.
        let client_id = if self.fleet {
            wire::client_tag(&request.headers).unwrap_or(0)
        } else {
            0
        };
        let call = if self.fleet {
            self.fleet_calls
                .get(&(client_id, call_id))
                .and_then(|&i| self.calls.get(i))
        } else {
            call_by_id(self.calls, call_id)
        };
        let returned = call.and_then(|c| c.end_ms);
        if returned.is_some_and(|end| request.at_ms > end) {
            self.late_requests.push(LateRequest {
                at_ms: request.at_ms,
                endpoint,
                client_id,
                call_id,
                attempt_id,
            });
        }
    }

    /// Reads the effects and the stored messages of one endpoint's ledger, each given its
    /// call and attempt.
    fn effects_and_messages(&mut self, endpoint: Name, ledger: &LedgerSnapshot) {
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
                .and_then(|k| Some((wire::client_of_key(k, self.clients)?, wire::call_of_key(k)?)));
            let client_id = owner
                .map(|(client, _)| client)
                .or_else(|| request.and_then(|r| wire::client_tag(&r.headers)))
                .or_else(|| request.and_then(|r| self.clients_of_conns.get(&r.conn_id).copied()))
                .unwrap_or(0);
            let call_id = owner
                .map(|(_, call)| call)
                .or_else(|| {
                    effect
                        .call_tag
                        .as_ref()
                        .and_then(|v| v.to_str().ok()?.parse().ok())
                })
                .or_else(|| self.windows.call_at(client_id, effect.at_ms));
            let key = effect
                .key
                .as_ref()
                .map(|k| self.interner.intern(&String::from_utf8_lossy(k.as_bytes())));
            self.effects.push(Effect {
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
            self.messages.push(Message {
                at_ms: message.at_ms,
                endpoint,
                topic: self.interner.intern(&message.topic),
                key: message.key.as_deref().map(|k| self.interner.intern(k)),
                id: self.interner.intern(&message.id),
                call_id,
                attempt_id,
            });
        }
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
