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

// Folders by concept, each depending only on those listed before it: `http` (the message
// vocabulary), `script` (routes and their steps), the ledger, `kinds` (broker, rate limiter,
// dedupe), the configuration, the endpoint, and `server` (its connections); the adapters
// last. The clock is beneath them all.
mod clock;
mod config;
mod endpoint;
mod http;
mod kinds;
mod ledger;
mod script;
mod server;
#[cfg(feature = "turmoil")]
pub mod turmoil;
#[cfg(feature = "wiremock")]
pub mod wiremock;

// The public modules `date` and `wire` keep their paths at the root. `crate::http` spells the
// folder, which shares its name with the http crate.
pub use crate::http::date;
pub use crate::http::wire;

pub use crate::http::detach::RequestHead;
pub use crate::http::grpc::{
    GRPC_MESSAGE, GRPC_RETRY_PUSHBACK_MS, GRPC_STATUS, GrpcCode, GrpcReply,
};
pub use crate::http::headers::RequestHeaders;
pub use crate::http::response::{Respond, SentResponse};
pub use crate::http::retry_after::{HttpDateFormat, RetryAfter, http_date};
pub use clock::{DEFAULT_EPOCH_UNIX_MS, VirtualClock, ms, secs};
pub use config::{EndpointConfig, KeepAlive, Protocol};
pub use endpoint::Endpoint;
pub use kinds::broker::{Broker, Refusal, THROTTLING_CODES};
pub use kinds::dedupe::{Dedupe, DedupeDecision, DedupeTable, Replay};
pub use kinds::rate_limiter::{LimitScope, RateLimit};
pub use ledger::{
    CloseKind, CloseRecord, ConnectRecord, DedupeOutcome, EffectRecord, GoAwayRecord, Ledger,
    LedgerSnapshot, RequestId, RequestRecord, ResponseOutcome, ResponseRecord, Side, StoredMessage,
    UnreadableRecord,
};
pub use script::connect::{ConnectAction, ConnectSchedule, ConnectStep};
pub use script::crash::ScriptState;
pub use script::draw::{Draw, Draws};
pub use script::gate::Gate;
pub use script::h2::H2Code;
pub use script::latency::LatencyDistribution;
pub use script::route::{Matcher, Route, Scope};
pub use script::step::{Branch, Chance, Commit, Fail, Step};
pub use script::timeline::{Timeline, Window};
pub use script::{ScopeKey, Script};
pub use server::conn::{ConnInfo, ConnectionControl, NoReset};
pub use server::tcp::ConnIds;
