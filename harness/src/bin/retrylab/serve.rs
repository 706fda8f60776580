//! `retrylab serve`: a scenario's endpoints on real sockets, for a client in any language.

use std::io::Write as _;
use std::process::ExitCode;

use retrylab::ServeOptions;
use retrylab::scenario::Scenario;

/// `retrylab serve`: the endpoints' URLs first (flushed, so a script reading them can start
/// its client), then, once the client is done, the report.
pub(crate) fn serve(
    path: &std::path::Path,
    options: ServeOptions,
    env: bool,
    format: ServeFormat,
) -> ExitCode {
    let scenario = match Scenario::load(path) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let report = scenario.serve(options, move |endpoints| {
        let mut out = std::io::stdout().lock();
        for endpoint in endpoints {
            let _ = if env {
                writeln!(out, "{}={}", env_name(&endpoint.name), endpoint.url)
            } else {
                writeln!(out, "{} {}", endpoint.name, endpoint.url)
            };
        }
        let _ = out.flush();
    });
    if report.end() == &retrylab::RunEnd::NotRunnable {
        // Nothing ran: the reasons alone, as `retrylab check` prints them.
        for verdict in report.failures() {
            eprintln!("{}", verdict.message);
        }
        return ExitCode::from(2);
    }
    let mut out = std::io::stdout().lock();
    match format {
        ServeFormat::Human => {
            let _ = writeln!(out, "{}", report.summary());
        }
        ServeFormat::Json => match crate::row::served_json(&scenario, &report) {
            Ok(json) => {
                let _ = writeln!(out, "{json:#}");
            }
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        },
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// How `retrylab serve` prints the run once the client is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ServeFormat {
    /// The report as the scenario suite prints it.
    Human,
    /// The run as `retrylab run --format json` writes one: verdicts, processes and trace.
    Json,
}

/// `RETRYLAB_URL_<NAME>`: the endpoint's name in capitals, anything but ASCII letters and
/// digits as `_`, so the line is a valid shell assignment.
fn env_name(name: &str) -> String {
    let mut out = String::from("RETRYLAB_URL_");
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    out
}
