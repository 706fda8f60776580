//! The real clock the watchdog times polls by.
//!
//! The watchdog reads real time twice per poll of a call, and a precise monotonic reading
//! costs about 2% of a run's time. The spans it looks for are 500 ms or more, so where the
//! system has a cheap monotonic clock that moves once a scheduler tick (every 1 to 10 ms), it
//! reads that one instead (the `coarsetime` crate: `CLOCK_MONOTONIC_COARSE` on Linux and
//! Android, `CLOCK_MONOTONIC_RAW_APPROX` on Apple systems, `CLOCK_MONOTONIC_FAST` on FreeBSD
//! and Dragonfly, the tick count on Windows). Spans are then exact to a tick. Elsewhere that
//! crate falls back on the wall clock, which can step, so the standard monotonic clock is
//! read there instead.

use std::time::Duration;

pub(crate) use self::clock::RealInstant;

/// Real time now.
pub(crate) fn now() -> RealInstant {
    clock::now()
}

/// The real time from `earlier` to `later`; zero if `later` is not later.
pub(crate) fn span(earlier: RealInstant, later: RealInstant) -> Duration {
    clock::span(earlier, later)
}

/// The instant `by` after `from`, if the clock can tell it.
pub(crate) fn after(from: RealInstant, by: Duration) -> Option<RealInstant> {
    clock::after(from, by)
}

#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    windows
))]
mod clock {
    use std::time::Duration;

    pub(crate) type RealInstant = coarsetime::Instant;

    pub(super) fn now() -> RealInstant {
        // Without storing it as the crate's shared "recent" instant, which nothing here reads.
        coarsetime::Instant::now_without_cache_update()
    }

    pub(super) fn span(earlier: RealInstant, later: RealInstant) -> Duration {
        // Saturates at zero.
        Duration::from(later.duration_since(earlier))
    }

    pub(super) fn after(from: RealInstant, by: Duration) -> Option<RealInstant> {
        from.checked_add(by.into())
    }
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    windows
)))]
mod clock {
    use std::time::{Duration, Instant};

    pub(crate) type RealInstant = Instant;

    pub(super) fn now() -> RealInstant {
        Instant::now()
    }

    pub(super) fn span(earlier: RealInstant, later: RealInstant) -> Duration {
        later.saturating_duration_since(earlier)
    }

    pub(super) fn after(from: RealInstant, by: Duration) -> Option<RealInstant> {
        from.checked_add(by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_never_negative() {
        let a = now();
        let b = after(a, Duration::from_millis(700)).expect("an instant 700 ms on");
        assert!(span(a, b) >= Duration::from_millis(699));
        assert_eq!(span(b, a), Duration::ZERO);
    }

    #[test]
    fn the_clock_moves_within_a_tick() {
        let a = now();
        std::thread::sleep(Duration::from_millis(30));
        // A tick is 10 ms at most.
        assert!(span(a, now()) >= Duration::from_millis(20));
    }
}
