//! Adapters that put third-party HTTP stacks on the harness's network, each behind a feature
//! of its own (docs/architecture.md#adapters).
//!
//! - `reqwest` (feature `reqwest`): a terminal `reqwest_middleware::Middleware` for
//!   reqwest 0.13 with reqwest-middleware 0.5, and `env.reqwest_client(..)`.
//! - `reqwest_0_12` (feature `reqwest-0-12`): the same adapter for reqwest 0.12 with
//!   reqwest-middleware 0.4, and `env.reqwest_0_12_client(..)`.

#[cfg(feature = "reqwest")]
pub mod reqwest;
#[cfg(feature = "reqwest-0-12")]
#[path = "reqwest/v0_12.rs"]
pub mod reqwest_0_12;
