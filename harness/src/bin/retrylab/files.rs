//! The scenario files a command line names: folders searched, and each file loaded.

use std::path::PathBuf;

use retrylab::scenario::Scenario;
use retrylab::suite::{ScenarioFile, scan};

/// Every scenario file named by `paths`, in a stable order; what the search of a folder
/// passed over is printed as a warning. A folder without a scenario is an error: a run or
/// check of nothing would verify nothing.
pub(crate) fn files(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>, String> {
    let mut out = Vec::new();
    for path in paths {
        // A path that is there but is no folder (a dangling symlink, a FIFO, a device) is
        // loaded as a file, and loading says what it is.
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "{}: no such file or directory (give scenario files or folders of them)",
                    path.display()
                ));
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
            Ok(_) => {}
        }
        if path.is_dir() {
            let found = scan(path)
                .map_err(|e| format!("{}: cannot read the directory: {e}", path.display()))?;
            for skipped in &found.skipped {
                eprintln!("warning: {skipped}");
            }
            if found.files.is_empty() {
                return Err(format!(
                    "{}: no scenario files (*.yaml, *.yml) in this folder{}",
                    path.display(),
                    if found.skipped.is_empty() {
                        ""
                    } else {
                        " (the entries skipped are listed above)"
                    }
                ));
            }
            out.extend(found.files);
        } else {
            let display = path.display().to_string();
            let test_name = path.with_extension("").display().to_string();
            out.push(ScenarioFile {
                path: path.clone(),
                display,
                test_name,
            });
        }
    }
    Ok(out)
}

/// Why a file did not load.
pub(crate) enum Load {
    /// It is sound but needs a feature of retrylab this build lacks: it is skipped.
    Lacking {
        feature: &'static str,
        error: String,
    },
    /// It is wrong: its errors, kept whole so that `check` can draw each under its line.
    Invalid(retrylab::scenario::ScenarioErrors),
}

pub(crate) fn load(file: &ScenarioFile) -> Result<Scenario, Load> {
    Scenario::load_as(&file.path, &file.display).map_err(|e| match e.lacking_feature() {
        Some(feature) => Load::Lacking {
            feature,
            error: e.to_string(),
        },
        None => Load::Invalid(e),
    })
}
