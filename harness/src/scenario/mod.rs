//! Scenario files: types, parsing, validation.
