//! The tests crate of retrylab: the scenario library as one test per file
//! (`tests/scenarios.rs`), meta-tests, and the third-party retry clients the library runs.
//!
//! [`clients`] holds one module per retry crate, each wrapping a call on `env.http_client()`,
//! and the black-box clients that bring their own network stack to the real backend (curl,
//! Python's urllib3, a plain reqwest client); [`clients::registry`] names them for
//! `client: { custom: <name> }` in `scenarios/clients/` and `scenarios/real/`; [`repeat`]
//! makes a scenario's calls repeat each other, for comparing their delays; [`pinned`] reads
//! a report for the tests that pin verdicts; [`listed`] reads the lists of library files
//! some tests run on another backend.

pub mod clients;
pub mod listed;
pub mod pinned;
pub mod repeat;

/// The README and the guide (`docs/guide/`), their Rust blocks run as doctests of this crate,
/// which has the retry crates they use; the blocks run in `tests/`, so they read the library
/// as `../scenarios/`. The YAML blocks are run by `tests/doc_blocks.rs`.
#[cfg(doctest)]
pub mod docs {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/guide/rust-client.md")]
    pub struct RustClient;
    #[doc = include_str!("../../docs/guide/reqwest-aws-tonic.md")]
    pub struct ReqwestAwsTonic;
    #[doc = include_str!("../../docs/guide/other-languages.md")]
    pub struct OtherLanguages;
}
