//! Clock adapters: virtual time for crates that take a clock instead of calling tokio.
//!
//! Virtual time is tokio's paused clock, so everything built on `tokio::time` (sleeps,
//! timeouts, `tokio::time::Instant`) follows it with no help. Crates that read
//! `std::time::Instant::now()` or `SystemTime::now()` themselves see real time instead, which
//! barely moves while a run covers days: their budgets and deadlines never expire. Where a
//! crate accepts a clock, give it one of these.
//!
//! | crate | reads | in virtual time |
//! |---|---|---|
//! | `tower` `retry::budget::TpsBudget` | `tokio::time::Instant` | follows virtual time |
//! | `backon` | tokio sleeps (feature `tokio-sleep`) | follows virtual time |
//! | `tokio-retry2` delays | `tokio::time::sleep_until` | follows virtual time |
//! | `tokio-retry2` `max_duration` / `max_interval` | `std::time::Instant` | never expires: no clock can be injected |
//! | `backoff` `ExponentialBackoff::max_elapsed_time` | its `Clock` (default `SystemClock`) | follows virtual time with [`VirtualStdClock`] (feature `backoff`) |
//! | `reqwest-retry` delays | `tokio::time::sleep`, of a delay taken through `SystemTime::now()` and back | follows virtual time (tokio's millisecond timer rounds the round trip's microseconds back up) |
//! | `reqwest-retry` total retry duration (`build_with_total_retry_duration*`) | `SystemTime::now()` | never expires: no clock can be injected |
//! | `failsafe` circuit-breaker windows | `std::time::Instant` (a thread-local mock only in its tests) | never expires |
//! | HTTP-date parsing against `SystemTime::now()` | the real date | compares with the wrong day: use [`Env::now_system`](crate::Env::now_system) |
//! | AWS SDK for Rust | its `TimeSource` and `AsyncSleep` (defaults: `SystemTime::now()`, tokio) | follows virtual time with `env.aws_sdk_config()` (feature `aws`) |

/// A `std::time::Instant` clock that moves with virtual time.
///
/// It reads tokio's clock (paused during a run) and converts it, so differences between its
/// readings are virtual durations; the instants themselves mean nothing outside the run.
///
/// ```
/// use retrylab::env::VirtualStdClock;
/// use retrylab::Scenario;
///
/// let scenario = Scenario::from_yaml_str(
///     "version: 1\nname: clock\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
///      expect: { requests_received: 0 }\n",
///     "clock.yaml",
/// ).unwrap();
/// let report = scenario.run(|env| async move {
///     let clock = env.std_clock();
///     let before = clock.now();
///     tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
///     Ok::<_, ()>(clock.now() - before)
/// });
/// assert_eq!(report.trace().calls[0].result,
///            retrylab::trace::CallResult::Success("3600s".into()));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct VirtualStdClock;

impl VirtualStdClock {
    /// Now, as a `std::time::Instant` that advances with virtual time.
    pub fn now(&self) -> std::time::Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// `backoff`'s `ExponentialBackoff<C: Clock>` on virtual time, so `max_elapsed_time` expires
/// as the run's clock says.
///
/// ```
/// # #[cfg(feature = "backoff")] {
/// use std::time::Duration;
/// use backoff::exponential::ExponentialBackoff;
/// use retrylab::env::VirtualStdClock;
///
/// let defaults = backoff::ExponentialBackoff::default();
/// let backoff: ExponentialBackoff<VirtualStdClock> = ExponentialBackoff {
///     current_interval: defaults.current_interval,
///     initial_interval: defaults.initial_interval,
///     randomization_factor: defaults.randomization_factor,
///     multiplier: defaults.multiplier,
///     max_interval: defaults.max_interval,
///     max_elapsed_time: Some(Duration::from_secs(60)),
///     start_time: VirtualStdClock.now(),
///     clock: VirtualStdClock,
/// };
/// # let _ = backoff; }
/// ```
#[cfg(feature = "backoff")]
impl backoff::Clock for VirtualStdClock {
    fn now(&self) -> std::time::Instant {
        VirtualStdClock::now(self)
    }
}
