//! `retrylab schema`: the JSON Schema of scenario files, generated from the types.

use std::io::Write as _;
use std::process::ExitCode;

/// Prints the schema, followed by a newline: byte for byte `scenarios/schema.json`, which
/// the tests crate's `schema` test keeps equal to the types' output.
pub(crate) fn schema() -> ExitCode {
    let mut out = std::io::stdout().lock();
    // A reader that went away (`retrylab schema | head`) is an error, not a panic: the exit
    // status tells a script the schema was not all written.
    match writeln!(out, "{}", retrylab::scenario::json_schema()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: writing the schema: {error}");
            ExitCode::FAILURE
        }
    }
}
