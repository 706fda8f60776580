//! The interface between the network and whatever serves a host (the harness's endpoints).

use retrylab_endpoints::ConnectAction;

use super::{ConnId, SimStream};

/// A named host on the [`Network`](super::Network), supplied by the harness.
///
/// Both methods are called without any network lock held, so they may call back into the
/// network (to partition, log, or connect elsewhere).
pub(crate) trait Host: Send + Sync + 'static {
    /// A SYN reached the host (one-way latency after connect started). `Accept`: the host
    /// gets a stream now and the connect completes one round trip after it started;
    /// `Refuse`: the connect fails with `ConnectionRefused` after one round trip;
    /// `Blackhole`: the SYN is dropped and the connect never completes.
    fn on_syn(&self, conn: ConnId) -> ConnectAction;
    /// The connection was accepted; the host serves `stream` (usually by spawning a task).
    fn accept(&self, conn: ConnId, stream: SimStream);
}
