//! What the thread waiting for a run can read of it while it runs, and the report it
//! salvages from that when the run does not hand back its own (abandoned at `limits.wall`,
//! or its harness code panicked).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use retrylab_endpoints::{Endpoint, VirtualClock};

use super::calls::CallLog;
use super::panics::panic_message;
use super::thread_time::{ThreadTime, Tid};
use super::wall::Pulse;
use super::watchdog::Watchdog;
use crate::backend::Net;
use crate::report::{Report, RunEnd, Verdict};
use crate::trace::assemble;
use crate::trace::record::Recorder;
use crate::trace::seconds;

/// What the thread waiting for a run can still read of it: everything the trace is
/// assembled from. The run thread publishes it once the run is set up, so a run that is
/// abandoned at `limits.wall`, or whose harness code panicked, still reports every attempt
/// recorded up to that point.
pub(super) struct Live {
    pub(super) header: Vec<(String, String)>,
    /// The client instances of the run (`operation.clients`).
    pub(super) clients: u32,
    pub(super) recorder: Recorder,
    pub(super) network: Net,
    pub(super) endpoints: Vec<(String, Endpoint)>,
    pub(super) calls: CallLog,
    pub(super) watchdog: Watchdog,
    /// The run's runtime and clock, through which the waiting thread reads virtual time.
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) clock: VirtualClock,
    /// The run's thread, whose times the waiting thread reads (Linux).
    pub(super) thread: Option<Tid>,
}

impl Live {
    /// The run's virtual time now, read from another thread (through the runtime's clock,
    /// behind a lock: for the salvaged trace, not for sampling).
    pub(super) fn virtual_ms(&self) -> u64 {
        // The paused clock is the runtime's: read it as the run's thread would.
        let _entered = self.runtime.enter();
        self.clock.now_ms()
    }

    /// What the waiting thread samples of the run while it waits: atomics the run's calls
    /// keep, never a lock the run takes (a waiting thread descheduled while holding one
    /// would stop the run it watches), and the run's thread's times from `/proc`.
    /// The state the thread is in is filed with the poll under way, for the watchdog to
    /// split a long poll by.
    pub(super) fn pulse(&self) -> Pulse {
        let polls = self.watchdog.polls();
        let thread = self.thread.and_then(ThreadTime::of);
        if let Some(thread) = thread {
            self.watchdog.saw_thread(polls, thread.is_asleep());
        }
        Pulse {
            virtual_ms: self.watchdog.last_poll_ms(),
            attempts: self.watchdog.attempts(),
            polls,
            thread,
        }
    }
}

pub(super) type LiveSlot = Arc<Mutex<Option<Live>>>;

pub(super) fn live_lock(live: &LiveSlot) -> std::sync::MutexGuard<'_, Option<Live>> {
    // Published once and taken once: a poisoned lock still holds a consistent value.
    live.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a turmoil run that virtual time kept moving in stopped at `limits.wall`: turmoil
/// steps every host each millisecond, so a long wait costs wall time, where the other
/// backends jump to the next timer. The run's calls are not polled while it waits, so the
/// watchdog's reading (a loop in a task) would mislead. `None` elsewhere, or when virtual
/// time did not move (a client that blocks its thread, which the usual reading explains).
pub(super) fn turmoil_wall_message(
    on_turmoil: bool,
    wall: Duration,
    live: &LiveSlot,
) -> Option<String> {
    if !on_turmoil {
        return None;
    }
    let virtual_ms = live_lock(live).as_ref().map(Live::virtual_ms)?;
    let wall_ms = u64::try_from(wall.as_millis()).unwrap_or(u64::MAX);
    (virtual_ms > wall_ms).then(|| {
        format!(
            "the run had not finished after limits.wall ({}) of real time, at t={} of \
             virtual time: turmoil steps every host once per millisecond of virtual time, \
             whether anything is due or not, so a long wait costs wall time. Lower \
             limits.max_virtual_time, shorten the schedule, or raise limits.wall",
            seconds(wall_ms),
            seconds(virtual_ms)
        )
    })
}

/// The report of a run stopped or abandoned at `limits.wall`: its trace so far, the
/// verdict saying why, and the panics filed until then.
pub(super) fn wall_limit_report(
    live: &LiveSlot,
    name: String,
    seed: u64,
    message: String,
    panics: &[String],
) -> Report {
    let mut report = salvaged_report(live, name, seed, RunEnd::WallLimit, message);
    if !panics.is_empty() {
        report
            .verdicts
            .push(Verdict::fail("panic", panic_message(panics)));
    }
    report
}

/// The report of a run that did not hand back its own: the trace is assembled from what the
/// run published, up to the virtual instant the run had reached.
pub(super) fn salvaged_report(
    live: &LiveSlot,
    name: String,
    seed: u64,
    end: RunEnd,
    message: String,
) -> Report {
    let live = live_lock(live).take();
    let Some(live) = live else {
        // The run never got as far as setting up: nothing was recorded.
        return Report::not_run(name, seed, end, message);
    };
    // Whatever the abandoned client does from here on is recorded nowhere: it fails.
    live.network.end_run();
    let check = end.verdict_name().unwrap_or("run");
    // Virtual time cannot move while a poll blocks the thread, nor once the run stopped.
    let end_ms = live.virtual_ms().max(live.watchdog.last_poll_ms());
    let assembled = assemble::assemble(
        live.header,
        end_ms,
        live.clients,
        live.calls.snapshot(),
        live.recorder,
        &live.network,
        &live.endpoints,
    );
    Report {
        name,
        seed,
        trace: assembled.trace,
        end,
        verdicts: vec![Verdict::fail(check, message)],
        snapshot: None,
        snapshot_skipped: None,
        ledgers: assembled.ledgers,
        request_calls: assembled.request_calls,
        long_polls: live.watchdog.long_polls(),
        warnings: Vec::new(),
        unsettled: None,
        processes: Vec::new(),
    }
}
