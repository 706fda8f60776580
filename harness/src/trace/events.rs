//! The trace's connection and fault events: from the sim network's log, from what the
//! endpoints recorded (the real backend), and from turmoil's link faults.

use retrylab_endpoints::{CloseKind, LedgerSnapshot};

use super::{ConnEvent, ConnEventKind, FaultEvent, FaultEventKind, Interner, Name, Side};
use crate::backend::sim::{Dir, NetEvent, NetLog, SegmentKind};
use crate::backend::{LinkFault, Net};

/// Connection events of the real backend, from what the endpoints recorded: each accepted
/// connection, and how and by whom it was closed; ordered by (instant, `conn_id`, seq).
pub(super) fn endpoint_connection_events(
    ledgers: &[LedgerSnapshot],
    names: &[Name],
) -> Vec<ConnEvent> {
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

/// Adds the GOAWAYs the endpoints sent (HTTP/2) to `events`, each at the instant its
/// endpoint asked for it, before the other events of that instant and connection (the close
/// it brings): the order of the others stays as it was, so a trace without a GOAWAY is
/// unchanged.
pub(super) fn add_goaways(events: &mut Vec<ConnEvent>, ledgers: &[LedgerSnapshot], names: &[Name]) {
    let before = events.len();
    for (ledger, endpoint) in ledgers.iter().zip(names) {
        for goaway in &ledger.goaways {
            events.push(ConnEvent {
                at_ms: goaway.at_ms,
                conn_id: goaway.conn_id,
                endpoint: *endpoint,
                kind: ConnEventKind::GoAway {
                    last_stream_id: goaway.last_stream_id,
                    code: goaway.code,
                    graceful: goaway.graceful,
                },
            });
        }
    }
    if events.len() > before {
        // Stable, and the other events were in this order already.
        events.sort_by_key(|e| {
            let later = !matches!(e.kind, ConnEventKind::GoAway { .. });
            (e.at_ms, e.conn_id, later)
        });
    }
}

/// Fault events from the network log, in the order they happened (which is time order).
pub(super) fn fault_events(log: &NetLog, interner: &mut Interner) -> Vec<FaultEvent> {
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
pub(super) fn connection_events(log: &NetLog, interner: &mut Interner) -> Vec<ConnEvent> {
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

/// turmoil's faults, which the network applies between steps, as the trace's fault events.
pub(super) fn link_fault_events(network: &Net, interner: &mut Interner) -> Vec<FaultEvent> {
    network
        .take_link_faults()
        .into_iter()
        .map(|record| FaultEvent {
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
        })
        .collect()
}
