//! The interface between the network and whatever serves a host (the harness's endpoints).

use super::{ConnId, SimStream};

/// What a host does with an incoming SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectDecision {
    /// Accept: the host gets a stream now, the client's connect completes one round trip
    /// after it started.
    Accept,
    /// Refuse: the client's connect fails with `ConnectionRefused` after one round trip.
    Refuse,
    /// Drop the SYN silently: the client's connect never completes.
    Blackhole,
}

/// A named host on the [`Network`](super::Network), supplied by the harness.
///
/// Both methods are called without any network lock held, so they may call back into the
/// network (to partition, log, or connect elsewhere).
pub trait Host: Send + Sync + 'static {
    /// A SYN reached the host (one-way latency after connect started).
    fn on_syn(&self, conn: ConnId) -> ConnectDecision;
    /// The connection was accepted; the host serves `stream` (usually by spawning a task).
    fn accept(&self, conn: ConnId, stream: SimStream);
}
