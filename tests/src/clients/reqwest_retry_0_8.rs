//! [reqwest-retry](https://docs.rs/reqwest-retry/0.8.0) 0.8.0, the last release on
//! reqwest 0.12 and reqwest-middleware 0.4 (feature `reqwest-0-12`), through
//! `env.reqwest_0_12_client(..)` (`retrylab::adapters::reqwest_0_12`).
//!
//! The same configurations as `clients::reqwest_retry` (feature `reqwest`), from the same
//! source. reqwest-retry 0.8.0's middleware is 0.9.1's (0.9.0 moved to reqwest 0.13, 0.9.1
//! changed only its WebAssembly timer), on the same retry-policies 0.5, so the scenarios give
//! the same traces on both; what is said there of jitter and the real clock holds here.

use ::reqwest_middleware_0_4 as middleware_crate;
use ::reqwest_retry_0_8 as retry_crate;
use retrylab::Env;

/// `env.reqwest_0_12_client` with `middleware` before the harness's transport.
fn client(
    env: &Env,
    middleware: impl middleware_crate::Middleware,
) -> Result<middleware_crate::ClientWithMiddleware, String> {
    env.reqwest_0_12_client(|builder| builder.with(middleware))
        .map_err(|error| error.to_string())
}

// Loaded once per reqwest-retry version on purpose: one source, compiled against each
// version's crates (see the file's header).
#[allow(clippy::duplicate_mod)]
#[path = "reqwest_retry/configurations.rs"]
mod configurations;

pub use configurations::*;
