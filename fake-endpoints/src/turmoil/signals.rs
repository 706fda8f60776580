//! What an endpoint host tells the client's host about a connection that turmoil's TCP
//! cannot carry: a refused or black-holed connect, and a reset.
//!
//! turmoil answers a SYN itself as soon as the listener takes it, and sends RST only when a
//! socket closes with data unread. So the endpoint decides a refusal, a black hole or a
//! reset on a connection turmoil has already made, notes it here under the connection's two
//! addresses, and closes its end (or, for a black hole, keeps it unread). The client's
//! connector reads the note where TCP would have shown it: a refusal or a black hole when
//! the SYN-ACK would have come back, a reset when the endpoint's FIN arrives in its place.
//!
//! Notes are keyed by the two addresses, which a later connection may have again once the
//! client's ephemeral port is reused; and an endpoint may note a reset after the client
//! forgot the connection. So the client forgets a connection's note when it drops its stream
//! (or reads a refusal), and the endpoint forgets the note on a connection's addresses as it
//! accepts one, before deciding on it: every connection starts without a note.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::server::conn::ConnectionControl;

/// What an endpoint did to a connection that turmoil's TCP did not show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Signal {
    /// The connect was refused: the client's connect fails (an RST instead of the SYN-ACK).
    Refused,
    /// The connect was black-holed: the client's connect never completes.
    Blackholed,
    /// The connection was reset: the client's read of the end of the stream fails with
    /// `ConnectionReset` instead of ending it.
    Reset,
}

/// The two ends of one connection: the client's address and the endpoint's, as each side
/// reads them off its stream (`local_addr` and `peer_addr` swapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ends {
    /// The client's address (its host and ephemeral port).
    pub client: SocketAddr,
    /// The endpoint's address (its host and port).
    pub endpoint: SocketAddr,
}

/// The notes of one simulation's endpoints, shared by its hosts (all stepped on one thread).
///
/// ```
/// use retrylab_endpoints::ConnectionControl;
/// use retrylab_endpoints::turmoil::{Ends, Signal, Signals};
///
/// let signals = Signals::new();
/// let ends = Ends {
///     client: "192.168.0.2:49152".parse().unwrap(),
///     endpoint: "192.168.0.1:80".parse().unwrap(),
/// };
/// assert_eq!(signals.read(ends), None);
/// signals.reset(ends).reset();
/// assert_eq!(signals.read(ends), Some(Signal::Reset));
/// signals.forget(ends);
/// assert_eq!(signals.read(ends), None);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Signals {
    notes: Arc<Mutex<BTreeMap<Ends, Signal>>>,
}

impl Signals {
    /// No notes yet.
    pub fn new() -> Signals {
        Signals::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<Ends, Signal>> {
        // Notes are only inserted and removed whole: a poisoned lock still holds them intact.
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes `signal` on the connection between `ends`.
    pub fn note(&self, ends: Ends, signal: Signal) {
        self.lock().insert(ends, signal);
    }

    /// What the endpoint noted on the connection between `ends`, if anything.
    pub fn read(&self, ends: Ends) -> Option<Signal> {
        self.lock().get(&ends).copied()
    }

    /// Forgets the connection between `ends` (its client's stream is gone), so a later
    /// connection that happens to get the same ephemeral port starts without a note.
    pub fn forget(&self, ends: Ends) {
        self.lock().remove(&ends);
    }

    /// A [`ConnectionControl`] whose reset notes [`Signal::Reset`] on the connection between
    /// `ends`; the endpoint then drops its end, and the FIN turmoil sends carries the reset.
    pub fn reset(&self, ends: Ends) -> NoteReset {
        NoteReset {
            signals: self.clone(),
            ends,
        }
    }
}

/// Resets one connection by noting it ([`Signals::reset`]).
#[derive(Clone, Debug)]
pub struct NoteReset {
    signals: Signals,
    ends: Ends,
}

impl ConnectionControl for NoteReset {
    fn reset(&self) {
        self.signals.note(self.ends, Signal::Reset);
    }
}
