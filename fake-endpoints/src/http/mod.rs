//! HTTP as an endpoint reads and writes it: a received request's head and headers as the
//! ledger keeps them, the `x-retrylab-*` names on the wire, HTTP-dates, the `Retry-After`
//! values a step can send, and the responses themselves.
//!
//! This is the vocabulary the scripts, the ledger and the endpoint share, so it depends on none
//! of them. Serving connections with it is the `server` folder's work, which sits above the
//! endpoint.

pub mod date;
pub(crate) mod detach;
pub(crate) mod grpc;
pub(crate) mod headers;
pub(crate) mod response;
pub(crate) mod retry_after;
pub mod wire;
