//! `retrylab serve`: a scenario's endpoints on real sockets, for a client in any language.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use retrylab::ServeOptions;
use retrylab::scenario::Scenario;

/// What `retrylab serve` prints, and how it learns that the client is done.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Printed {
    /// The URLs as `RETRYLAB_URL_<NAME>=<url>` lines.
    pub(crate) env: bool,
    /// How the run is printed.
    pub(crate) format: ServeFormat,
    /// The client is done when standard input closes; an empty line follows the URLs.
    pub(crate) until_eof: bool,
}

/// `retrylab serve`: the endpoints' URLs first (flushed, so a script reading them can start
/// its client), then, once the client is done, the report.
pub(crate) fn serve(path: &std::path::Path, options: ServeOptions, printed: Printed) -> ExitCode {
    let Printed {
        env,
        format,
        until_eof,
    } = printed;
    let scenario = match Scenario::load(path) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let options = if until_eof {
        options.finished_when(finished_at_eof())
    } else {
        options
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
        if until_eof {
            // The end of the URL lines, for a caller that reads them before starting its
            // client (the number of endpoints is the scenario's, which it need not parse).
            let _ = writeln!(out);
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

/// A flag set once standard input closes (or can no longer be read): a thread reads it to its
/// end and discards what it reads. The thread is left blocked in its read if standard input
/// never closes; the process ends it when serve exits.
fn finished_at_eof() -> Arc<AtomicBool> {
    let finished = Arc::new(AtomicBool::new(false));
    let flag = finished.clone();
    let spawned = std::thread::Builder::new()
        .name("serve-stdin".to_owned())
        .spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            flag.store(true, Ordering::SeqCst);
        });
    if let Err(error) = spawned {
        // No thread to watch standard input: judge as if it had closed, rather than never.
        eprintln!("warning: cannot watch standard input ({error}): judging at once");
        finished.store(true, Ordering::SeqCst);
    }
    finished
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
