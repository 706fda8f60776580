//! Conformance: what a client's documentation promises, checked against what it does.
//!
//! A [`ClientProfile`] names a client (usually a program, `client: { command }`) and what
//! its documentation promises: the schedule, as a policy for `conforms_to`, the methods it
//! retries, and a quote for each promise it makes. A promise is a fault file, written once
//! for every client (`scenarios/conformance/`). [`cell`] runs one profile on one promise;
//! A profile speaks HTTP or gRPC ([`Protocol`]), and is applied only to the promises of
//! its protocol. [`markdown`] writes the table of them all, which `retrylab conformance` regenerates
//! (`docs/conformance.md`).
//!
//! ```
//! use retrylab::Scenario;
//! use retrylab::conformance::{ClientProfile, Promise, Verdict, cell};
//!
//! // The reference client, documented as retrying a 503 three times, one second apart.
//! let profile = ClientProfile::from_yaml_str(
//!     "version: 1\nname: reference\nlanguage: Rust\nlibrary: retrylab\n\
//!      client: { fixed: { delay: 10ms, max_attempts: 4 } }\n\
//!      documented:\n  conforms_to: { fixed: { delay: 10ms, max_attempts: 4 } }\n\
//!      \x20 promises: { burst: 'retries a 503 three times' }\n",
//!     "reference.yaml",
//! ).unwrap();
//! let fault = Scenario::from_yaml_str(
//!     "version: 1\nname: burst\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
//!      operation: { endpoint: api }\n",
//!     "burst.yaml",
//! ).unwrap();
//!
//! let cell = cell(&profile, &Promise { name: "burst".into(), fault });
//!
//! assert_eq!(cell.verdict, Verdict::Conforms);
//! assert_eq!(cell.observed, "4 attempts");
//! ```

mod profile;
mod protocol;
mod table;

use std::path::Path;

pub use profile::{ClientProfile, Documented};
pub use protocol::Protocol;
pub use table::{Cell, Promise, Verdict, cell, markdown, verdicts_of};

use crate::scenario::Scenario;
use crate::suite::scenario_files;

/// The promises of the suite in `dir`: every scenario file, by its stem, in path order.
pub fn promises(dir: &Path) -> Result<Vec<Promise>, String> {
    let files = scenario_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for file in files {
        let fault = Scenario::load_as(&file.path, &file.display).map_err(|e| e.to_string())?;
        let name = file
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Promise { name, fault });
    }
    Ok(out)
}

/// The profiles in `dir`: every `.yaml` file, in path order.
pub fn profiles(dir: &Path) -> Result<Vec<ClientProfile>, String> {
    let files = scenario_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    files
        .iter()
        .map(|file| ClientProfile::load(&file.path).map_err(|e| e.to_string()))
        .collect()
}
