//! Backends: where endpoints run and how a client reaches them.
//!
//! `sim` (the default) is an in-memory TCP model on a paused tokio runtime. The attempt
//! limit is enforced here, at the endpoints and the harness's client, so it holds for every
//! client.

mod attempt_limit;
pub(crate) mod sim;

pub(crate) use attempt_limit::AttemptLimit;
