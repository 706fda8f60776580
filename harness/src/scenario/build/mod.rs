//! Scenarios made in code: the builder and the free functions that start its sentences, so a
//! scenario written in Rust reads like its YAML and is validated as a loaded one is.

pub(crate) mod builder;
pub(crate) mod vocabulary;
