//! Scripted fake endpoints for retrylab, and the ledger of what they saw and did.
//!
//! This crate owns every byte of HTTP in retrylab. An [`Endpoint`] is built from an
//! [`EndpointConfig`] (routes with [`Step`] scripts, a connect schedule, keep-alive, dedupe, a
//! [`RateLimit`] token bucket in front of the routes) and
//! a [`VirtualClock`]; the harness hands it each accepted connection as an async stream
//! ([`Endpoint::serve`]), or a TCP listener to serve in real time ([`Endpoint::serve_tcp`]),
//! and reads its [`Ledger`] afterwards.
//!
//! Everything runs in virtual time: records are whole milliseconds since the clock's start,
//! HTTP-dates come from the virtual wall clock, and no `Date` header is ever sent.
//!
//! ```
//! use retrylab_endpoints::{ms, Commit, Dedupe, EndpointConfig, Fail, Step};
//!
//! let config = EndpointConfig::http("api")
//!     .dedupe(Dedupe::header("Idempotency-Key"))
//!     .script([
//!         Step::status(429).retry_after(2),
//!         Step::fail(Fail::Reset).commit(Commit::BeforeResponse),
//!         Step::status(200).latency(ms(1500)).body(r#"{"id":"o-1"}"#),
//!     ]);
//! assert_eq!(config.routes.len(), 1);
//! ```
//!
//! With feature `wiremock`, `retrylab_endpoints::wiremock::ScriptResponder` answers a wiremock
//! `MockServer`'s requests with the same scripts, in real time, and records them in a ledger.
//! With feature `turmoil`, `retrylab_endpoints::turmoil::host` adds an endpoint to a turmoil
//! simulation as a host of its own, on the simulation's time.

#![warn(missing_docs)]

mod body;
mod broker;
mod choice;
mod clock;
mod config;
mod conn;
mod connect;
mod crash;
pub mod date;
mod dedupe;
mod detach;
mod draw;
mod endpoint;
mod gate;
mod headers;
mod latency;
mod ledger;
mod rate_limiter;
mod retry_after;
mod route;
mod script;
mod serve;
mod step;
mod tcp;
mod timeline;
#[cfg(feature = "turmoil")]
pub mod turmoil;
pub mod wire;
#[cfg(feature = "wiremock")]
pub mod wiremock;

pub use broker::{Broker, Refusal, THROTTLING_CODES};
pub use clock::{DEFAULT_EPOCH_UNIX_MS, VirtualClock, ms, secs};
pub use config::{EndpointConfig, KeepAlive};
pub use conn::{ConnInfo, ConnectionControl, NoReset};
pub use connect::{ConnectAction, ConnectSchedule, ConnectStep};
pub use crash::ScriptState;
pub use dedupe::{Dedupe, DedupeDecision, DedupeTable, Replay};
pub use detach::RequestHead;
pub use draw::{Draw, Draws};
pub use endpoint::Endpoint;
pub use gate::Gate;
pub use headers::RequestHeaders;
pub use latency::LatencyDistribution;
pub use ledger::{
    CloseKind, CloseRecord, ConnectRecord, DedupeOutcome, EffectRecord, Ledger, LedgerSnapshot,
    RequestId, RequestRecord, ResponseOutcome, ResponseRecord, Side, StoredMessage,
    UnreadableRecord,
};
pub use rate_limiter::{LimitScope, RateLimit};
pub use retry_after::{HttpDateFormat, RetryAfter, http_date};
pub use route::{Matcher, Route, Scope};
pub use script::{ScopeKey, Script};
pub use step::{Branch, Chance, Commit, Fail, Respond, SentResponse, Step};
pub use tcp::ConnIds;
pub use timeline::{Timeline, Window};
