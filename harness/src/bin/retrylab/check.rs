//! `retrylab check`: parse and validate scenario files without running them.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;

use crate::files::{Load, files, load};

/// How `retrylab check` prints errors and warnings.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    /// Each drawn with its source lines (`retrylab::diagnostic`).
    Human,
    /// One line each, the form goldens and scripts read.
    Short,
}

/// How `check` draws its errors (on standard error) and warnings (on standard output), or
/// `None` for one line each.
fn drawing(format: Option<CheckFormat>) -> [Option<retrylab::diagnostic::Style>; 2] {
    use std::io::IsTerminal as _;
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let terminals = [
        std::io::stderr().is_terminal(),
        std::io::stdout().is_terminal(),
    ];
    terminals.map(|terminal| match format {
        Some(CheckFormat::Short) => None,
        None if !terminal => None,
        _ => Some(retrylab::diagnostic::Style::coloured(
            terminal && !no_colour,
        )),
    })
}

/// Checks every file `paths` names: `ok`, `skip` or `error` for each, its warnings, then
/// the counts.
pub(crate) fn check(paths: &[PathBuf], format: Option<CheckFormat>) -> ExitCode {
    let [errors_drawn, warnings_drawn] = drawing(format);
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
                if let (Some(style), false) = (&warnings_drawn, warnings.is_empty()) {
                    let source = retrylab::diagnostic::source_of(&file.path);
                    let drawn = retrylab::diagnostic::render_warnings(&warnings, &source, style);
                    let _ = write!(out, "{drawn}");
                    continue;
                }
                for warning in warnings {
                    let _ = writeln!(out, "warning: {warning}");
                }
            }
            Err(Load::Lacking { feature, .. }) => {
                skipped += 1;
                let _ = writeln!(
                    out,
                    "skip  {} (needs retrylab's `{feature}` feature: `cargo install retrylab \
                     --features cli,{feature}`)",
                    file.display
                );
            }
            Err(Load::Invalid(error)) => {
                failed += 1;
                let _ = writeln!(out, "error {}", file.display);
                // The error follows its file's line on a terminal, where both streams meet.
                let _ = out.flush();
                match &errors_drawn {
                    Some(style) => {
                        let source = retrylab::diagnostic::source_of(&file.path);
                        eprint!("{}", retrylab::diagnostic::render(&error, &source, style));
                    }
                    None => eprintln!("{error}"),
                }
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
