//! The in-memory TCP network of the sim backend.
