//! Where a thread's real time went: on a CPU, waiting for one, or asleep.
//!
//! On a loaded machine real time alone proves nothing: a thread that is ready to run but
//! waits for a CPU loses real time it never used, and a correct run on a busy two-core CI
//! machine can lose most of a second that way inside a poll that needs microseconds. Linux
//! accounts for every thread: `/proc/<pid>/task/<tid>/schedstat` gives the time it spent on a
//! CPU and the time it spent runnable on a run queue, and `status` its state and its
//! voluntary context switches (it gave the CPU up: a sleep, a lock, IO) and involuntary ones
//! (the scheduler took the CPU away). What is left of a span of real time the thread was
//! asleep, if it gave the CPU up at all. A wait on a run queue follows every switch; the
//! share that follows voluntary ones ends a sleep, and belongs to it: a runtime that waits
//! for a blocking task wakes every time a timer of its is due and sleeps again, and on a
//! loaded machine it can wait longer for a CPU after each wake than it slept. From these the
//! watchdog and the wall limit tell a thread that blocked or spun from one that was
//! descheduled. Other systems give no such evidence here; callers then judge by real time
//! alone (docs/architecture.md#the-run-thread-and-its-guards).
//!
//! A reading costs two small file reads, so the run's thread takes one at most every
//! [`RECENT`] and keeps it, never one per poll.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::seen_states::StatesSeen;
use crate::trace::Spent;

/// How old the reading a span starts from may be. A span of interest is 500 ms or more, so
/// a reading up to this much older than its start changes its figures a little at most.
const RECENT: Duration = Duration::from_millis(50);

/// A Linux thread id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tid(u32);

impl Tid {
    /// The calling thread's id, or `None` where `/proc` does not give it.
    pub(crate) fn current() -> Option<Tid> {
        // `/proc/thread-self` links to `<pid>/task/<tid>`.
        let link = std::fs::read_link("/proc/thread-self").ok()?;
        link.file_name()?.to_str()?.parse().ok().map(Tid)
    }
}

/// A thread's times and context switches so far, as the kernel counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThreadTime {
    on_cpu_ns: u64,
    runnable_ns: u64,
    voluntary: u64,
    involuntary: u64,
    /// Asleep when read (state `S` or `D`, or stopped).
    asleep: bool,
}

impl ThreadTime {
    /// Thread `tid`'s times, or `None` where the kernel does not give them.
    pub(crate) fn of(tid: Tid) -> Option<ThreadTime> {
        Self::read(&format!("/proc/self/task/{}", tid.0))
    }

    /// A reading made up: ms on a CPU and runnable, voluntary and involuntary switches,
    /// asleep when read.
    #[cfg(test)]
    pub(crate) fn for_tests(
        on_cpu_ms: u64,
        runnable_ms: u64,
        switches: (u64, u64),
        asleep: bool,
    ) -> ThreadTime {
        ThreadTime {
            on_cpu_ns: on_cpu_ms * 1_000_000,
            runnable_ns: runnable_ms * 1_000_000,
            voluntary: switches.0,
            involuntary: switches.1,
            asleep,
        }
    }

    /// The calling thread's times.
    fn current() -> Option<ThreadTime> {
        Self::read("/proc/thread-self")
    }

    fn read(dir: &str) -> Option<ThreadTime> {
        let schedstat = std::fs::read_to_string(format!("{dir}/schedstat")).ok()?;
        let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
        parse(&schedstat, &status)
    }

    /// Whether the thread was asleep when read.
    pub(crate) fn is_asleep(&self) -> bool {
        self.asleep
    }

    /// How the thread spent the `wall` of real time from `earlier` to this reading, given
    /// the states another thread `seen` it in meanwhile, if any.
    pub(crate) fn spent_since(
        &self,
        earlier: &ThreadTime,
        wall: Duration,
        seen: Option<StatesSeen>,
    ) -> Spent {
        let wall_ns = u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX);
        let on_cpu = self
            .on_cpu_ns
            .saturating_sub(earlier.on_cpu_ns)
            .min(wall_ns);
        let runnable = self
            .runnable_ns
            .saturating_sub(earlier.runnable_ns)
            .min(wall_ns - on_cpu);
        let voluntary = self.voluntary.saturating_sub(earlier.voluntary);
        let involuntary = self.involuntary.saturating_sub(earlier.involuntary);
        // A thread only sleeps by giving its CPU up: in the span, or before it if it was
        // asleep when it began. Otherwise time the counters do not cover yet is not sleep:
        // the kernel adds a wait on a run queue when the wait ends, and CPU time a tick late.
        let slept = if voluntary > 0 || earlier.asleep {
            wall_ns - on_cpu - runnable
        } else {
            0
        };
        // Time on a run queue after a voluntary switch may be sleep the scheduler kept
        // queued, or the wait for a CPU that ended a sleep: either belongs to the sleep
        // (seen_states). The states another thread saw split it best; without them, split in
        // proportion to the switches. With no voluntary switch there was no sleep.
        let woken = match (voluntary, seen) {
            (0, _) => 0,
            (_, Some(seen)) => seen.asleep_share(runnable),
            (_, None) => {
                let share = u128::from(runnable) * u128::from(voluntary)
                    / u128::from(voluntary + involuntary);
                u64::try_from(share).unwrap_or(runnable)
            }
        };
        let asleep = slept + woken;
        let ms = |ns: u64| ns / 1_000_000;
        Spent {
            on_cpu_ms: ms(on_cpu),
            waiting_ms: ms(wall_ns - on_cpu - asleep),
            asleep_ms: ms(asleep),
        }
    }
}

/// `schedstat` is `<ns on a CPU> <ns runnable on a run queue> <timeslices>`; `status` has
/// `State:`, `voluntary_ctxt_switches:` and `nonvoluntary_ctxt_switches:` lines.
fn parse(schedstat: &str, status: &str) -> Option<ThreadTime> {
    let mut fields = schedstat.split_whitespace().map(str::parse::<u64>);
    let on_cpu_ns = fields.next()?.ok()?;
    let runnable_ns = fields.next()?.ok()?;
    // `State:` is among the first lines and the switch counts are the last ones: each is
    // looked for from its own end of the file, not past the fifty lines between (three
    // scans of the whole file were most of what a reading cost).
    let first = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(str::trim)
    };
    let last = |key: &str| {
        status
            .lines()
            .rev()
            .find_map(|line| line.strip_prefix(key))
            .map(str::trim)
    };
    // `R` is running or ready to run; `S`, `D` (sleeping), `T` and `t` (stopped) are not.
    let state = first("State:")?.chars().next()?;
    Some(ThreadTime {
        on_cpu_ns,
        runnable_ns,
        voluntary: last("voluntary_ctxt_switches:")?.parse().ok()?,
        involuntary: last("nonvoluntary_ctxt_switches:")?.parse().ok()?,
        asleep: matches!(state, 'S' | 'D' | 'T' | 't'),
    })
}

/// A reading of the calling thread's times, and when it was taken.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    at: Instant,
    time: ThreadTime,
}

impl Reading {
    /// How the calling thread spent the real time from this reading to `now`, reading its
    /// times afresh, given the states another thread `seen` it in meanwhile: the span's
    /// length and the split. `None` where the system does not say.
    pub(crate) fn spent_until(
        &self,
        now: Instant,
        seen: Option<StatesSeen>,
    ) -> Option<(Duration, Spent)> {
        let latest = take(now)?;
        let span = latest.at.saturating_duration_since(self.at);
        Some((span, latest.time.spent_since(&self.time, span, seen)))
    }
}

/// What the calling thread knows of its own times.
#[derive(Debug, Clone, Copy)]
enum Kept {
    /// Nothing read yet.
    Nothing,
    /// The system gives no per-thread times: not read again.
    Unavailable,
    /// The latest reading, and the instant it is [`RECENT`] old: a comparison per poll
    /// instead of measuring its age.
    Latest(Reading, Instant),
}

thread_local! {
    static KEPT: Cell<Kept> = const { Cell::new(Kept::Nothing) };
}

/// The calling thread's latest reading, taken afresh when the one kept is [`RECENT`] old or
/// older at `now`; `None` where the system does not give per-thread times.
pub(crate) fn recent(now: Instant) -> Option<Reading> {
    match KEPT.with(Cell::get) {
        Kept::Latest(reading, stale) if now < stale => Some(reading),
        Kept::Unavailable => None,
        _ => take(now),
    }
}

/// Reads the calling thread's times now and keeps the reading.
fn take(now: Instant) -> Option<Reading> {
    let kept = match ThreadTime::current() {
        // Stale at once where `now + RECENT` overflows (read afresh each time): `now` is
        // real time, so that does not happen.
        Some(time) => Kept::Latest(
            Reading { at: now, time },
            now.checked_add(RECENT).unwrap_or(now),
        ),
        None => Kept::Unavailable,
    };
    KEPT.with(|cell| cell.set(kept));
    match kept {
        Kept::Latest(reading, _) => Some(reading),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(on_cpu_ms: u64, runnable_ms: u64, switches: (u64, u64), asleep: bool) -> ThreadTime {
        ThreadTime::for_tests(on_cpu_ms, runnable_ms, switches, asleep)
    }

    fn spent(on_cpu_ms: u64, waiting_ms: u64, asleep_ms: u64) -> Spent {
        Spent {
            on_cpu_ms,
            waiting_ms,
            asleep_ms,
        }
    }

    #[test]
    fn parses_the_kernels_counters() {
        let status = "Name:\tretrylab-run x\nState:\tS (sleeping)\n\
                      voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(
            parse("5000000 2000000 7\n", status),
            Some(time(5, 2, (12, 3), true))
        );
        let running = status.replace("S (sleeping)", "R (running)");
        assert_eq!(
            parse("5000000 2000000 7\n", &running),
            Some(time(5, 2, (12, 3), false))
        );
        assert_eq!(parse("garbage", status), None);
        assert_eq!(parse("1 2 3", "Name: x\n"), None);
    }

    /// Descheduled on a loaded machine: 620 ms of real time, almost all of it waiting for a
    /// CPU after the scheduler took it away, and the CPU never given up.
    #[test]
    fn a_descheduled_thread_waited_for_a_cpu() {
        let split = time(10, 610, (4, 30), false).spent_since(
            &time(0, 0, (4, 2), false),
            Duration::from_millis(620),
            None,
        );
        assert_eq!(split, spent(10, 610, 0));
        assert_eq!(split.own_ms(), 10);
    }

    /// Time the counters do not cover yet is not sleep when the thread never gave its CPU up.
    #[test]
    fn unaccounted_time_without_a_voluntary_switch_is_not_sleep() {
        let split = time(100, 0, (1, 9), false).spent_since(
            &time(0, 0, (1, 2), false),
            Duration::from_millis(700),
            None,
        );
        assert_eq!(split, spent(100, 600, 0));
    }

    #[test]
    fn a_sleeping_thread_was_asleep() {
        let split = time(1, 5, (3, 0), false).spent_since(
            &time(0, 0, (2, 0), false),
            Duration::from_millis(800),
            None,
        );
        assert_eq!(split, spent(1, 0, 799));
        assert_eq!(split.own_ms(), 800);
        // Read by another thread: asleep through the whole span, with no switch in it.
        let through = time(0, 0, (2, 0), true).spent_since(
            &time(0, 0, (2, 0), true),
            Duration::from_millis(900),
            None,
        );
        assert_eq!(through, spent(0, 0, 900));
    }

    /// A runtime waiting for a blocking task naps until its next timer, here 1 ms, 28 times,
    /// and on a loaded machine waits for a CPU after each wake: the waits that ended a nap
    /// are part of its sleep, those that followed a preemption are not.
    #[test]
    fn waits_that_end_a_sleep_belong_to_it() {
        let split = time(12, 548, (30, 2), false).spent_since(
            &time(0, 0, (2, 0), false),
            Duration::from_millis(964),
            None,
        );
        assert_eq!(split, spent(12, 36, 915));
    }

    /// A 700 ms `std::thread::sleep` that the scheduler kept queued (counted as runnable),
    /// with one preemption beside it: the states seen say it slept, where the switches
    /// would say half.
    #[test]
    fn a_sleep_counted_as_runnable_is_told_by_the_states_seen() {
        let (now, before) = (time(1, 702, (3, 1), false), time(0, 0, (2, 0), false));
        let seen = StatesSeen {
            asleep: 3,
            ready: 0,
        };
        let split = now.spent_since(&before, Duration::from_millis(703), Some(seen));
        assert_eq!(split, spent(1, 0, 702));
        let guessed = now.spent_since(&before, Duration::from_millis(703), None);
        assert_eq!(guessed, spent(1, 351, 351));
    }

    /// A correct poll starved for 3 s, with one stray voluntary switch among three
    /// preemptions: seen ready to run, it did not sleep.
    #[test]
    fn a_starved_thread_seen_ready_did_not_sleep() {
        let (now, before) = (time(10, 2990, (3, 3), false), time(0, 0, (2, 0), false));
        let seen = StatesSeen {
            asleep: 0,
            ready: 12,
        };
        let split = now.spent_since(&before, Duration::from_millis(3007), Some(seen));
        assert_eq!(split, spent(10, 2990, 7));
    }

    #[test]
    fn a_spinning_thread_was_on_a_cpu() {
        let split = time(590, 10, (0, 5), false).spent_since(
            &time(0, 0, (0, 0), false),
            Duration::from_millis(600),
            None,
        );
        assert_eq!(split, spent(590, 10, 0));
    }

    /// The calling thread's own counters are there on Linux, and a real sleep shows as sleep.
    #[cfg(target_os = "linux")]
    #[test]
    fn reads_this_threads_times() {
        let start = Instant::now();
        let before = take(start).expect("/proc/thread-self on Linux");
        std::thread::sleep(Duration::from_millis(60));
        let (span, split) = before
            .spent_until(Instant::now(), None)
            .expect("a second reading");
        assert!(span >= Duration::from_millis(60));
        assert!(split.asleep_ms + split.waiting_ms >= 50, "{split:?}");
        assert!(Tid::current().and_then(ThreadTime::of).is_some());
    }
}
