//! The common API in one import: `use retrylab::prelude::*;`.
//!
//! The types a test names ([`Scenario`], [`Env`], [`Report`], ...) and the free functions
//! that start the builder's sentences (see [`scenario::exponential`](crate::scenario::exponential)
//! and its neighbours):
//!
//! ```
//! use retrylab::prelude::*;
//!
//! let report = Scenario::builder("one 503, then 200")
//!     .endpoint("api", endpoint().script([status(503), status(200)]))
//!     .operation(get("api", "/"))
//!     .client(exponential().initial(ms(10)).max_attempts(2))
//!     .expect(expect().outcome(Success).attempts(2))
//!     .build()
//!     .unwrap()
//!     .run_builtin();
//! assert!(report.passed(), "{}", report.summary());
//! ```

pub use crate::env::{AttemptError, Env, Operation, attempt, attempt_with};
pub use crate::report::{Judgement, Report, RunEnd, Verdict};
pub use crate::scenario::Outcome::{Failure, Stopped, Success};
pub use crate::scenario::{
    ClientSpec, FailSpec, Outcome, Scenario, at_least, at_most, endpoint, expect, exponential,
    fail, fixed, get, linear, ms, post, secs, status, within,
};
pub use crate::suite::Clients;
