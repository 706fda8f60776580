//! The lists of library files some tests run on another backend (`tests/real_backend.txt`,
//! `tests/turmoil_backend.txt`): one path from the workspace's root a line, `#` comments.

use retrylab::Report;
use retrylab::scenario::{BackendKind, Scenario};

/// The files list `name` (in the tests crate's folder) names, as paths from the workspace's
/// root.
///
/// # Panics
/// When the list cannot be read: the test that names it is wrong.
pub fn files(name: &str) -> Vec<String> {
    let list = format!("{}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&list)
        .unwrap_or_else(|e| panic!("{list}: {e}"))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// `file` (from the workspace's root) run with its built-in client on `backend`.
///
/// # Panics
/// When the file does not load: a listed file must.
pub fn run_on(file: &str, backend: BackendKind) -> Report {
    let path = format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"));
    let mut scenario = Scenario::load_as(&path, file).unwrap_or_else(|e| panic!("{e}"));
    scenario.backend = backend;
    scenario.run_builtin()
}
