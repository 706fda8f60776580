//! When the run's thread last made progress the clock guard can account for.
//!
//! The watchdog (`run/watchdog.rs`) files a stretch of real time in which virtual time
//! stood still and the run's thread did nothing it knows of: the thread asleep on something
//! outside the simulation, or held by a task the client spawned. What it knows of is a poll
//! of a call, which it times itself, and the network's work, marked here: every operation of
//! the sim network (a connect, a read, a write, a close, by a call or by an endpoint's task)
//! takes its lock, and the lock marks the instant. In a fleet the thread serves thousands of
//! connections between two polls of calls; that is the harness at work, never a stopped
//! clock.
//!
//! One run drives its calls and its network on one thread, so the mark is the thread's;
//! `owner` names the run whose watchdog set it, so one run never reads another's. Reading
//! the real clock here is a diagnostic: nothing it gives enters a trace.

use std::cell::Cell;
use std::time::Instant;

/// The latest progress of a run on this thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    /// The run's watchdog.
    pub(crate) owner: usize,
    /// The real instant.
    pub(crate) real: Instant,
    /// The virtual instant.
    pub(crate) virtual_at: tokio::time::Instant,
}

thread_local! {
    static LATEST: Cell<Option<Mark>> = const { Cell::new(None) };
}

/// The latest mark of the run `owner` on this thread, if any.
pub(crate) fn latest(owner: usize) -> Option<Mark> {
    LATEST.get().filter(|mark| mark.owner == owner)
}

/// Marks progress of the run `owner` now (a poll of a call just ended).
pub(crate) fn set(owner: usize, real: Instant) {
    LATEST.set(Some(Mark {
        owner,
        real,
        virtual_at: tokio::time::Instant::now(),
    }));
}

/// Marks progress of the network now, for the run whose calls this thread polls (nothing
/// before its first call's poll: there is no stretch to measure yet).
pub(crate) fn network() {
    if let Some(mark) = LATEST.get() {
        set(mark.owner, Instant::now());
    }
}
