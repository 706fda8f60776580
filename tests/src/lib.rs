//! tests crate
