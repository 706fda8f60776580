//! The scenario library, one test per file (and per seed): the built-in clients for
//! `client: { <policy>: ... }`, and for `client: { custom: <name> }` the third-party retry
//! clients of `retrylab_tests::clients` (tower, backon, tokio-retry2, backoff).
//!
//! `cargo test -p retrylab-tests --test scenarios -- --list` lists them.

retrylab::scenario_main!(
    dir = "../scenarios",
    clients = retrylab_tests::clients::registry()
);
