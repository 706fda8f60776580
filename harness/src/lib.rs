//! retrylab: a deterministic fault-injection test harness for retry clients.
//!
//! A simulated network with virtual time drives any retry client against scripted fake
//! endpoints, and checks attempt counts, delay bounds and idempotency.

pub mod backend;
pub mod rng;
pub mod scenario;
pub mod trace;
