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
//!
//! Real time alone would blame the client for the machine's load: a thread descheduled for
//! most of a second inside a poll that needs microseconds looks like a blocking client. So
//! where the system accounts for the thread's time ([`thread_time`](super::thread_time),
//! Linux), only the real time the thread took itself counts: on a CPU (a busy loop) or
//! asleep (a sleep, a lock, IO, a wait for a blocking task). Time it spent ready to run but
//! waiting for a CPU does not. Elsewhere real time is all there is, and it counts whole.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use retrylab_endpoints::VirtualClock;

use crate::backend::progress;

use super::seen_states::SeenStates;
use super::thread_time::{self, Reading};
use crate::trace::{LongPoll, Spent};

/// A poll in which the thread took this much real time itself (on a CPU or asleep) blocked
/// the thread. A correct client's poll takes microseconds; the margin is wide because where
/// the system does not say how the thread spent its time, real time is all there is, and a
/// thread descheduled on a loaded machine (CI runs many simulations on two cores) must not be
/// taken for a blocking client.
pub(crate) const LONG_POLL: Duration = Duration::from_millis(500);

/// The long polls of one run, shared with the futures being watched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watchdog {
    long_polls: Arc<Mutex<Vec<LongPoll>>>,
    /// The virtual instant at which the latest poll of a call started. Virtual time cannot
    /// move while a poll blocks the thread, so for a run abandoned in a blocking poll this
    /// is the instant it stopped at, readable from the thread that abandons it.
    last_poll_ms: Arc<AtomicU64>,
    /// Twice the number of polls of calls started, plus one while a poll runs: odd means the
    /// run's thread is inside the client's code. The thread that waits for the run reads it
    /// to tell a thread held by the client from one that waits or goes on.
    polls: Arc<AtomicU64>,
    /// The attempts started when the latest poll of a call started: what the waiting thread
    /// reads instead of the recorder, whose lock the run takes on every attempt (a waiting
    /// thread descheduled while holding it would stop the run it watches).
    attempts: Arc<AtomicU32>,
    /// The states the waiting thread saw the run's thread in during the latest poll it
    /// sampled.
    seen: SeenStates,
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
            last_start: None,
        }
    }

    /// The virtual instant at which the latest poll of a call started.
    pub(crate) fn last_poll_ms(&self) -> u64 {
        self.last_poll_ms.load(Ordering::Relaxed)
    }

    /// Twice the polls of calls started so far, plus one while a poll runs.
    pub(crate) fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }

    /// The attempts started when the latest poll of a call started.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// Files the state the waiting thread saw the run's thread in while the poll counter
    /// read `polls`.
    pub(crate) fn saw_thread(&self, polls: u64, asleep: bool) {
        self.seen.note(polls, asleep);
    }

    /// Counts a poll's start or end. Only the run's thread polls calls, one at a time, so a
    /// load and a store do (no read-modify-write on the hot path).
    fn step_polls(&self) {
        let polls = self.polls.load(Ordering::Relaxed);
        self.polls.store(polls + 1, Ordering::Relaxed);
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
        // The virtual instant the latest poll started at, and its milliseconds: a call is
        // often polled again at the same instant, whose milliseconds are then not worked
        // out again.
        last_start: Option<(tokio::time::Instant, u64)>,
    }
}

thread_local! {
    /// The thread's times read as the latest poll of a call ended, with the run it belongs
    /// to: the evidence for a stretch measured from the latest mark of progress
    /// ([`progress`]), which is at most as old.
    static READING: Cell<Option<(usize, Option<Reading>)>> = const { Cell::new(None) };
}

/// Whether at least [`LONG_POLL`] of real time passed from `from` to `to`: a comparison of
/// instants, cheaper than measuring the span on every poll.
fn long_since(from: Instant, to: Instant) -> bool {
    from.checked_add(LONG_POLL).is_some_and(|long| to >= long)
}

/// Whether `wall` of real time, during which virtual time stood still, stopped the clock,
/// given how the thread spent the span around it (at least `wall` long, starting up to
/// [`thread_time`]'s reading age earlier), where the system says. Returns the evidence to
/// file, or `None` when nothing is to be filed.
fn stopped_clock(wall: Duration, evidence: Option<(Duration, Spent)>) -> Option<Option<Spent>> {
    let threshold = LONG_POLL.as_millis() as u64;
    match evidence {
        // Nothing but real time to go by.
        None => (wall >= LONG_POLL).then_some(None),
        Some((_, spent)) => {
            // The span may start a little before the poll or the wait; what the thread did
            // itself within it is at most its real time.
            let own = spent.own_ms().min(wall.as_millis() as u64);
            (own >= threshold).then_some(Some(spent))
        }
    }
}

impl<F: Future, A: Fn() -> u32> Future for Watched<F, A> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // The virtual clock is read once as the poll starts and once as it ends (a poll can
        // move it: `tokio::time::advance`), and turned into milliseconds once.
        let at = tokio::time::Instant::now();
        let at_ms = match *this.last_start {
            Some((last, last_ms)) if last == at => last_ms,
            _ => this.clock.ms_at(at),
        };
        *this.last_start = Some((at, at_ms));
        let attempts_before = (this.attempts)();
        this.watchdog.last_poll_ms.store(at_ms, Ordering::Relaxed);
        this.watchdog
            .attempts
            .store(attempts_before, Ordering::Relaxed);
        this.watchdog.step_polls();
        let started = Instant::now();
        // A stop of the clock is a stretch with no progress the watchdog can account for:
        // measured from the latest poll of any call or operation of the network, not from
        // this call's previous poll (in a fleet, a call waits between its polls while the
        // thread polls thousands of others and serves their connections, at one virtual
        // instant, and none of that stops the clock).
        let owner = Arc::as_ptr(&this.watchdog.polls) as usize;
        if let Some(progress::Mark {
            real: ended,
            virtual_at: ended_at,
            ..
        }) = progress::latest(owner)
        {
            let reading = READING
                .get()
                .filter(|(run, _)| *run == owner)
                .and_then(|(_, reading)| reading);
            // Real time first: virtual time and the thread's times are looked at only for
            // a span long enough.
            if long_since(ended, started) && this.clock.ms_at(ended_at) == at_ms {
                let idle = started.saturating_duration_since(ended);
                // Between polls the runtime naps; the switches split that span well.
                let evidence = reading.and_then(|r| r.spent_until(started, None));
                if let Some(spent) = stopped_clock(idle, evidence) {
                    this.watchdog.file(LongPoll {
                        at_ms,
                        attempts: (attempts_before, attempts_before),
                        wall_ms: idle.as_millis() as u64,
                        waited: true,
                        spent,
                    });
                }
            }
        }
        let reading = thread_time::recent(started);
        let result = this.inner.poll(cx);
        let ended = Instant::now();
        if long_since(started, ended) {
            let took = ended.saturating_duration_since(started);
            let seen = this.watchdog.seen.during(this.watchdog.polls());
            let evidence = reading.and_then(|r| r.spent_until(ended, seen));
            if let Some(spent) = stopped_clock(took, evidence) {
                this.watchdog.file(LongPoll {
                    at_ms,
                    attempts: (attempts_before, (this.attempts)()),
                    wall_ms: took.as_millis() as u64,
                    waited: false,
                    spent,
                });
            }
        }
        progress::set(owner, ended);
        READING.set(Some((owner, thread_time::recent(ended))));
        this.watchdog.step_polls();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(on_cpu_ms: u64, waiting_ms: u64, asleep_ms: u64) -> Spent {
        Spent {
            on_cpu_ms,
            waiting_ms,
            asleep_ms,
        }
    }

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// A correct 100,000-attempt run at load 17 failed on one 0.62 s poll: the thread had
    /// waited for a CPU, which is the machine's doing.
    #[test]
    fn a_descheduled_poll_does_not_stop_the_clock() {
        assert_eq!(
            stopped_clock(ms(620), Some((ms(650), spent(1, 649, 0)))),
            None
        );
        // A 25 ms poll at a 5% CPU share.
        assert_eq!(
            stopped_clock(ms(520), Some((ms(540), spent(25, 515, 0)))),
            None
        );
    }

    #[test]
    fn a_sleep_or_a_spin_stops_the_clock() {
        let asleep = spent(1, 20, 780);
        assert_eq!(
            stopped_clock(ms(800), Some((ms(801), asleep))),
            Some(Some(asleep))
        );
        let busy = spent(590, 30, 0);
        assert_eq!(
            stopped_clock(ms(600), Some((ms(620), busy))),
            Some(Some(busy))
        );
    }

    /// The span's reading may be up to 50 ms older than the poll: what the thread did
    /// before the poll does not count beyond the poll's own real time.
    #[test]
    fn the_span_before_a_poll_counts_no_more_than_the_poll() {
        assert_eq!(
            stopped_clock(ms(480), Some((ms(530), spent(30, 0, 500)))),
            None
        );
    }

    #[test]
    fn long_since_is_at_least_the_long_poll() {
        let from = Instant::now();
        assert!(!long_since(from, from));
        assert!(!long_since(from, from + ms(499)));
        assert!(long_since(from, from + ms(500)));
        // A span that ends before it starts is no span.
        assert!(!long_since(from + ms(900), from));
    }

    /// Without the system's accounting, real time is all there is.
    #[test]
    fn without_evidence_real_time_decides() {
        assert_eq!(stopped_clock(ms(500), None), Some(None));
        assert_eq!(stopped_clock(ms(499), None), None);
    }
}
