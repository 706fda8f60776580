//! Crashes and restarts: an endpoint's process dies and comes back.
//!
//! A crash ends the endpoint's current *life*. Requests admitted in a life that has ended
//! never get a response and never commit after the crash (their process is gone), while what
//! they committed before it stays in the ledger: a commit on arrival followed by a crash is
//! the duplicate-on-timeout case, since the client sees only a reset and retries.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// Whether a restarted endpoint's scripts resume where they were or start over
/// ([`Endpoint::restart`](crate::Endpoint::restart)).
///
/// ```
/// use retrylab_endpoints::ScriptState;
/// assert_eq!(ScriptState::default(), ScriptState::Keep);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScriptState {
    /// Scripts and the connect schedule resume where they were: the state lived outside
    /// the process.
    #[default]
    Keep,
    /// Scripts and the connect schedule start over from their first step, for every scope.
    Reset,
}

/// The lives of one endpoint, counted from 0.
#[derive(Debug, Default)]
pub(crate) struct Lives {
    current: AtomicU64,
    /// Woken when a life ends.
    ended: Notify,
}

impl Lives {
    /// The life requests are admitted in now.
    pub(crate) fn current(&self) -> u64 {
        self.current.load(Ordering::Acquire)
    }

    /// Ends the current life (a crash) and wakes every wait on it.
    pub(crate) fn end(&self) {
        self.current.fetch_add(1, Ordering::AcqRel);
        self.ended.notify_waiters();
    }

    /// Resolves once `life` has ended.
    pub(crate) async fn ended(&self, life: u64) {
        loop {
            // Created before the count is read, so an end in between still wakes this wait.
            let notified = self.ended.notified();
            if self.current() != life {
                return;
            }
            notified.await;
        }
    }
}
