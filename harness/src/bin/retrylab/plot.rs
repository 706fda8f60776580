//! `retrylab plot`: a scenario's run drawn on its virtual time axis, as SVG or PNG.

use std::path::Path;
use std::process::ExitCode;

/// Draws the run of the scenario at `path` into `output` (SVG or PNG by its extension) and
/// says what was drawn; exit status 2 when the file does not load or run, or the plot
/// cannot be written. A failed run is drawn too: its plot is how one looks at the failure.
pub(crate) fn plot(path: &Path, output: &Path) -> ExitCode {
    match retrylab::plot::file(path, output) {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
