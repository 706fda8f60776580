//! Serving an endpoint's connections: the entry, which picks the HTTP version (`serve`);
//! hyper's HTTP/1 server on one connection (`http1`); the h2 crate's HTTP/2 server, a
//! connection and its streams (`http2`); the look at an `auto` connection's first bytes
//! (`sniff`); what both versions share (`common`); the state and hooks of a connection
//! (`conn`), the response bodies hyper writes (`body`), and a real TCP listener (`tcp`).
//!
//! Each file serves an [`Endpoint`](crate::Endpoint) or the connections it is handed; the
//! endpoint itself knows of a connection only the requests that arrive on it, so this folder
//! sits above it.

pub(crate) mod body;
pub(crate) mod common;
pub(crate) mod conn;
mod http1;
mod http2;
pub(crate) mod serve;
mod sniff;
pub(crate) mod tcp;
