//! Backends: where endpoints run and how a client reaches them.
//!
//! `sim` (the default) is an in-memory TCP model on a paused tokio runtime.

pub(crate) mod sim;
