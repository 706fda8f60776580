//! The network's event log: what was sent, when, and when it arrives.

use super::{ConnId, Dir, HostId};

/// What a segment carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SegmentKind {
    /// Application bytes.
    Data,
    /// Orderly close of the sender's direction (the peer reads end of stream).
    Fin,
    /// Abort: the peer's operations fail with `ConnectionReset` once it is delivered.
    Rst,
}

/// What became of a SYN when it reached its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SynOutcome {
    /// The host accepted the connection.
    Accept,
    /// The host refused the connection.
    Refuse,
    /// The host dropped the SYN.
    Blackhole,
    /// A partition was in force at some moment of the SYN's flight: it was lost before the
    /// host saw it (logged at the instant it would have arrived).
    Lost,
    /// The host had crashed and not restarted: its machine refused the connection.
    Down,
}

/// One segment put on the wire.
///
/// Offsets count the data bytes of one direction of one connection from 0, so they join with
/// an endpoint's per-connection request and response byte ranges. FIN and RST have length 0
/// and the offset of the end of the data before them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SegmentEvent {
    /// The connection.
    pub conn: ConnId,
    /// Which way it travels.
    pub dir: Dir,
    /// Index of the segment within its connection and direction, from 0.
    pub seq: u32,
    /// When it was sent (ms since start). An RST that answers data arriving at a closed end
    /// is sent at that data's arrival, which may be later than the event's position in the log.
    pub sent_at: u64,
    /// When it is delivered (ms since start), unless a partition holds it (see
    /// [`NetEvent::Released`]).
    pub deliver_at: u64,
    /// Byte offset of its first data byte within its direction.
    pub offset: u64,
    /// Number of data bytes.
    pub len: u32,
    /// Data, FIN or RST.
    pub kind: SegmentKind,
}

/// One network event. Instants are whole milliseconds since the network's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NetEvent {
    /// A client called [`Network::connect`](super::Network::connect).
    ConnectStart {
        /// When.
        at: u64,
        /// The connection id assigned to the attempt.
        conn: ConnId,
        /// The host it connects to.
        host: HostId,
    },
    /// The SYN reached the host (or was lost to a partition).
    SynArrived {
        /// When.
        at: u64,
        /// The connection.
        conn: ConnId,
        /// What the host decided.
        outcome: SynOutcome,
    },
    /// The client's connect completed.
    Connected {
        /// When.
        at: u64,
        /// The connection.
        conn: ConnId,
    },
    /// The client's connect failed with `ConnectionRefused`.
    Refused {
        /// When.
        at: u64,
        /// The connection.
        conn: ConnId,
    },
    /// The client dropped its connect future before it completed.
    ConnectAbandoned {
        /// When.
        at: u64,
        /// The connection.
        conn: ConnId,
    },
    /// A segment was sent.
    Segment(SegmentEvent),
    /// A heal released segments `first_seq..end_seq` of one direction that a partition held:
    /// each is delivered at `max(its deliver_at, at)`. Segments in that range that were
    /// addressed to a closed end were discarded and are not delivered at all.
    Released {
        /// The heal instant.
        at: u64,
        /// The connection.
        conn: ConnId,
        /// The direction.
        dir: Dir,
        /// First held segment.
        first_seq: u32,
        /// One past the last held segment.
        end_seq: u32,
    },
    /// The host was partitioned from all clients.
    Partition {
        /// When.
        at: u64,
        /// The host.
        host: HostId,
    },
    /// The partition of the host healed.
    Heal {
        /// When.
        at: u64,
        /// The host.
        host: HostId,
    },
    /// The host crashed: its connections were reset.
    Crash {
        /// When.
        at: u64,
        /// The host.
        host: HostId,
    },
    /// The host came back after a crash.
    Restart {
        /// When.
        at: u64,
        /// The host.
        host: HostId,
    },
}

/// A snapshot of the network's events, in the order they happened, with the host names the
/// events' [`HostId`]s refer to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NetLog {
    pub(super) hosts: Vec<String>,
    pub(super) events: Vec<NetEvent>,
}

impl NetLog {
    /// All events, in execution order.
    pub(crate) fn events(&self) -> &[NetEvent] {
        &self.events
    }

    /// Only the segment events, in execution order.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> impl Iterator<Item = &SegmentEvent> + '_ {
        self.events.iter().filter_map(|e| match e {
            NetEvent::Segment(s) => Some(s),
            _ => None,
        })
    }

    /// The name a host was registered under.
    pub(crate) fn host_name(&self, host: HostId) -> Option<&str> {
        self.hosts.get(host.0 as usize).map(String::as_str)
    }

    /// Whether no event was recorded.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}
