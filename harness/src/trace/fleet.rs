//! The fleet view of a trace: when a run had more than one client, how its calls ended (in
//! shares of the calls) and how many attempts started in each bucket of time, as a text
//! histogram and as JSON. A fleet's timeline runs to thousands of lines; the histogram shows
//! its shape (a wave of retries after an outage, a rate limiter's steady trickle) at a
//! glance.
//!
//! A run of one client gets no view, so its snapshot and its JSON read as before.

use serde::Serialize;

use super::instants::seconds;
use super::{CallResult, Trace};

/// Bucket widths to choose from, in ms: the narrowest that needs at most [`MAX_BUCKETS`].
const WIDTHS_MS: [u64; 22] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000,
    300_000, 600_000, 1_800_000, 3_600_000, 21_600_000, 86_400_000,
];

/// The most buckets a view has (a day's buckets when the run was longer than that).
const MAX_BUCKETS: u64 = 40;

/// The widest bar of the text histogram, in characters.
const BAR: u64 = 50;

/// How a fleet's calls ended and when its attempts started.
///
/// ```
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("three clients")
///     .endpoint("api", endpoint().script([status(503), status(200)]))
///     .operation(get("api", "/").clients(3))
///     .client(fixed(ms(100)).max_attempts(3))
///     .build()
///     .unwrap();
/// let report = scenario.run_builtin();
///
/// let view = report.trace().fleet().unwrap();
/// assert_eq!((view.clients, view.calls, view.success), (3, 3, 3));
/// assert_eq!(view.buckets.iter().map(|b| b.attempts).sum::<u64>(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FleetView {
    /// The clients that made calls.
    pub clients: u32,
    /// The calls of every client.
    pub calls: u64,
    /// Calls that returned `Ok`.
    pub success: u64,
    /// Calls that returned `Err`.
    pub failure: u64,
    /// Calls the run stopped, or that panicked.
    pub unfinished: u64,
    /// The width of each bucket, in ms.
    pub bucket_ms: u64,
    /// The buckets from 0 to the last attempt's start, in order, empty ones included.
    pub buckets: Vec<Bucket>,
}

/// The attempts that started in `[from_ms, from_ms + bucket_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Bucket {
    /// Where the bucket starts, in ms of virtual time.
    pub from_ms: u64,
    /// Attempts that started in it.
    pub attempts: u64,
    /// Of those, the retries (attempts after their call's first).
    pub retries: u64,
}

impl Trace {
    /// The fleet view of this trace, when its calls came from more than one client.
    pub fn fleet(&self) -> Option<FleetView> {
        let clients = self
            .calls
            .iter()
            .map(|c| c.client_id)
            .max()
            .filter(|&max| max > 0)?
            + 1;
        let (mut success, mut failure, mut unfinished) = (0, 0, 0);
        for call in &self.calls {
            match call.result {
                CallResult::Success(_) => success += 1,
                CallResult::Failure(_) => failure += 1,
                CallResult::Stopped | CallResult::Panicked(_) => unfinished += 1,
            }
        }
        let last = self.attempts.iter().map(|a| a.start_ms).max().unwrap_or(0);
        let bucket_ms = WIDTHS_MS
            .iter()
            .copied()
            .find(|w| last / w < MAX_BUCKETS)
            .unwrap_or(WIDTHS_MS[WIDTHS_MS.len() - 1]);
        let count = if self.attempts.is_empty() {
            0
        } else {
            last / bucket_ms + 1
        };
        let mut buckets: Vec<Bucket> = (0..count)
            .map(|i| Bucket {
                from_ms: i * bucket_ms,
                attempts: 0,
                retries: 0,
            })
            .collect();
        for attempt in &self.attempts {
            if let Some(bucket) = buckets.get_mut((attempt.start_ms / bucket_ms) as usize) {
                bucket.attempts += 1;
                if attempt.n > 1 {
                    bucket.retries += 1;
                }
            }
        }
        Some(FleetView {
            clients,
            calls: self.calls.len() as u64,
            success,
            failure,
            unfinished,
            bucket_ms,
            buckets,
        })
    }
}

impl FleetView {
    /// The view as text: a line of outcomes, then one line per bucket with its attempts,
    /// its retries and a bar (`#`) as long as its share of the fullest bucket.
    pub fn lines(&self) -> Vec<String> {
        let share = |n: u64| n as f64 * 100.0 / self.calls.max(1) as f64;
        let mut out = vec![format!(
            "{} clients, {} calls: {} success ({:.1}%), {} failure ({:.1}%), {} unfinished ({:.1}%)",
            self.clients,
            self.calls,
            self.success,
            share(self.success),
            self.failure,
            share(self.failure),
            self.unfinished,
            share(self.unfinished)
        )];
        out.push(format!(
            "attempts per {} (retries in brackets):",
            seconds(self.bucket_ms)
        ));
        let fullest = self.buckets.iter().map(|b| b.attempts).max().unwrap_or(0);
        let width = self.buckets.last().map_or(1, |b| seconds(b.from_ms).len());
        let counts = fullest.to_string().len();
        for b in &self.buckets {
            // A bucket with any attempt shows at least one character.
            let bar = if b.attempts == 0 {
                0
            } else {
                (b.attempts * BAR).div_ceil(fullest.max(1))
            };
            out.push(
                format!(
                    "  {:>width$} {:>counts$} ({:>counts$}) {}",
                    seconds(b.from_ms),
                    b.attempts,
                    b.retries,
                    "#".repeat(bar as usize)
                )
                .trim_end()
                .to_owned(),
            );
        }
        out
    }
}
