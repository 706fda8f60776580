//! The watchdog: notices when the client stops virtual time.
//!
//! Virtual time only moves while every task waits; a client that blocks the thread
//! (`std::thread::sleep`, blocking IO, a busy loop) stops it, so what it meant as a pause of
//! one second takes no virtual time at all. The watchdog times each poll of the client's
//! future with the real clock and files the long ones.
//!
//! A client can also stop virtual time without blocking the run's thread: a pause inside
//! `spawn_blocking` (tokio does not advance paused time while a blocking task runs), or a
//! wait on a std channel fed by another thread. Then the runtime sits idle in real time. In
//! a simulation that never happens otherwise (when every task waits, time jumps to the next
//! timer at once), so real time passing between two polls with no virtual time passing is
//! filed too. It is a diagnostic: it reads the real
//! clock only to explain a run, and nothing it measures enters the trace ([determinism](../../../docs/architecture.md#determinism)).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use retrylab_endpoints::VirtualClock;

use crate::trace::LongPoll;

/// A poll longer than this blocked the thread. A correct client's poll takes microseconds;
/// the margin is wide so that a test thread descheduled on a loaded machine (CI runs many
/// simulations on two cores) is not taken for a blocking client.
pub(crate) const LONG_POLL: Duration = Duration::from_millis(500);

/// The long polls of one run, shared with the futures being watched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watchdog {
    long_polls: Arc<Mutex<Vec<LongPoll>>>,
    /// The virtual instant at which the latest poll of a call started. Virtual time cannot
    /// move while a poll blocks the thread, so for a run abandoned in a blocking poll this
    /// is the instant it stopped at, readable from the thread that abandons it.
    last_poll_ms: Arc<AtomicU64>,
}

impl Watchdog {
    /// Watches `future`, filing its long polls with the virtual instant `clock` reads and
    /// the number of attempts started so far, which `attempts()` gives.
    pub(crate) fn watch<F: Future, A: Fn() -> u32>(
        &self,
        future: F,
        clock: VirtualClock,
        attempts: A,
    ) -> Watched<F, A> {
        Watched {
            inner: future,
            clock,
            attempts,
            watchdog: self.clone(),
            last_end: None,
        }
    }

    /// The virtual instant at which the latest poll of a call started.
    pub(crate) fn last_poll_ms(&self) -> u64 {
        self.last_poll_ms.load(Ordering::Relaxed)
    }

    fn file(&self, poll: LongPoll) {
        lock(&self.long_polls).push(poll);
    }

    /// The long polls so far, in order.
    pub(crate) fn long_polls(&self) -> Vec<LongPoll> {
        lock(&self.long_polls).clone()
    }
}

/// The watchdog's records are plain values, consistent after any panic: a poisoned lock is
/// still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pin_project_lite::pin_project! {
    /// A future whose polls are timed.
    pub(crate) struct Watched<F, A> {
        #[pin]
        inner: F,
        clock: VirtualClock,
        attempts: A,
        watchdog: Watchdog,
        // When this future's latest poll ended: the real instant and the virtual one. Kept
        // per call, so the hot path takes no lock; a call waits between its polls while
        // others run only when they make virtual time pass or are filed themselves.
        last_end: Option<(Instant, u64)>,
    }
}

impl<F: Future, A: Fn() -> u32> Future for Watched<F, A> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let at_ms = this.clock.now_ms();
        let attempts_before = (this.attempts)();
        this.watchdog.last_poll_ms.store(at_ms, Ordering::Relaxed);
        let started = Instant::now();
        if let Some((ended, ended_at_ms)) = *this.last_end {
            let idle = started.saturating_duration_since(ended);
            if ended_at_ms == at_ms && idle >= LONG_POLL {
                this.watchdog.file(LongPoll {
                    at_ms,
                    attempts: (attempts_before, attempts_before),
                    wall_ms: idle.as_millis() as u64,
                    waited: true,
                });
            }
        }
        let result = this.inner.poll(cx);
        let ended = Instant::now();
        let took = ended.saturating_duration_since(started);
        if took >= LONG_POLL {
            this.watchdog.file(LongPoll {
                at_ms,
                attempts: (attempts_before, (this.attempts)()),
                wall_ms: took.as_millis() as u64,
                waited: false,
            });
        }
        *this.last_end = Some((ended, this.clock.now_ms()));
        result
    }
}
