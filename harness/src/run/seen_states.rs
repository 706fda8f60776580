//! What the thread waiting for a run saw of the run's thread during one poll of a call:
//! how many times it found it asleep and how many times ready to run.
//!
//! The kernel's counters ([`thread_time`](super::thread_time)) cannot always split a poll's
//! time off a CPU between sleep and a wait for one. After a voluntary switch, a sleep can be
//! counted as time on a run queue (a scheduler that keeps a sleeping thread queued until its
//! share is due, as Linux 6.12 and later do), so a `std::thread::sleep` of 700 ms may show as
//! 700 ms "runnable". Splitting that time in proportion to the switches then fails both
//! ways: a blocking sleep with one preemption beside it reads as half a sleep, and a correct
//! poll starved for seconds, with one stray voluntary switch among three preemptions, reads as
//! a quarter asleep. The waiting thread reads the run thread's state each time it samples
//! the run; the states it saw during a poll say which it was.
//!
//! One atomic word holds the poll the samples belong to and both counts: the waiting thread
//! writes it, the run's thread reads it once at the end of a long poll, and neither takes a
//! lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of each count; a count stops there (4,095 samples is 17 minutes at the slowest
/// sampling rate, and a split needs far fewer).
const COUNT_BITS: u32 = 12;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
/// The poll numbers the word holds: they wrap past 2^40, and a run polls far fewer times.
const POLL_MASK: u64 = u64::MAX >> (2 * COUNT_BITS);

/// How many times the run's thread was seen asleep and ready to run during a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatesSeen {
    pub(crate) asleep: u32,
    pub(crate) ready: u32,
}

impl StatesSeen {
    /// The share of `ms` the states seen put to sleep.
    pub(crate) fn asleep_share(&self, ms: u64) -> u64 {
        let seen = u64::from(self.asleep) + u64::from(self.ready);
        if seen == 0 {
            return 0;
        }
        let share = u128::from(ms) * u128::from(self.asleep) / u128::from(seen);
        u64::try_from(share).unwrap_or(ms)
    }
}

/// The states seen during the latest poll sampled, shared by the run's thread and the thread
/// waiting for the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct SeenStates {
    /// The poll's number (the watchdog's poll counter, odd inside a poll) above the two
    /// counts: asleep in the middle bits, ready in the low ones.
    word: Arc<AtomicU64>,
}

impl SeenStates {
    /// Files one state seen while the poll counter read `polls`. Only the waiting thread
    /// writes, so a load and a store do.
    pub(crate) fn note(&self, polls: u64, asleep: bool) {
        if polls % 2 == 0 {
            // Between polls: the watchdog judges those stretches from the runtime's naps.
            return;
        }
        let polls = polls & POLL_MASK;
        let word = self.word.load(Ordering::Relaxed);
        let (mut seen_asleep, mut seen_ready) = if word >> (2 * COUNT_BITS) == polls {
            ((word >> COUNT_BITS) & COUNT_MAX, word & COUNT_MAX)
        } else {
            (0, 0)
        };
        if asleep {
            seen_asleep = (seen_asleep + 1).min(COUNT_MAX);
        } else {
            seen_ready = (seen_ready + 1).min(COUNT_MAX);
        }
        let word = (polls << (2 * COUNT_BITS)) | (seen_asleep << COUNT_BITS) | seen_ready;
        self.word.store(word, Ordering::Relaxed);
    }

    /// The states seen during the poll the counter numbered `polls`, if any was.
    pub(crate) fn during(&self, polls: u64) -> Option<StatesSeen> {
        let word = self.word.load(Ordering::Relaxed);
        if word >> (2 * COUNT_BITS) != polls & POLL_MASK {
            return None;
        }
        let seen = StatesSeen {
            asleep: ((word >> COUNT_BITS) & COUNT_MAX) as u32,
            ready: (word & COUNT_MAX) as u32,
        };
        (seen.asleep + seen.ready > 0).then_some(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_states_of_one_poll() {
        let seen = SeenStates::default();
        assert_eq!(seen.during(3), None);
        seen.note(3, true);
        seen.note(3, false);
        seen.note(3, true);
        assert_eq!(
            seen.during(3),
            Some(StatesSeen {
                asleep: 2,
                ready: 1
            })
        );
        // A new poll starts its own counts; the old one's are gone.
        seen.note(5, false);
        assert_eq!(seen.during(3), None);
        assert_eq!(
            seen.during(5),
            Some(StatesSeen {
                asleep: 0,
                ready: 1
            })
        );
        // Between polls nothing is filed.
        seen.note(6, true);
        assert_eq!(
            seen.during(5),
            Some(StatesSeen {
                asleep: 0,
                ready: 1
            })
        );
    }

    #[test]
    fn a_count_stops_at_its_bits() {
        let seen = SeenStates::default();
        for _ in 0..5000 {
            seen.note(7, true);
        }
        seen.note(7, false);
        assert_eq!(
            seen.during(7),
            Some(StatesSeen {
                asleep: COUNT_MAX as u32,
                ready: 1
            })
        );
    }

    #[test]
    fn the_share_follows_the_states() {
        let seen = StatesSeen {
            asleep: 1,
            ready: 3,
        };
        assert_eq!(seen.asleep_share(2000), 500);
        assert_eq!(
            StatesSeen {
                asleep: 0,
                ready: 0
            }
            .asleep_share(100),
            0
        );
    }
}
