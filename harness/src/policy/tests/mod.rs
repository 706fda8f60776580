//! Tests of the policy framework against independent expectations: hand-computed envelope
//! vectors, the reference decision inside its envelope over many seeds, and mutation tests
//! in which deliberately wrong clients, written here from scratch, are caught.

mod mutations;
mod properties;
pub(crate) mod support;
mod vectors;
