//! The scenario library, one test per file (and per seed), with the built-in clients.
//!
//! `cargo test -p retrylab-tests --test scenarios -- --list` lists them.

retrylab::scenario_main!(dir = "../scenarios");
