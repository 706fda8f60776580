//! The in-memory TCP network of the sim backend.
//!
//! A [`Network`] joins clients and named [`Host`]s with per-direction segment queues whose
//! segments carry delivery instants in tokio's virtual time (docs/architecture.md#backends-and-the-runtime-contract): connect takes one
//! round trip, refuse fails after one, black-hole never completes; FIN, RST
//! (`io::ErrorKind::ConnectionReset`), and partitions that hold segments until they heal.
//! Everything is recorded in a [`NetLog`] in whole milliseconds since the network's start.
//! It runs on a current-thread runtime with paused time: readers arm one timer for the head
//! segment, so time jumps from delivery to delivery.

mod connect;
mod connector;
mod endpoint_host;
mod failures;
mod host;
mod ids;
mod log;
mod network;
mod pipe;
mod state;
mod stream;
mod timer;

#[cfg(test)]
mod tests;

pub(crate) use connect::Connect;
pub(crate) use connector::SimConnector;
pub(crate) use endpoint_host::EndpointHost;
pub(crate) use failures::MAX_OPEN_CONNECTIONS;
pub(crate) use host::Host;
pub(crate) use ids::{ConnId, Dir, HostId, Side};
pub(crate) use log::{NetEvent, NetLog, SegmentEvent, SegmentKind, SynOutcome};
pub(crate) use network::{InFlight, Network};
pub(crate) use retrylab_endpoints::ConnectAction;
pub(crate) use stream::{ResetHandle, SimStream};
