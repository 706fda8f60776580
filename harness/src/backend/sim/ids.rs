//! Small identifiers shared by the network, its streams and its log.

/// One connection attempt, numbered from 1 in the order of [`Network::connect`] calls.
///
/// It is also attached to every response that hyper-util's legacy client reads over the
/// connection (see [`SimStream`]'s `Connection` impl), so a harness can join client-side
/// responses with the [`NetLog`].
///
/// [`Network::connect`]: super::Network::connect
/// [`SimStream`]: super::SimStream
/// [`NetLog`]: super::NetLog
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

/// A host interned by the network, numbered from 0 in registration order.
///
/// The log stores this instead of the name so that events stay `Copy`; resolve it with
/// [`NetLog::host_name`](super::NetLog::host_name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

/// Which end of a connection a [`SimStream`](super::SimStream) is: `Client` is the end
/// returned by [`Network::connect`](super::Network::connect), `Server` the end handed to
/// [`Host::accept`](super::Host::accept).
pub(crate) use retrylab_endpoints::Side;

/// The direction a segment travels in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Dir {
    /// From the connecting client to the host.
    ClientToServer,
    /// From the host back to the client.
    ServerToClient,
}

/// The sim network's arithmetic on a connection's ends (a trait because [`Side`] is the
/// endpoints' type, shared with the ledger and the trace).
pub(super) trait EndIndex {
    /// Index of this end in per-connection arrays.
    fn index(self) -> usize;
    /// The direction this end writes in.
    fn writes(self) -> Dir;
    /// The direction this end reads from.
    fn reads(self) -> Dir;
}

impl EndIndex for Side {
    fn index(self) -> usize {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }

    fn writes(self) -> Dir {
        match self {
            Side::Client => Dir::ClientToServer,
            Side::Server => Dir::ServerToClient,
        }
    }

    fn reads(self) -> Dir {
        self.writes().reverse()
    }
}

impl Dir {
    /// Index of this direction in per-connection arrays.
    pub(super) fn index(self) -> usize {
        match self {
            Dir::ClientToServer => 0,
            Dir::ServerToClient => 1,
        }
    }

    /// The opposite direction.
    pub(crate) fn reverse(self) -> Dir {
        match self {
            Dir::ClientToServer => Dir::ServerToClient,
            Dir::ServerToClient => Dir::ClientToServer,
        }
    }

    /// The end that reads segments travelling in this direction.
    pub(crate) fn reader(self) -> Side {
        match self {
            Dir::ClientToServer => Side::Server,
            Dir::ServerToClient => Side::Client,
        }
    }
}
