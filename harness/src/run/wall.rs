//! The wall-clock guard, `limits.wall`: the thread that started a run waits for it in real
//! time; when the limit runs out it stops the run as far as Rust allows, and says from
//! evidence why the run had not finished (docs/architecture.md#the-run-thread-and-its-guards).
//!
//! **Stopping.** The run's root future checks a [`Stop`] signal before anything else each
//! time it is polled. Once the signal is raised, the run's thread drops the simulation (the
//! client's calls with it) and shuts its runtime down without waiting for blocking tasks,
//! which drops every task: endpoints, the network's timers, tasks the client spawned. That
//! works whenever the runtime gets its thread back. A poll that never returns (a busy loop,
//! a blocking call) cannot be interrupted in Rust: the run is then abandoned, its thread
//! left to stop when that poll returns, and meanwhile nothing else of the run runs, the
//! runtime being single-threaded. A `spawn_blocking` task keeps its own thread until it
//! returns: tokio cancels none.
//!
//! **Evidence.** While it waits, the thread samples the run: virtual time, attempts started,
//! polls of the client's calls and whether one is under way, and, where the system says
//! ([`thread_time`](super::thread_time)), how the run's thread spent its time. What changed
//! in the last part of the window tells a slow but progressing run from a client that holds
//! the thread in one poll (on a CPU: a loop that never awaits; asleep: a blocking call) and
//! from a runtime that waits on something outside the simulation.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;

use super::thread_time::ThreadTime;
use crate::trace::{Spent, seconds};

/// How long the run has, once told to stop, to say it stopped: it then drops its
/// simulation and its runtime's tasks, which takes milliseconds, or longer on a loaded
/// machine.
const GRACE: Duration = Duration::from_millis(300);

/// How long a run that is past its calls (settled, assembling its trace) has to hand its
/// report back after `limits.wall`: that is the harness's own work, which ends.
const FINISHING_GRACE: Duration = Duration::from_millis(800);

/// Raised when `limits.wall` runs out; the run checks it first each time it is polled.
#[derive(Debug, Default)]
pub(super) struct Stop {
    raised: AtomicBool,
    waker: AtomicWaker,
}

impl Stop {
    /// Tells the run to stop, waking it if it waits.
    pub(super) fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.waker.wake();
    }

    pub(super) fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }
}

/// Runs `run` until it finishes (`Some` of its output) or `stop` is raised (`None`).
/// The signal is checked first, so a run that keeps making progress still sees it.
pub(super) async fn until_stopped<F: Future>(stop: &Stop, run: F) -> Option<F::Output> {
    let raised = std::future::poll_fn(|cx| {
        if stop.is_raised() {
            return Poll::Ready(());
        }
        stop.waker.register(cx.waker());
        // Raised between the check and the registration: the wake may have been missed.
        if stop.is_raised() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    // Biased: the signal first. It is raised only in real time, at `limits.wall`, so it
    // never changes the order of anything on the simulated path.
    tokio::select! {
        biased;
        () = raised => None,
        output = run => Some(output),
    }
}

/// What the waiting thread reads of a running run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pulse {
    /// Virtual time when the latest poll of a call started, in ms since the run started.
    /// A run that makes progress polls its calls as virtual time passes.
    pub(super) virtual_ms: u64,
    /// Attempts started when that poll started.
    pub(super) attempts: u32,
    /// Twice the polls of calls started, plus one while a poll runs.
    pub(super) polls: u64,
    /// The run's thread's times, where the system gives them.
    pub(super) thread: Option<ThreadTime>,
}

impl Pulse {
    fn same_progress(&self, other: &Pulse) -> bool {
        (self.virtual_ms, self.attempts, self.polls)
            == (other.virtual_ms, other.attempts, other.polls)
    }

    fn in_poll(&self) -> bool {
        self.polls % 2 == 1
    }
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    pulse: Pulse,
}

impl Sample {
    /// How the run's thread spent the time from `earlier` to this sample.
    fn spent_since(&self, earlier: &Sample) -> Option<Spent> {
        let (now, then) = (self.pulse.thread?, earlier.pulse.thread?);
        Some(now.spent_since(&then, self.at.saturating_duration_since(earlier.at), None))
    }
}

/// The samples the verdict is drawn from.
#[derive(Debug)]
struct Samples {
    /// The last part of the window, which tells whether the run was still moving.
    last_part: Duration,
    /// The samples of the last part, oldest first, with the one just before it.
    recent: VecDeque<Sample>,
    /// The first sample since which neither virtual time, attempts nor polls changed.
    unchanged_from: Option<Sample>,
}

impl Samples {
    fn new(last_part: Duration) -> Samples {
        Samples {
            last_part,
            recent: VecDeque::new(),
            unchanged_from: None,
        }
    }

    fn push(&mut self, sample: Sample) {
        if !self
            .unchanged_from
            .is_some_and(|from| from.pulse.same_progress(&sample.pulse))
        {
            self.unchanged_from = Some(sample);
        }
        self.recent.push_back(sample);
        while self
            .recent
            .get(1)
            .is_some_and(|second| sample.at.saturating_duration_since(second.at) >= self.last_part)
        {
            self.recent.pop_front();
        }
    }

    /// Why the run had not finished, on the evidence sampled.
    fn stall(&self) -> Stall {
        let (Some(first), Some(last), Some(unchanged)) =
            (self.recent.front(), self.recent.back(), self.unchanged_from)
        else {
            return Stall::Unseen;
        };
        let still = last.at.saturating_duration_since(unchanged.at);
        let (a, b) = (first.pulse, last.pulse);
        let span = last.at.saturating_duration_since(first.at);
        let moved = !a.same_progress(&b);
        let spent_still = last.spent_since(&unchanged);
        // Standing still for half the last part is stuck: a run that moves changes
        // something far more often. Unless the thread spent that time mostly waiting for a
        // CPU: then a run that moved before is slow on a loaded machine, not stuck.
        let descheduled = spent_still.is_some_and(|s| s.waiting_ms > s.on_cpu_ms + s.asleep_ms);
        if !moved || (still >= self.last_part / 2 && !descheduled) {
            let held = Held {
                still,
                at_ms: b.virtual_ms,
                attempts: b.attempts,
                spent: spent_still.map(|spent| (still, spent)),
            };
            return if b.in_poll() {
                Stall::InPoll(held)
            } else {
                Stall::Idle(held)
            };
        }
        let moving = Moving {
            span,
            from_ms: a.virtual_ms,
            to_ms: b.virtual_ms,
            attempts: b.attempts - a.attempts.min(b.attempts),
            total: b.attempts,
            polls: (b.polls - a.polls.min(b.polls)).div_ceil(2),
            spent: last.spent_since(first),
        };
        if b.virtual_ms > a.virtual_ms {
            Stall::Progressing(moving)
        } else if b.attempts > a.attempts {
            Stall::RetryingInPlace(moving)
        } else {
            Stall::PollingInPlace(moving)
        }
    }
}

/// What moved in the last part of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Moving {
    span: Duration,
    from_ms: u64,
    to_ms: u64,
    /// Attempts started in the span, and in all.
    attempts: u32,
    total: u32,
    /// Polls of calls started in the span.
    polls: u64,
    spent: Option<Spent>,
}

/// How long nothing moved, where, and how the run's thread spent that time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Held {
    still: Duration,
    at_ms: u64,
    attempts: u32,
    spent: Option<(Duration, Spent)>,
}

/// Why a run had not finished when `limits.wall` ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stall {
    /// Nothing of the run could be read: it had not set up.
    Unseen,
    /// Virtual time still passed: the run is slow, not stuck.
    Progressing(Moving),
    /// Attempts kept starting, all at one virtual instant.
    RetryingInPlace(Moving),
    /// Calls were polled, and neither virtual time nor attempts moved.
    PollingInPlace(Moving),
    /// One poll of a call held the thread while nothing moved.
    InPoll(Held),
    /// No poll of a call ran and nothing moved.
    Idle(Held),
}

/// How waiting for a run ended.
#[derive(Debug)]
pub(super) enum Waited<T> {
    /// The run handed this back within `limits.wall`.
    InTime(T),
    /// The run's thread went away without handing anything back.
    Lost,
    /// `limits.wall` ran out and the run was told to stop: why it had not finished, and
    /// what it handed back once told, if it did in time.
    Expired { stall: Stall, handed: Option<T> },
}

/// Waits up to `wall` for the run to hand back a `T` through `receiver`, sampling it with
/// `probe` meanwhile (`None` while nothing can be read: before the run is set up, or once
/// it is past its calls); when `wall` runs out, raises `stop` and waits a little more for
/// the run to say it stopped.
pub(super) fn wait<T>(
    receiver: &Receiver<T>,
    wall: Duration,
    stop: &Stop,
    probe: impl Fn() -> Option<Pulse>,
) -> Waited<T> {
    let slice = (wall / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut samples = Samples::new((wall / 4).max(2 * slice));
    // A limit too far away to add to the clock is never reached.
    let deadline = Instant::now().checked_add(wall);
    loop {
        let now = Instant::now();
        let left = match deadline {
            Some(deadline) if now >= deadline => break,
            Some(deadline) => deadline - now,
            None => slice,
        };
        match receiver.recv_timeout(left.min(slice)) {
            Ok(handed) => return Waited::InTime(handed),
            Err(RecvTimeoutError::Disconnected) => return Waited::Lost,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(pulse) = probe() {
            samples.push(Sample {
                at: Instant::now(),
                pulse,
            });
        }
    }
    let stall = samples.stall();
    stop.raise();
    let mut handed = receiver.recv_timeout(GRACE).ok();
    if handed.is_none() && probe().is_none() {
        // Past its calls: the harness is assembling the trace, which ends.
        handed = receiver.recv_timeout(FINISHING_GRACE).ok();
    }
    Waited::Expired { stall, handed }
}

/// The `wall_limit` verdict's message: why the run had not finished, what to do, and whether
/// the run could be stopped (`stopped`) or its thread had to be left running.
pub(super) fn explain(wall: Duration, stall: &Stall, stopped: bool) -> String {
    let mut message = format!(
        "the run had not finished after limits.wall ({}) of real time: ",
        dur(wall)
    );
    message += &match stall {
        Stall::Unseen => "it had not started its first call".to_owned(),
        Stall::Progressing(m) => format!(
            "it was still making progress (in the last {}, virtual time went from t={} to \
             t={} and {} attempts started, {} in all), so it is slow, not blocked{}. Raise \
             limits.wall, or make the run smaller (fewer calls, a lower \
             limits.max_client_attempts or limits.max_virtual_time); a release build runs \
             several times faster",
            dur(m.span),
            seconds(m.from_ms),
            seconds(m.to_ms),
            m.attempts,
            m.total,
            load(m.span, m.spent)
        ),
        Stall::RetryingInPlace(m) => format!(
            "the client kept making attempts without letting virtual time pass ({} in the \
             last {}, all at virtual t={}, {} in all): a retry loop with no delay, or one \
             that waits on the real clock, never ends in a simulation. Wait between \
             attempts with tokio::time::sleep (a retry crate: give it env.std_clock()), or \
             set limits.max_client_attempts",
            m.attempts,
            dur(m.span),
            seconds(m.to_ms),
            m.total
        ),
        Stall::PollingInPlace(m) => format!(
            "the client's calls were polled {} times in the last {} with neither virtual \
             time passing nor an attempt starting (virtual t={}): a loop that awaits only \
             futures that are always ready (tokio::task::yield_now, a channel that is never \
             empty) keeps the runtime busy, so virtual time never moves on. Await a timer \
             (tokio::time::sleep) or a response in the loop",
            m.polls,
            dur(m.span),
            seconds(m.to_ms)
        ),
        Stall::InPoll(held) => in_poll(held),
        Stall::Idle(held) => idle(held),
    };
    message += match (stopped, stall) {
        (true, Stall::Idle(_)) => {
            ". The run was stopped there: its runtime shut down and its tasks dropped, though \
             a spawn_blocking task keeps its own thread until it returns (tokio cancels \
             none); the trace shows what happened until then"
        }
        (true, _) => {
            ". The run was stopped there: its runtime shut down and its tasks dropped; the \
             trace shows what happened until then"
        }
        (false, _) => {
            ". The client's code still holds the run's thread, and Rust cannot interrupt a \
         thread: the run was abandoned, its thread left to stop (and drop the run's tasks) \
         once that code returns; the trace shows what happened until then"
        }
    };
    message
}

fn in_poll(held: &Held) -> String {
    let lead = format!(
        "one poll of the client has held the run's thread for {} (virtual time standing at \
         t={}, after {} attempts)",
        dur(held.still),
        seconds(held.at_ms),
        held.attempts
    );
    match held.spent {
        Some((_, spent)) if asleep(spent) => format!(
            "{lead}, asleep for {} of it: a blocking call in async code (std::thread::sleep, \
             blocking IO, a std lock or channel, another executor's block_on) stops virtual \
             time, and nothing else in the simulation runs meanwhile. Use tokio::time::sleep \
             and async IO, or move the blocking part to spawn_blocking",
            seconds(spent.asleep_ms)
        ),
        Some((span, spent)) => format!(
            "{lead}, busy on a CPU ({}): a loop that never awaits (a spin-wait, a retry \
             loop without an await) or a long computation stops virtual time, and nothing \
             else in the simulation runs meanwhile. Await inside the loop \
             (tokio::time::sleep), or move the computation to spawn_blocking",
            on_cpu(span, spent)
        ),
        None => format!(
            "{lead}: a blocking call (std::thread::sleep, blocking IO, a std lock) or a loop \
             that never awaits stops virtual time; this system gives no per-thread CPU time \
             to say which. Use tokio::time::sleep and async IO, and await inside loops"
        ),
    }
}

fn idle(held: &Held) -> String {
    let outside = "a spawn_blocking task that does not return (tokio lets no virtual time pass \
                   while one runs), a std channel or lock fed by another thread, or real IO";
    let lead = format!(
        "for {} no call was polled and virtual time stood still at t={} (after {} attempts)",
        dur(held.still),
        seconds(held.at_ms),
        held.attempts
    );
    match held.spent {
        Some((_, spent)) if asleep(spent) => format!(
            "{lead}, the run's thread asleep for {} of it: the runtime waited on something \
             outside the simulation, {outside}. Have the client await async work instead",
            seconds(spent.asleep_ms)
        ),
        Some((span, spent)) => format!(
            "{lead}, the run's thread busy outside the client's calls ({}): a task the \
             client spawned (tokio::spawn) that loops without awaiting holds the runtime. \
             Await inside the task's loop",
            on_cpu(span, spent)
        ),
        None => format!(
            "{lead}: the runtime waited on something outside the simulation ({outside}), or \
             a task the client spawned loops without awaiting; this system gives no \
             per-thread CPU time to say which"
        ),
    }
}

/// Whether the thread slept more than it ran. Time it spent waiting for a CPU says nothing
/// either way: a thread that wakes every millisecond to check a timer, as a runtime waiting
/// for a blocking task does, waits in the run queue after each wake on a loaded machine.
fn asleep(spent: Spent) -> bool {
    spent.asleep_ms >= spent.on_cpu_ms
}

/// `on a CPU for 0.950s of 1.000s`, with the time spent waiting for a CPU when it matters.
fn on_cpu(span: Duration, spent: Spent) -> String {
    let mut text = format!("on a CPU for {} of {}", seconds(spent.on_cpu_ms), dur(span));
    if spent.waiting_ms > spent.on_cpu_ms {
        text += &format!(
            ", ready to run but waiting for one for {}: the machine is loaded",
            seconds(spent.waiting_ms)
        );
    }
    text
}

/// `; its thread was on a CPU for only 0.100s of 0.250s and waited for one 0.150s: the machine is loaded`
fn load(span: Duration, spent: Option<Spent>) -> String {
    match spent {
        Some(spent) if spent.waiting_ms > spent.on_cpu_ms => format!(
            "; its thread was on a CPU for only {} of {} and waited for one {}: the \
             machine is loaded",
            seconds(spent.on_cpu_ms),
            dur(span),
            seconds(spent.waiting_ms)
        ),
        _ => String::new(),
    }
}

fn dur(duration: Duration) -> String {
    seconds(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
