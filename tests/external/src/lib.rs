//! A user crate outside the workspace (see Cargo.toml).
