//! retrylab: a deterministic fault-injection test harness for retry clients.
//!
//! A simulated network with virtual time drives any retry client against scripted fake
//! endpoints, and checks attempt counts, delay bounds and idempotency.

pub mod backend;
mod check;
pub mod client;
pub mod clocks;
mod connector;
mod env;
pub mod http_client;
mod plan;
pub mod policy;
mod recorder;
mod report;
pub mod rng;
mod run;
pub mod runner;
pub mod scenario;
mod snapshot;
pub mod trace;
mod trace_json;
mod watchdog;
mod world;

pub use connector::EnvConnector;
pub use env::{Env, Operation};
pub use http_client::{AttemptBody, HttpClient};
pub use report::{Report, RunEnd, Verdict};
pub use scenario::Scenario;
