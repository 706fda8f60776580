//! The connect windows real sockets can make: refused connections (the port is bound but
//! nothing listens yet, so the kernel answers a SYN with RST: `ECONNREFUSED`) and black-holed
//! ones (the listener's accept queue is kept full, so the kernel drops a SYN and the client's
//! connect hangs, retransmitting), each until an instant of the run. A kernel decides these
//! connects: the endpoint never sees them, and its ledger records only the connections made
//! after the windows. Count-based entries cannot be made here (a refused connect reaches no
//! program that could count it); validation asks for `until:` instead.

use std::net::SocketAddr;
use std::time::Duration;

use retrylab_endpoints::{ConnectAction, ConnectStep};
use tokio::net::{TcpListener, TcpSocket};

/// How long a filler connection may take: it connects to a listener of this process on
/// loopback, which answers at once or never (a full queue).
const FILLER_CONNECT: Duration = Duration::from_millis(100);

/// The windows of one endpoint: connections are refused until `refuse_ms`, then black-holed
/// until `blackhole_ms` (ms since the run started).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Windows {
    refuse_ms: Option<u64>,
    blackhole_ms: Option<u64>,
}

impl Windows {
    /// The windows a connect schedule asks for: its leading entries with an instant
    /// (validation allows no other refused or black-holed entry on real sockets).
    pub(super) fn of(steps: &[ConnectStep]) -> Windows {
        let mut windows = Windows::default();
        for step in steps {
            match (step.action, step.until_ms) {
                (ConnectAction::Refuse, Some(until)) => windows.refuse_ms = Some(until),
                (ConnectAction::Blackhole, Some(until)) => windows.blackhole_ms = Some(until),
                _ => break,
            }
        }
        windows
    }

    /// Whether the endpoint listens from the start, as it does without windows.
    pub(super) fn none(&self) -> bool {
        self.refuse_ms.is_none() && self.blackhole_ms.is_none()
    }
}

/// Listens on `socket` (bound, not listening) once the windows allow, and hands back the
/// listener to serve from then on: after `windows.refuse_ms` of not listening, and
/// `windows.blackhole_ms` of a full accept queue. `started` is the run's start.
pub(super) async fn listen_after(
    socket: TcpSocket,
    windows: Windows,
    started: tokio::time::Instant,
) -> std::io::Result<TcpListener> {
    let address = socket.local_addr()?;
    if let Some(until) = windows.refuse_ms {
        tokio::time::sleep_until(started + Duration::from_millis(until)).await;
    }
    let Some(until) = windows.blackhole_ms else {
        return socket.listen(1024);
    };
    // A backlog of 0 holds one connection; the fillers occupy it, and the kernel drops
    // every SYN that finds it full.
    let listener = socket.listen(0)?;
    let fillers = fill(address).await;
    tokio::time::sleep_until(started + Duration::from_millis(until)).await;
    // The fillers queued first, before any client's SYN could get in: the first ones
    // accepted are theirs, and are dropped with them.
    for _ in 0..fillers.len() {
        if let Ok(Ok(_)) = tokio::time::timeout(FILLER_CONNECT, listener.accept()).await {}
    }
    drop(fillers);
    Ok(listener)
}

/// Connections of this process to `address` until the listener's queue is full: the
/// ones that completed.
async fn fill(address: SocketAddr) -> Vec<tokio::net::TcpStream> {
    let mut fillers = Vec::new();
    // Bounded: the queue of a backlog of 0 holds one or two, depending on the kernel.
    for _ in 0..4 {
        match tokio::time::timeout(FILLER_CONNECT, tokio::net::TcpStream::connect(address)).await {
            Ok(Ok(stream)) => fillers.push(stream),
            // A connect that does not complete found the queue full: it is.
            _ => break,
        }
    }
    fillers
}
