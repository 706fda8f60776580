//! The virtual clock shared by the endpoints and the harness.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// 2026-01-01T00:00:00Z in milliseconds since the Unix epoch: the default virtual wall clock
/// epoch (docs/architecture.md#attempts-time-and-ordering).
pub const DEFAULT_EPOCH_UNIX_MS: u64 = 1_767_225_600_000;

/// A duration of `n` milliseconds, for builders that read like sentences:
/// `Step::status(200).latency(ms(1500))`.
pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A duration of `n` seconds.
pub const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Virtual time of one run: tokio's (paused) clock since `start`, and a virtual wall clock that
/// reads `epoch + elapsed`.
///
/// It never reads `std::time::Instant` or `SystemTime::now()`, so under a paused runtime every
/// reading is deterministic.
///
/// ```
/// use retrylab_endpoints::{ms, VirtualClock};
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = VirtualClock::new();
/// tokio::time::sleep(ms(1500)).await;
/// assert_eq!(clock.now_ms(), 1500);
/// assert_eq!(httpdate::fmt_http_date(clock.now_system()), "Thu, 01 Jan 2026 00:00:01 GMT");
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtualClock {
    /// The tokio instant at which the run started (virtual time zero).
    pub start: Instant,
    /// The virtual wall clock at `start`, in milliseconds since the Unix epoch.
    pub epoch_unix_ms: u64,
}

impl VirtualClock {
    /// A clock starting now, with the default epoch 2026-01-01T00:00:00Z.
    pub fn new() -> Self {
        Self::starting_at(Instant::now(), DEFAULT_EPOCH_UNIX_MS)
    }

    /// A clock whose zero is `start` and whose wall clock reads `epoch_unix_ms` at `start`.
    pub fn starting_at(start: Instant, epoch_unix_ms: u64) -> Self {
        Self {
            start,
            epoch_unix_ms,
        }
    }

    /// The same clock with another wall clock epoch (milliseconds since the Unix epoch).
    pub fn with_epoch_unix_ms(mut self, epoch_unix_ms: u64) -> Self {
        self.epoch_unix_ms = epoch_unix_ms;
        self
    }

    /// Virtual time elapsed since `start`, at full precision.
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }

    /// Whole milliseconds since `start` (the unit of every ledger record).
    pub fn now_ms(&self) -> u64 {
        self.ms_at(Instant::now())
    }

    /// Whole milliseconds from `start` to `instant` (0 before `start`): what
    /// [`now_ms`](Self::now_ms) read at `instant`, for a caller that keeps the raw reading
    /// and turns it into milliseconds only when it needs them.
    ///
    /// ```
    /// use retrylab_endpoints::{ms, VirtualClock};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let clock = VirtualClock::new();
    /// let read = tokio::time::Instant::now();
    /// tokio::time::sleep(ms(20)).await;
    /// assert_eq!((clock.ms_at(read), clock.now_ms()), (0, 20));
    /// # }
    /// ```
    pub fn ms_at(&self, instant: Instant) -> u64 {
        u64::try_from(instant.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX)
    }

    /// The virtual wall clock: `epoch + elapsed`.
    pub fn now_system(&self) -> SystemTime {
        let since_unix = Duration::from_millis(self.epoch_unix_ms).saturating_add(self.elapsed());
        // Saturate rather than panic on absurd epochs: a clock must not bring a run down.
        UNIX_EPOCH
            .checked_add(since_unix)
            .unwrap_or(UNIX_EPOCH + Duration::from_secs(u32::MAX.into()))
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn counts_virtual_ms_and_wall_clock() {
        let clock = VirtualClock::new();
        assert_eq!(clock.now_ms(), 0);
        // tokio rounds timer deadlines up to the next whole millisecond.
        tokio::time::sleep(Duration::from_micros(2_500)).await;
        assert_eq!(clock.now_ms(), 3);
        let since = clock.now_system().duration_since(UNIX_EPOCH).unwrap();
        assert_eq!(since, Duration::from_millis(DEFAULT_EPOCH_UNIX_MS + 3));
        let other = clock.with_epoch_unix_ms(0);
        assert!(other.now_system().duration_since(UNIX_EPOCH).unwrap() < Duration::from_secs(1));
    }

    #[test]
    fn default_epoch_is_2026() {
        let t = UNIX_EPOCH + Duration::from_millis(DEFAULT_EPOCH_UNIX_MS);
        assert_eq!(httpdate::fmt_http_date(t), "Thu, 01 Jan 2026 00:00:00 GMT");
    }
}
