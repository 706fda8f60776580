//! What the network's operations fail with, and the cap on open connections past which a
//! connect fails.

use std::io;

/// The most connections the network holds open at once beyond what the run's clients need,
/// connects on their way included. Each costs a few kilobytes (both ends, and the endpoint
/// serving it), and a client that opens connections without closing them, on a network
/// without latency, does so without virtual time moving: this stops it at some 30 MB rather
/// than at the machine's memory. A pool of the harness's client, or of any sane client,
/// stays far below it. A fleet's clients each keep their own pool open, so a fleet's cap
/// adds one connection per call each client after the first may have in flight
/// ([`Network::set_connection_cap`](super::network::Network::set_connection_cap)).
pub(crate) const MAX_OPEN_CONNECTIONS: usize = 10_000;

/// What an operation on a connection reset (by either end) gets.
pub(super) fn reset_error() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "connection reset")
}

/// What a client that kept its `Env` past its run gets from every connect and every
/// operation on a connection.
pub(super) fn run_ended() -> io::Error {
    crate::backend::run_ended_error()
}

/// What a connect past the network's cap of `cap` open connections gets.
pub(super) fn too_many_connections(cap: usize) -> io::Error {
    io::Error::other(format!(
        "retrylab: the simulated network holds at most {cap} connections open at once, and \
         this run has {cap} open: the client opens connections and does not close them"
    ))
}

/// What a write after this end shut down gets.
pub(super) fn broken_pipe() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "write after shutdown")
}
