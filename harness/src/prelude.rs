//! The common API in one import: `use retrylab::prelude::*;`.
//!
//! The types a test names ([`Scenario`], [`Env`], [`Report`], ...) and the free functions
//! that start the builder's sentences, such as `status(503).times(2)`.

pub use crate::env::{Env, Operation};
pub use crate::report::{Report, RunEnd, Verdict};
pub use crate::scenario::Scenario;
pub use crate::suite::Clients;
