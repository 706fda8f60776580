//! The watchdog: notices when the client blocks its thread.
//!
//! Virtual time only moves while every task waits; a client that blocks the thread
//! (`std::thread::sleep`, blocking IO, a busy loop) stops it, so what it meant as a pause of
//! one second takes no virtual time at all. The watchdog times each poll of the client's
//! future with the real clock and files the long ones. It is a diagnostic: it reads the real
//! clock only to explain a run, and nothing it measures enters the trace ([determinism](../../../docs/architecture.md#determinism)).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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
    /// Watches `future`, filing its long polls with what `now()` says: the virtual instant
    /// and the number of attempts started so far.
    pub(crate) fn watch<F: Future>(
        &self,
        future: F,
        now: impl Fn() -> (u64, u32),
    ) -> Watched<F, impl Fn() -> (u64, u32)> {
        Watched {
            inner: future,
            now,
            watchdog: self.clone(),
        }
    }

    /// The virtual instant at which the latest poll of a call started.
    pub(crate) fn last_poll_ms(&self) -> u64 {
        self.last_poll_ms.load(Ordering::Relaxed)
    }

    /// The long polls so far, in order.
    pub(crate) fn long_polls(&self) -> Vec<LongPoll> {
        self.long_polls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

pin_project_lite::pin_project! {
    /// A future whose polls are timed.
    pub(crate) struct Watched<F, N> {
        #[pin]
        inner: F,
        now: N,
        watchdog: Watchdog,
    }
}

impl<F: Future, N: Fn() -> (u64, u32)> Future for Watched<F, N> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let (at_ms, attempts_before) = (this.now)();
        this.watchdog.last_poll_ms.store(at_ms, Ordering::Relaxed);
        let started = Instant::now();
        let result = this.inner.poll(cx);
        let took = started.elapsed();
        if took >= LONG_POLL {
            let (_, attempts_after) = (this.now)();
            this.watchdog
                .long_polls
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(LongPoll {
                    at_ms,
                    attempts: (attempts_before, attempts_after),
                    wall_ms: took.as_millis() as u64,
                });
        }
        result
    }
}
