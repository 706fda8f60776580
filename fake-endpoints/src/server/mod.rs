//! Serving an endpoint's connections: hyper's HTTP/1 server on one connection (`serve`), the
//! state and hooks of a connection (`conn`), the response bodies hyper writes (`body`), and
//! a real TCP listener (`tcp`).
//!
//! Each file serves an [`Endpoint`](crate::Endpoint) or the connections it is handed; the
//! endpoint itself knows of a connection only the requests that arrive on it, so this folder
//! sits above it.

pub(crate) mod body;
pub(crate) mod conn;
pub(crate) mod serve;
pub(crate) mod tcp;
