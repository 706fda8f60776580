//! `retrylab`: run and check scenario files from the command line.
//!
//! ```text
//! retrylab run scenarios                 # every scenario, a table, timelines of failures
//! retrylab run scenarios/http --format json
//! retrylab check scenarios/http/429.yaml # parse and validate only; warn of contradictions
//! retrylab plot scenarios/http/429.yaml -o timeline.svg   # the run drawn (or .png)
//! retrylab serve scenarios/real/curl-retry-after.yaml --env   # endpoints for any client
//! retrylab search scenarios/search/x.yaml --shard 1/4 # a `search:` block, with progress
//! ```
//!
//! `--format json` prints one document, `{ "runs": [...], "totals": {...} }`. Each run has
//! its `status` (`passed`, `failed`, `invalid`, `skipped`), `passed` (true for `passed`
//! only), and when it ran, every verdict as `{ check, judgement, message, findings }`, each
//! finding with the `client`, `call` and `attempt` it concerns, the warnings, the report
//! text and the trace.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use retrylab::scenario::{ClientSpec, Scenario};
use retrylab::suite::{Clients, ScenarioFile, scan};
use retrylab::{Judgement, Report, ServeOptions};

#[derive(Parser)]
#[command(
    name = "retrylab",
    version,
    about = "Deterministic fault-injection tests for retry clients",
    after_help = "Exit status: 0 when every scenario that ran passed (and at least one ran); \
                  1 when a run failed, a verdict could not be judged, a file is invalid or \
                  unreadable (not a regular file, over 16 MiB, not UTF-8), or nothing ran; 2 \
                  when a path is missing, a folder holds no scenario file or RETRYLAB_SEED \
                  is not a seed. Folders are searched for regular *.yaml and *.yml files, \
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
    Run {
        /// Scenario files or directories (searched recursively for *.yaml and *.yml).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Run every seed of a `seeds:` sweep (default: the scenario's `seed` only).
        #[arg(long)]
        seeds: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
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
        format: Option<CheckFormat>,
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
    /// prints the trace and the verdicts. A client tells its calls apart by sending
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
        /// How many calls the client makes (default: the scenario's `operation.calls`).
        #[arg(long)]
        calls: Option<u32>,
        /// Stop once the client has been quiet this long (`500ms`, `2s`, ...).
        #[arg(long, default_value = "2s", value_parser = duration)]
        idle: std::time::Duration,
        /// Give up, failing, when the client has not finished after this long.
        #[arg(long, default_value = "10m", value_parser = duration)]
        timeout: std::time::Duration,
    },
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table, and the timeline of every failure.
    Human,
    /// One JSON object per run, with the snapshot text (stable across runs and machines).
    Json,
}

/// How `retrylab check` prints errors and warnings.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// Each drawn with its source lines (`retrylab::diagnostic`).
    Human,
    /// One line each, the form goldens and scripts read.
    Short,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            paths,
            seeds,
            format,
        } => run(&paths, seeds, format),
        Command::Check { paths, format } => check(&paths, format),
        Command::Plot { path, output } => match retrylab::plot::file(&path, &output) {
            Ok(said) => {
                println!("{said}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(2)
            }
        },
        Command::Serve {
            path,
            bind,
            env,
            calls,
            idle,
            timeout,
        } => {
            let mut options = ServeOptions::new().bind(bind).idle(idle).timeout(timeout);
            if let Some(calls) = calls {
                options = options.calls(calls);
            }
            serve(&path, options, env)
        }
        Command::Search {
            path,
            shard,
            regressions,
        } => search(&path, shard, &regressions),
    }
}

/// `retrylab search`: the file's search, a progress bar while it runs, then its outcome.
fn search(
    path: &std::path::Path,
    shard: Option<retrylab::search::Shard>,
    regressions: &std::path::Path,
) -> ExitCode {
    use retrylab::search::{SearchConfig, Shard, reference_client};
    let scenario = match Scenario::load(path) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let Some((config, invariants)) = SearchConfig::from_block(&scenario) else {
        eprintln!("{}: no `search:` block to run", path.display());
        return ExitCode::from(2);
    };
    if shard.is_some() && !scenario.must_fail.is_empty() {
        // A shard sees only its own cases: whether the smallest failing case of the whole
        // search fails the checks must_fail lists is a verdict no single shard can give.
        eprintln!(
            "{}: `--shard` cannot judge a search with `must_fail`: run it whole",
            path.display()
        );
        return ExitCode::from(2);
    }
    if let ClientSpec::Custom(name) = &scenario.client {
        eprintln!(
            "{}: the client `{name}` is written in Rust: run the search from Rust \
             (`scenario_main!` or `retrylab::search`)",
            path.display()
        );
        return ExitCode::from(2);
    }
    let config = config
        .shard(shard.unwrap_or(Shard::WHOLE))
        .regressions(regressions);
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} cases, {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let bar = progress.clone();
    // The wall clock is read here, for the figure printed, never on the simulated path. The
    // rate is of this shard's own cases over the time they took: the clock stops at the last
    // of them, before any look at other shards' earlier cases and before shrinking.
    let started = std::time::Instant::now();
    let searched = std::rc::Rc::new(std::cell::Cell::new(started));
    let last = searched.clone();
    let outcome = retrylab::search(config)
        .progress(move |tried, total| {
            bar.set_length(u64::from(total));
            bar.set_position(u64::from(tried));
            last.set(std::time::Instant::now());
        })
        .run(reference_client(&scenario.client), &invariants);
    progress.finish_and_clear();
    let elapsed = searched.get().duration_since(started).as_secs_f64();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("{}: {error}", path.display());
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{}: {} cases in {elapsed:.2} s ({:.0} cases/s, shrinking not counted)",
        path.display(),
        outcome.cases_tried(),
        f64::from(outcome.cases_tried()) / elapsed.max(f64::EPSILON)
    );
    match outcome.judge(&scenario.must_fail, regressions) {
        Ok(said) => {
            let _ = writeln!(out, "{said}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            let _ = writeln!(out, "{why}");
            ExitCode::FAILURE
        }
    }
}

/// `retrylab serve`: the endpoints' URLs first (flushed, so a script reading them can start
/// its client), then, once the client is done, the report.
fn serve(path: &std::path::Path, options: ServeOptions, env: bool) -> ExitCode {
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
    let _ = writeln!(out, "{}", report.summary());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
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

/// Every scenario file named by `paths`, in a stable order; what the search of a folder
/// passed over is printed as a warning. A folder without a scenario is an error: a run or
/// check of nothing would verify nothing.
fn files(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>, String> {
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
enum Load {
    /// It is sound but needs a feature of retrylab this build lacks: it is skipped.
    Lacking {
        feature: &'static str,
        error: String,
    },
    /// It is wrong: its errors.
    Invalid(retrylab::scenario::ScenarioErrors),
}

fn load(file: &ScenarioFile) -> Result<Scenario, Load> {
    Scenario::load_as(&file.path, &file.display).map_err(|e| match e.lacking_feature() {
        Some(feature) => Load::Lacking {
            feature,
            error: e.to_string(),
        },
        None => Load::Invalid(e),
    })
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

fn check(paths: &[PathBuf], format: Option<CheckFormat>) -> ExitCode {
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
                    "skip  {} (needs retrylab's `{feature}` feature)",
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

/// How one run of the command line ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Every verdict passed.
    Passed,
    /// A verdict failed or could not be judged.
    Failed,
    /// The file does not load (its errors are the row's summary).
    Invalid,
    /// Not run: the scenario names a custom client, which only Rust code can register, or
    /// needs a feature of retrylab this build lacks.
    Skipped,
}

impl Status {
    /// The table's mark.
    fn mark(self) -> &'static str {
        match self {
            Status::Passed => "ok",
            Status::Failed => "FAIL",
            Status::Invalid => "ERR",
            Status::Skipped => "skip",
        }
    }

    /// The JSON `status`.
    fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Invalid => "invalid",
            Status::Skipped => "skipped",
        }
    }
}

struct Row {
    name: String,
    status: Status,
    detail: String,
    summary: Option<String>,
    /// A passed fleet's view (its outcomes and attempts per bucket), printed after the
    /// table; a failed run's summary has it already.
    fleet: Option<Vec<String>>,
    json: Option<serde_json::Value>,
}

fn run(paths: &[PathBuf], all_seeds: bool, format: Format) -> ExitCode {
    // A seed override that is not a seed would otherwise fail every run the same way.
    if let Err(error) = retrylab::overrides::seed() {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    let files = match files(paths) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let clients = Clients::new();
    let progress = ProgressBar::new(files.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for file in &files {
        progress.set_message(file.test_name.clone());
        rows.extend(run_file(file, all_seeds, &clients, format));
        progress.inc(1);
    }
    progress.finish_and_clear();
    let count = |status: Status| rows.iter().filter(|r| r.status == status).count();
    let (passed, failed, invalid, skipped) = (
        count(Status::Passed),
        count(Status::Failed),
        count(Status::Invalid),
        count(Status::Skipped),
    );
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let runs: Vec<serde_json::Value> =
                rows.iter_mut().filter_map(|r| r.json.take()).collect();
            let document = serde_json::json!({
                "runs": runs,
                "totals": {
                    "passed": passed,
                    "failed": failed,
                    "invalid": invalid,
                    "skipped": skipped,
                },
            });
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&document).unwrap_or_default()
            );
        }
        Format::Human => {
            let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
            for row in &rows {
                let _ = writeln!(
                    out,
                    "{:<4}  {:<width$}  {}",
                    row.status.mark(),
                    row.name,
                    row.detail
                );
            }
            for row in rows
                .iter()
                .filter(|r| matches!(r.status, Status::Failed | Status::Invalid))
            {
                if let Some(summary) = &row.summary {
                    let _ = writeln!(out, "\n--- {}\n{summary}", row.name);
                }
            }
            for row in &rows {
                if let Some(lines) = &row.fleet {
                    let _ = writeln!(out, "\n--- {} (fleet)", row.name);
                    for line in lines {
                        let _ = writeln!(out, "  {line}");
                    }
                }
            }
            let _ = writeln!(
                out,
                "\n{} runs: {passed} passed, {failed} failed, {invalid} invalid, {skipped} \
                 skipped",
                rows.len(),
            );
        }
    }
    exit_code(passed, failed + invalid)
}

/// 0 when every run that ran passed and at least one ran; 1 when a run failed or a file is
/// invalid, or when nothing ran at all (every scenario skipped: nothing was verified).
fn exit_code(passed: usize, failed: usize) -> ExitCode {
    if failed == 0 && passed > 0 {
        ExitCode::SUCCESS
    } else {
        if failed == 0 {
            eprintln!(
                "error: no scenario ran (every one was skipped): nothing was verified; \
                 scenarios with `client: {{ custom: ... }}` run from Rust, with \
                 retrylab::scenario_main! and a client registry, and scenarios that need a \
                 feature of retrylab run on a build with it"
            );
        }
        ExitCode::FAILURE
    }
}

fn run_file(file: &ScenarioFile, all_seeds: bool, clients: &Clients, format: Format) -> Vec<Row> {
    let json = format == Format::Json;
    let scenario = match load(file) {
        Ok(scenario) => scenario,
        // Sound, but not for this build (`backend: turmoil` without the feature).
        Err(Load::Lacking { feature, error }) => {
            return vec![Row {
                name: file.test_name.clone(),
                status: Status::Skipped,
                detail: format!("skipped (needs retrylab's `{feature}` feature)"),
                json: json.then(|| not_run_json(&file.test_name, Status::Skipped, &error)),
                summary: None,
                fleet: None,
            }];
        }
        Err(Load::Invalid(error)) => {
            let error = error.to_string();
            return vec![Row {
                name: file.test_name.clone(),
                status: Status::Invalid,
                detail: "invalid scenario".to_owned(),
                json: json.then(|| not_run_json(&file.test_name, Status::Invalid, &error)),
                summary: Some(error),
                fleet: None,
            }];
        }
    };
    if let ClientSpec::Custom(name) = &scenario.client {
        let why = format!(
            "skipped: the client is `custom: {name}`, which only Rust code can register \
             (retrylab::scenario_main! with a client registry)"
        );
        return vec![Row {
            name: file.test_name.clone(),
            status: Status::Skipped,
            detail: format!("skipped (custom client: {name})"),
            json: json.then(|| not_run_json(&file.test_name, Status::Skipped, &why)),
            summary: None,
            fleet: None,
        }];
    }
    // Loading bounded the range (`retrylab::scenario::MAX_SEEDS`); the seeds are still
    // walked, never collected, so nothing is spent per seed before a run.
    let seeds = match (&scenario.seeds, all_seeds, scenario.effective_seed()) {
        (Some(range), true, _) => range.iter(),
        (_, _, Ok(seed)) => seed..=seed,
        (_, _, Err(error)) => {
            let error = error.to_string();
            return vec![Row {
                name: file.test_name.clone(),
                status: Status::Invalid,
                detail: "not runnable".to_owned(),
                json: json.then(|| not_run_json(&file.test_name, Status::Invalid, &error)),
                summary: Some(error),
                fleet: None,
            }];
        }
    };
    let many = seeds.start() != seeds.end();
    seeds
        .map(|seed| {
            let name = if many {
                format!("{}@seed-{seed}", file.test_name)
            } else {
                file.test_name.clone()
            };
            let report = match clients.run(&scenario, seed) {
                Ok(report) => report,
                Err(error) => {
                    let error = error.to_string();
                    return Row {
                        json: json.then(|| not_run_json(&name, Status::Invalid, &error)),
                        name,
                        status: Status::Invalid,
                        detail: "not runnable".to_owned(),
                        summary: Some(error),
                        fleet: None,
                    };
                }
            };
            let status = if report.passed() {
                Status::Passed
            } else {
                Status::Failed
            };
            let trace = report.trace();
            let detail = format!(
                "{} attempts, {} calls, ended at {}",
                trace.attempts.len(),
                trace.calls.len(),
                retrylab::trace::seconds(trace.end_ms)
            );
            Row {
                json: json.then(|| report_json(&name, status, &report)),
                summary: (status == Status::Failed).then(|| failure_summary(&report)),
                fleet: (status == Status::Passed)
                    .then(|| trace.fleet().map(|view| view.lines()))
                    .flatten(),
                name,
                status,
                detail,
            }
        })
        .collect()
}

/// A failed run's summary, then the attempts its failed verdicts name, marked (coloured on
/// a terminal, unless `NO_COLOR` is set).
fn failure_summary(report: &Report) -> String {
    use std::io::IsTerminal as _;
    let colour = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let style = retrylab::diagnostic::Style::coloured(colour);
    let mut text = report.summary();
    if let Some(marked) = retrylab::diagnostic::offending_attempts(report, &style) {
        text.push_str(&marked);
    }
    text
}

/// A file that did not run: its name, why, and nothing else.
fn not_run_json(name: &str, status: Status, why: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "status": status.name(),
        "passed": false,
        "why": why,
    })
}

/// One run: its name, seed, status, every verdict with its findings (call and attempt),
/// the warnings, the report text (the snapshot's, stable across runs and machines) and
/// the trace.
fn report_json(name: &str, status: Status, report: &Report) -> serde_json::Value {
    let verdicts: Vec<serde_json::Value> = report
        .verdicts()
        .iter()
        .map(|v| {
            let findings: Vec<serde_json::Value> = v
                .findings
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "client": f.call.map(|c| c.client),
                        "call": f.call.map(|c| c.call),
                        "attempt": f.attempt,
                        "message": f.message,
                    })
                })
                .collect();
            serde_json::json!({
                "check": v.check,
                "judgement": match v.judgement {
                    Judgement::Passed => "passed",
                    Judgement::Failed => "failed",
                    _ => "not_judged",
                },
                "message": v.message,
                "findings": findings,
            })
        })
        .collect();
    let trace = serde_json::from_str::<serde_json::Value>(&report.trace().to_json())
        .unwrap_or(serde_json::Value::Null);
    serde_json::json!({
        "name": name,
        "seed": report.seed(),
        "status": status.name(),
        "passed": status == Status::Passed,
        "verdicts": verdicts,
        "warnings": report.warnings(),
        "report": report.snapshot_text(),
        "trace": trace,
    })
}
