//! Adapters: third-party HTTP stacks plugged into the harness's network, each behind a feature
//! of its own so that the default build compiles none of them
//! (docs/architecture.md#adapters).
//!
//! | module | feature | what |
//! |---|---|---|
//! | `reqwest` | `reqwest` | a terminal `reqwest_middleware::Middleware` for reqwest 0.13 with reqwest-middleware 0.5, and `env.reqwest_client(..)` |
//! | `reqwest_0_12` | `reqwest-0-12` | the same adapter for reqwest 0.12 with reqwest-middleware 0.4, and `env.reqwest_0_12_client(..)` |
//! | `aws` | `aws` | the AWS SDK for Rust: an `HttpClient` over the simulated network, sleeps and a time source on virtual time, and an `SdkConfig` that reads nothing from the environment |

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "reqwest")]
pub mod reqwest;
#[cfg(feature = "reqwest-0-12")]
#[path = "reqwest/v0_12.rs"]
pub mod reqwest_0_12;
