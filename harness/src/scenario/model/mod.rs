//! The format's types, with their serde and schema impls: what a scenario file says, and
//! nothing of how it is read or which rules it must keep.
//!
//! One file per part of a scenario ([`scenario`] holds the top level), and [`client`] one
//! file per policy family. Besides the types, the values a run derives from them and that
//! validation and the run must agree on: the run's limits, the epoch, the HTTP values.

pub(crate) mod bounds;
pub(crate) mod checks;
pub(crate) mod client;
pub(crate) mod connection;
pub(crate) mod dedupe;
pub(crate) mod duration;
pub(crate) mod endpoint;
pub(crate) mod epoch;
pub(crate) mod expect;
pub(crate) mod format;
pub(crate) mod grpc;
pub(crate) mod h2_fail;
pub(crate) mod headers;
pub(crate) mod http;
pub(crate) mod latency;
pub(crate) mod limits;
pub(crate) mod network;
pub(crate) mod operation;
pub(crate) mod retry_after;
pub(crate) mod scenario;
#[cfg(feature = "schema")]
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod step;
pub(crate) mod turmoil;
pub(crate) mod values;
