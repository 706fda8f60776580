//! `retrylab`: run and check scenario files from the command line.
//!
//! ```text
//! retrylab run scenarios                 # every scenario, a table, timelines of failures
//! retrylab run scenarios/http --format json
//! retrylab run scenarios --format junit > retrylab.xml   # one test case per file and seed
//! retrylab run scenarios/http/429-retry-after.yaml --seeds=0..99 --client exponential
//! retrylab check scenarios/http/429-retry-after.yaml # parse and validate only; warn of contradictions
//! retrylab plot scenarios/http/429-retry-after.yaml -o timeline.svg   # the run drawn (or .png)
//! retrylab serve docs/examples/serve-retry-after.yaml --env   # endpoints for any client
//! retrylab run scenarios/real --client '{ command: [node, client.js, "{url}"] }'
//! retrylab conformance scenarios/conformance --profiles tests/conformance/profiles --write docs/conformance.md
//! retrylab search scenarios/search/x.yaml --shard 1/4 # a `search:` block, with progress
//! retrylab schema > schema.json          # the JSON Schema of scenario files
//! retrylab new orders --from retry-after # writes orders.yaml, a commented starter
//! ```
//!
//! `--format json` prints one document, `{ "runs": [...], "totals": {...} }`. Each run has
//! its `status` (`passed`, `failed`, `invalid`, `skipped`), `passed` (true for `passed`
//! only), and when it ran, every verdict as `{ check, judgement, message, findings }`, each
//! finding with the `client`, `call` and `attempt` it concerns, the warnings, the report
//! text and the trace.

mod check;
mod conformance;
mod files;
mod junit;
mod new;
mod options;
mod plot;
mod policy;
mod row;
mod run;
mod schema;
mod search;
mod serve;
mod snapshots;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use retrylab::ServeOptions;

#[derive(Parser)]
#[command(
    name = "retrylab",
    version,
    about = "Deterministic fault-injection tests for retry clients",
    after_help = "Exit status: 0 when every scenario that ran passed (and at least one ran); \
                  1 when a run failed, a verdict could not be judged, a file is invalid or \
                  unreadable (not a regular file, over 16 MiB, not UTF-8), or nothing ran; 2 \
                  when a path is missing, a folder holds no scenario file, RETRYLAB_SEED \
                  is not a seed, an option cannot be used (a bad --seeds=A..B, an unknown \
                  --client) or `new` would overwrite a file. Folders are searched for regular *.yaml and *.yml files, \
                  each folder once (symlink cycles end); what is skipped is printed as a \
                  warning."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios (files or directories) with their built-in clients.
    Run(run::RunArgs),
    /// Parse and validate scenario files without running them, and warn of expectations
    /// that no run can meet.
    Check {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// `human` draws each error and warning under its source line, with what was
        /// expected and the did-you-mean; `short` prints one line each (`file:line:col path:
        /// message`). Default: `human` on a terminal, `short` otherwise. Colour only on a
        /// terminal, and never with `NO_COLOR` set.
        #[arg(long, value_enum)]
        format: Option<check::CheckFormat>,
    },
    /// Draw a scenario's run on its virtual time axis, as SVG or PNG (by the output's
    /// extension): attempts coloured by outcome, gaps, the windows `conforms_to` allows,
    /// Retry-After instants, effects, fault windows, a fleet's attempts per bucket. Exit
    /// status 0 when drawn (a failed run too), 2 when the file does not load or run, or the
    /// plot cannot be written.
    Plot {
        /// The scenario file.
        path: PathBuf,
        /// Where the plot goes: `timeline.svg` or `timeline.png`.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Serve a scenario's endpoints on real sockets for a client in any language, then judge
    /// what it did.
    ///
    /// Prints one `name url` line per endpoint once they listen, waits until the client's
    /// calls are done (requests of `--calls` calls, then `--idle` without a request), and
    /// prints the trace and the verdicts (or, with `--until-eof`, judges once standard input
    /// closes). A file whose client is a program (`client: {
    /// command: [...] }`) is served to that program, which serve starts itself, and judged
    /// when it exits. A client tells its calls apart by sending
    /// `x-retrylab-call: <n>`; otherwise the `calls - 1` longest pauses between requests
    /// separate them. Exit status 0 when every verdict passed, 1 otherwise, 2 when the
    /// scenario does not load.
    Serve {
        /// The scenario file.
        path: PathBuf,
        /// The address to listen on. Only 127.0.0.1 unless given: anything else exposes
        /// the endpoints to the network.
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Print the URLs as `RETRYLAB_URL_<NAME>=<url>` lines, for `eval` in a script.
        #[arg(long)]
        env: bool,
        /// How many calls the client makes, at least 1 (default: the scenario's
        /// `operation.calls`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        calls: Option<u32>,
        /// Stop once the client has been quiet this long (`500ms`, `2s`, ...). Default: the
        /// longest wait the scenario asks of a client (a `Retry-After`, a step's latency or
        /// trickle) plus 1s, and at least 2s.
        #[arg(long, value_parser = duration)]
        idle: Option<std::time::Duration>,
        /// Give up, failing, when no request at all has arrived this long after the
        /// endpoints started listening (a client that died first, or went elsewhere).
        #[arg(long, default_value = "60s", value_parser = duration)]
        first_request: std::time::Duration,
        /// Give up, failing, when the client has not finished after this long.
        #[arg(long, default_value = "10m", value_parser = duration)]
        timeout: std::time::Duration,
        /// How the run is printed once the client is done: the report, or JSON as `retrylab
        /// run --format json` writes a run (the URL lines come first either way).
        #[arg(long, value_enum, default_value_t = serve::ServeFormat::Human)]
        format: serve::ServeFormat,
        /// Judge as soon as standard input closes, instead of after `--idle` of quiet: for a
        /// caller that runs the client itself (a test), holds serve's standard input open
        /// while the client runs and closes it once the client is done. A response still
        /// being written then is waited for, at most `--idle`; closed before any request,
        /// serving fails at once. The URL lines are followed by an empty line, so that the
        /// caller knows it has read them all. (A file whose client is a program is judged
        /// when the program exits, with or without it.)
        #[arg(long)]
        until_eof: bool,
    },
    /// Write a commented starter scenario, `<NAME>.yaml`, from a template; it passes
    /// `retrylab check` as written. Exit status 2 when the file exists (it is never
    /// overwritten) or cannot be created.
    New {
        /// The file to write (`.yaml` is added unless given) and the scenario's `name`.
        name: PathBuf,
        /// The starter.
        #[arg(long, value_enum)]
        from: new::Template,
    },
    /// Run every client profile (a client and what its documentation promises) against
    /// every promise of a conformance suite (one fault file each), and print the table of
    /// verdicts: conforms, deviates, the docs are silent, skipped (not installed), error.
    ///
    /// Exit status 0 when the table was printed or written, or `--check` found it current;
    /// 1 when `--check` found it stale (each difference is printed, then the command that
    /// regenerates it); 2 when a file does not load.
    Conformance {
        /// The suite: a folder of fault files, each a promise named by its stem.
        suite: PathBuf,
        /// The folder of client profiles.
        #[arg(long)]
        profiles: PathBuf,
        /// Write the table into this Markdown file, below its marker line (the text above
        /// it is kept).
        #[arg(long, conflicts_with = "check")]
        write: Option<PathBuf>,
        /// Compare the verdicts with this file's table instead (clients not installed here
        /// are not compared, and are said to be).
        #[arg(long)]
        check: Option<PathBuf>,
        /// Cells run at once, each a run on real sockets of its own (most of a cell is a
        /// client sleeping between attempts, so a small machine runs several well); the
        /// table is the same, in the same order.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: u16,
    },
    /// Print the JSON Schema of scenario files, generated from the types (what
    /// `scenarios/schema.json` holds, for editors: `retrylab schema > schema.json`).
    Schema,
    /// Run a file's `search:` block with its built-in client: every case, with a progress
    /// bar and cases/s, then the smallest failing case written as a regression file.
    ///
    /// Exit status 0 when no case failed (or, with `must_fail`, when the smallest failing
    /// case failed exactly those checks), 1 when a case failed (its path is printed), 2 when
    /// the file does not load, has no `search:` block or names a `custom:` client (those run
    /// from Rust: `scenario_main!` or `retrylab::search`).
    Search {
        /// The scenario file.
        path: PathBuf,
        /// Try only the cases of shard k of n (`--shard 2/4`); the smallest failing file is
        /// the same however the search is split.
        #[arg(long)]
        shard: Option<retrylab::search::Shard>,
        /// Where the regression file goes.
        #[arg(long, default_value = retrylab::search::DEFAULT_REGRESSIONS)]
        regressions: PathBuf,
    },
}

/// A duration as scenarios write them (`500ms`, `2s`, `10m`).
fn duration(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<retrylab::scenario::Millis>()
        .map(|ms| ms.as_duration())
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    retrylab::client::kill_commands_on_signal();
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Check { paths, format } => check::check(&paths, format),
        Command::Plot { path, output } => plot::plot(&path, &output),
        Command::Serve {
            path,
            bind,
            env,
            calls,
            idle,
            first_request,
            timeout,
            format,
            until_eof,
        } => {
            let mut options = ServeOptions::new()
                .bind(bind)
                .first_request(first_request)
                .timeout(timeout);
            if let Some(idle) = idle {
                options = options.idle(idle);
            }
            if let Some(calls) = calls {
                options = options.calls(calls);
            }
            let printed = serve::Printed {
                env,
                format,
                until_eof,
            };
            serve::serve(&path, options, printed)
        }
        Command::Search {
            path,
            shard,
            regressions,
        } => search::search(&path, shard, &regressions),
        Command::Schema => schema::schema(),
        Command::Conformance {
            suite,
            profiles,
            write,
            check,
            jobs,
        } => {
            let output = match (write, check) {
                (Some(file), _) => conformance::Output::Write(file),
                (None, Some(file)) => conformance::Output::Check(file),
                (None, None) => conformance::Output::Print,
            };
            conformance::conformance(&suite, &profiles, &output, usize::from(jobs))
        }
        Command::New { name, from } => new::new(&name, from),
    }
}
