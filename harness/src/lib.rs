//! retrylab: a deterministic fault-injection test harness for retry clients.
//!
//! A simulated network with virtual time drives any retry client against scripted fake
//! endpoints, and checks attempt counts, delay bounds and idempotency.

mod backend;
mod check;
pub mod client;
pub mod env;
mod overrides;
pub mod policy;
pub mod prelude;
mod report;
pub mod rng;
mod run;
pub mod scenario;
pub mod suite;
pub mod trace;

pub use env::{Env, EnvConnector, HttpClient, Operation};
pub use report::{Report, RunEnd, Verdict};
pub use scenario::Scenario;
pub use suite::Clients;
