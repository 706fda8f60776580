//! `retrylab check`: parse and validate scenario files without running them.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::files::{Load, files, load};

/// Checks every file `paths` names: `ok`, `skip` or `error` for each, its warnings, then
/// the counts.
pub(crate) fn check(paths: &[PathBuf]) -> ExitCode {
    let files = match files(paths) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    // Written with `writeln!`, whose error is ignored: `println!` panics when the reader
    // has gone (`retrylab check scenarios | head`), and the exit code still tells.
    let mut out = std::io::stdout().lock();
    let mut failed = 0;
    let mut skipped = 0;
    for file in &files {
        // Loading runs the validation a run does, "not supported yet" included.
        match load(file).map(|s| s.warnings()) {
            Ok(warnings) => {
                let _ = writeln!(out, "ok    {}", file.display);
                for warning in warnings {
                    let _ = writeln!(out, "warning: {warning}");
                }
            }
            Err(Load::Lacking { feature, .. }) => {
                skipped += 1;
                let _ = writeln!(
                    out,
                    "skip  {} (needs retrylab's `{feature}` feature)",
                    file.display
                );
            }
            Err(Load::Invalid(error)) => {
                failed += 1;
                let _ = writeln!(out, "error {}", file.display);
                // The error follows its file's line on a terminal, where both streams meet.
                let _ = out.flush();
                eprintln!("{error}");
            }
        }
    }
    // A skipped file is neither sound nor wrong for this build: counted apart, so that a
    // summary of no errors does not read as every file checked.
    let _ = writeln!(
        out,
        "{} files, {failed} with errors, {skipped} skipped",
        files.len()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
