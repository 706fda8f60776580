//! The limits of the format: an upper bound on every count, size and duration a scenario
//! writes, checked when it is loaded or built (docs/scenario-format.md#limits-of-the-format).
//!
//! A run allocates and works in proportion to what a scenario asks for: a record per call and
//! per attempt, the bytes of every request an endpoint received, a step walked per request.
//! The bounds keep the largest scenario that loads within about 1 GiB of memory, and keep
//! every part of loading and validation linear in the file, so `retrylab check` refuses
//! what a run would crash or hang on. Each is far above what a real scenario needs; the
//! error for a value past one states the bound.

use super::duration::Millis;

/// The calls of one run: `operation.calls` × `operation.clients`. Each call is kept in the
/// trace with its attempts.
pub const MAX_CALLS: u64 = 100_000;

/// `operation.concurrency`: each call in flight holds its future and its connection.
pub const MAX_CONCURRENCY: u32 = 10_000;

/// `operation.clients`: each client instance keeps its connection pool and its calls'
/// records for the whole run; the calls of all of them together stay within [`MAX_CALLS`].
pub const MAX_CLIENTS: u32 = 100_000;

/// The seeds of a `seeds:` sweep, each run as a test of its own.
pub const MAX_SEEDS: u64 = 10_000;

/// The calls of a whole `seeds:` sweep: seeds × calls of a run.
pub const MAX_SWEEP_CALLS: u64 = 1_000_000;

/// The attempts of one run: `limits.max_client_attempts`, `max_attempts` of any policy, and
/// `operation.calls` × the attempts per call of the built-in client. An attempt costs under
/// 1 KiB of trace, network log and ledger (`cargo bench -p retrylab --bench reports` measures
/// it at this limit).
pub const MAX_ATTEMPTS: u64 = 1_000_000;

/// Every duration: 3650 days (about 10 years). A run's clock counts in `tokio`'s paused
/// time, which ends about 30 years on; a limit past that would not be the limit that
/// stopped the run.
pub const MAX_DURATION: Millis = Millis::from_ms(3650 * 86_400_000);

/// `limits.wall`: one hour of real time, after which a blocked client is abandoned.
pub const MAX_WALL: Millis = Millis::from_ms(3_600_000);

/// `tolerance`: the slack added to every timing bound of the checks. Measurement jitter on
/// the real backend is milliseconds; a slack of a minute would already pass a client that
/// waits not at all for most backoffs, so more would only hide a mistake.
pub const MAX_TOLERANCE: Millis = Millis::from_ms(60_000);

/// `endpoints`: the endpoints of one scenario.
pub const MAX_ENDPOINTS: usize = 1_000;

/// The characters of an endpoint name (it is the host of the endpoint's URL).
pub const MAX_ENDPOINT_NAME_CHARS: usize = 255;

/// Whether an endpoint `name` is longer than [`MAX_ENDPOINT_NAME_CHARS`], counted on bytes
/// first (a character is at most 4 of them), so a name of megabytes is not walked.
pub(crate) fn endpoint_name_too_long(name: &str) -> bool {
    name.len() > MAX_ENDPOINT_NAME_CHARS && name.chars().count() > MAX_ENDPOINT_NAME_CHARS
}

/// `routes`: the routes of one endpoint, tried in order for every request.
pub const MAX_ROUTES: usize = 100;

/// The steps of one `script:` or `timeline:`, and the entries of one `connect:` schedule,
/// walked for every request or connection.
pub const MAX_STEPS: usize = 1_000;

/// `network.faults`, and each of `turmoil.hold`, `turmoil.partition` and `turmoil.crash`.
pub const MAX_FAULTS: usize = 1_000;

/// The entries of one list of headers (a request's, a step's, a route's match).
pub const MAX_HEADERS: usize = 64;

/// The bytes of the names and values of one list of headers, together.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The bytes of one body (`operation.body`, a step's `body`); a raw `Retry-After` is a header
/// value, bounded by [`MAX_HEADER_BYTES`].
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The request bytes a run may keep: every request an endpoint receives is kept in its
/// ledger, so the operation's body and headers count once per attempt the run allows
/// (`limits.max_client_attempts`, or its default).
pub const MAX_KEPT_REQUEST_BYTES: u64 = 256 * 1024 * 1024;

/// `after_bytes` of a cut response: more than any response holds (nothing is allocated for
/// it; a cut past the response's end never happens).
pub const MAX_AFTER_BYTES: u64 = 16 * 1024 * 1024;

/// A `Retry-After` in seconds, either way from zero: [`MAX_DURATION`] in seconds.
pub const MAX_RETRY_AFTER_SECONDS: i64 = 3650 * 86_400;

/// A broker step's `error_code`: `RocketMQ`'s codes have at most five digits (530, 42900,
/// 50001).
pub const MAX_ERROR_CODE: i64 = 99_999;

/// A rate limiter's `rate`, in tokens per second: a token every microsecond, far finer than
/// the millisecond a run's clock counts.
pub const MAX_RATE: u32 = 1_000_000;

/// The entries of a list of statuses or conditions consulted per attempt (`retry_on`,
/// `not_retried_on`, `response_codes`, `throttle_codes`, `retryableStatusCodes`): there are
/// 500 statuses.
pub const MAX_CODES: usize = 512;

/// `search.cases` (planned).
pub const MAX_SEARCH_CASES: u32 = 100_000;

/// The documented limit of a count the format bounds below its type's range, by the key that
/// holds it, with the noun it counts: what a number too large for its type is told (`calls:
/// 99999999999` quotes 100,000 calls, not `u32::MAX`).
pub(crate) fn documented_limit(key: &str) -> Option<(u64, &'static str)> {
    Some(match key {
        "max_attempts" | "max_client_attempts" | "max_retries" | "maxAttempts" => {
            (MAX_ATTEMPTS, "attempts")
        }
        "calls" => (MAX_CALLS, "calls per run"),
        "clients" => (u64::from(MAX_CLIENTS), "clients"),
        "concurrency" => (u64::from(MAX_CONCURRENCY), "calls in flight"),
        "cases" => (u64::from(MAX_SEARCH_CASES), "cases"),
        _ => return None,
    })
}
