//! Adapters: third-party HTTP stacks plugged into the harness, each behind a feature of its
//! own so that the default build compiles none of them.
//!
//! | module | feature | what |
//! |---|---|---|
//! | [`aws`] | `aws` | the AWS SDK for Rust: an `HttpClient` over the simulated network, sleeps and a time source on virtual time, and an `SdkConfig` that reads nothing from the environment |

#[cfg(feature = "aws")]
pub mod aws;
