//! Outside the stability promise: the harness's limits and tuning, and the types it records
//! with, public for reading and for building on the harness, but free to change in any
//! release, minor ones included. Pin the version if you depend on them.
//!
//! - the limits of the scenario format, an upper bound on every count, size and duration a
//!   scenario writes (docs/scenario-format.md#limits-of-the-format), checked when a scenario
//!   is loaded or built, and the size of what is read and reported;
//! - the tuning of checks and searches: how unlikely a `conforms_to` verdict on a correct
//!   jittered client is, and how many cases a test of a search shard runs;
//! - what a command client's process inherits of retrylab's environment;
//! - the interner behind the trace's [`Name`](crate::trace::Name)s.
//!
//! ```
//! use retrylab::internals::{MAX_ATTEMPTS, MAX_REPORTED_ERRORS, SHARD_CASES};
//!
//! assert_eq!(MAX_ATTEMPTS, 1_000_000);
//! assert_eq!(MAX_REPORTED_ERRORS, 50);
//! assert_eq!(SHARD_CASES, 64);
//! ```

pub use crate::client::command::INHERITED_ENV;
pub use crate::policy::conformance::pinned::{PIN_MIN_WIDTH_MS, PIN_PROBABILITY};
pub use crate::report::process::OUTPUT_LIMIT;
pub use crate::scenario::model::bounds::{
    MAX_AFTER_BYTES, MAX_ATTEMPTS, MAX_BODY_BYTES, MAX_CALLS, MAX_CLIENTS, MAX_CODES,
    MAX_CONCURRENCY, MAX_DURATION, MAX_ENDPOINT_NAME_CHARS, MAX_ENDPOINTS, MAX_ERROR_CODE,
    MAX_FAULTS, MAX_HEADER_BYTES, MAX_HEADERS, MAX_KEPT_REQUEST_BYTES, MAX_RATE,
    MAX_RETRY_AFTER_SECONDS, MAX_ROUTES, MAX_SEARCH_CASES, MAX_SEEDS, MAX_STEPS, MAX_SWEEP_CALLS,
    MAX_TOLERANCE, MAX_WALL,
};
pub use crate::scenario::yaml::error::MAX_REPORTED_ERRORS;
pub use crate::scenario::yaml::file::MAX_FILE_BYTES;
pub use crate::trace::interner::Interner;

/// The cases one test of a search tries, at most: a search of more cases is split into
/// shards, one test each, so that `cargo nextest run --partition` spreads it.
pub const SHARD_CASES: u32 = 64;
