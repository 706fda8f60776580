//! `retrylab run`: run scenarios with their built-in clients, and print a table, JSON or
//! `JUnit` XML.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use retrylab::internals::MAX_SEEDS;
use retrylab::scenario::{BackendKind, SeedRange};
use retrylab::suite::Clients;

use crate::files::files;
use crate::options::{Format, RunOptions, Seeds};
use crate::row::{Row, Status, run_file};
use crate::snapshots::Snapshots;

/// What `retrylab run` takes.
#[derive(Args)]
pub(crate) struct RunArgs {
    /// Scenario files or directories (searched recursively for *.yaml and *.yml).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Which seeds to run. Bare `--seeds`: every seed of each file's `seeds:` sweep (a file
    /// without one runs its `seed`); `--seeds=3..7`: seeds 3 to 7 of every file, at most
    /// 10,000 (`--seeds=sweep` is bare `--seeds`). The value needs the `=`: `--seeds 3..7`
    /// would read `3..7` as a path. Without the option: the scenario's `seed` (or
    /// `RETRYLAB_SEED`, which either form of the option refuses to be combined with).
    #[arg(
        long,
        value_name = "A..B",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = SWEEP
    )]
    seeds: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Run every file on this backend instead of its own `backend:` (the file is checked
    /// again for it: what the backend cannot do is an error).
    #[arg(long, value_enum)]
    backend: Option<Backend>,
    /// Run every file with this client instead of its `client:`: a policy's name
    /// (`exponential`, with the policy's defaults), a YAML mapping as a file writes it
    /// (`'{ exponential: { max_attempts: 5 } }'`), or a program (`'{ command: [node,
    /// client.js, "{url}"] }'`, which runs each file on real sockets). Its expectations
    /// judge the new client.
    #[arg(long, value_name = "POLICY", conflicts_with = "profile")]
    client: Option<String>,
    /// Run every file with this client profile (a client and what its documentation
    /// promises, see `retrylab conformance`): its client, judged `conforms_to` its
    /// documented policy on the files whose stem names a promise it makes.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Rewrite the snapshot of each passing run of a file with `snapshot: true` (taken with
    /// the file's `seed`) from this run, in `--snapshot-dir`; files without `snapshot: true`
    /// have no snapshot and are only run. Without it, `retrylab run` compares no snapshot:
    /// the scenario suite does (`cargo test`).
    #[arg(long)]
    update_snapshots: bool,
    /// Where `--update-snapshots` writes: the `tests/snapshots` of the crate whose scenario
    /// suite compares them (`<name>.snap`, the name from the file's path as given:
    /// `scenarios/http/429.yaml` -> `scenarios__http__429.snap`). Without it, `tests/snapshots`
    /// here, as the library finds it outside cargo, and only if that folder already exists:
    /// a folder no suite reads would take the snapshots silently.
    #[arg(long, value_name = "DIR", requires = "update_snapshots")]
    snapshot_dir: Option<PathBuf>,
}

/// The folder `--update-snapshots` writes to without `--snapshot-dir`, relative to the
/// current directory as the library's snapshot folder is when cargo has not set
/// `CARGO_MANIFEST_DIR`.
const DEFAULT_SNAPSHOT_DIR: &str = "tests/snapshots";

/// The value bare `--seeds` stands for.
const SWEEP: &str = "sweep";

/// `--backend`: the backends a file can name.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The in-memory network on virtual time.
    Sim,
    /// A turmoil simulation (a build with retrylab's `turmoil` feature).
    Turmoil,
    /// Real sockets on 127.0.0.1, in real time.
    Real,
}

impl RunArgs {
    /// The options, or why the command line cannot be run (exit status 2).
    fn options(&self) -> Result<RunOptions, String> {
        // `--seeds 3..7` reads `3..7` as a path (the value needs the `=`): said plainly
        // rather than as a missing file.
        if let Some(range) = self.paths.iter().find(|p| {
            std::fs::symlink_metadata(p).is_err()
                && p.to_str().is_some_and(|s| s.parse::<SeedRange>().is_ok())
        }) {
            let range = range.display();
            return Err(format!(
                "{range}: no such file or directory; to run seeds {range}, write \
                 --seeds={range} (with the `=`)"
            ));
        }
        let seeds = match self.seeds.as_deref() {
            None => Seeds::Scenario,
            Some(SWEEP) => Seeds::Sweep,
            Some(text) => {
                let range: SeedRange = text.parse().map_err(|e| format!("--seeds={text}: {e}"))?;
                if range.len() > MAX_SEEDS {
                    return Err(format!(
                        "--seeds={text}: {} seeds, at most {MAX_SEEDS} in one run",
                        range.len()
                    ));
                }
                Seeds::Range(range)
            }
        };
        // Two sources of seeds and no rule to prefer one: refused, not guessed, for a sweep
        // (which would run the file's seeds and quietly leave the variable's out) as for a
        // range.
        if let (Some(text), true) = (
            self.seeds.as_deref(),
            retrylab::overrides::seed().is_ok_and(|s| s.is_some()),
        ) {
            let option = if text == SWEEP {
                "--seeds".to_owned()
            } else {
                format!("--seeds={text}")
            };
            return Err(format!(
                "{option} and {} both choose the seeds: unset one",
                retrylab::overrides::SEED_VAR
            ));
        }
        let backend = self.backend.map(|b| match b {
            Backend::Sim => BackendKind::Sim,
            Backend::Turmoil => BackendKind::Turmoil,
            Backend::Real => BackendKind::Real,
        });
        if backend == Some(BackendKind::Turmoil) && !cfg!(feature = "turmoil") {
            return Err(
                "--backend turmoil: this retrylab was built without its `turmoil` \
                        feature: install it with `cargo install retrylab --features \
                        cli,turmoil`"
                    .to_owned(),
            );
        }
        let client = self
            .client
            .as_deref()
            .map(crate::policy::parse)
            .transpose()?;
        // A snapshot records a file's own client and backend: one taken with others would
        // make the suite fail on the file as written.
        let profile = self
            .profile
            .as_deref()
            .map(retrylab::conformance::ClientProfile::load)
            .transpose()
            .map_err(|errors| errors.to_string())?;
        if self.update_snapshots && (backend.is_some() || client.is_some() || profile.is_some()) {
            return Err(
                "--update-snapshots records each file as written: it cannot be \
                        combined with --backend, --client or --profile"
                    .to_owned(),
            );
        }
        let snapshots = match (self.update_snapshots, &self.snapshot_dir) {
            (false, _) => None,
            (true, Some(dir)) => Some(Snapshots::new(dir.clone())),
            (true, None) => {
                let dir = PathBuf::from(DEFAULT_SNAPSHOT_DIR);
                if !dir.is_dir() {
                    return Err(format!(
                        "--update-snapshots: {DEFAULT_SNAPSHOT_DIR} does not exist here, so no \
                         suite compares snapshots there; name the folder the scenario suite \
                         reads with --snapshot-dir (from the repository root, \
                         tests/tests/snapshots)"
                    ));
                }
                Some(Snapshots::new(dir))
            }
        };
        Ok(RunOptions {
            seeds,
            format: self.format,
            backend,
            client,
            profile,
            snapshots,
        })
    }
}

/// Runs every file `args` names, prints them in the format asked, and says how it went in
/// the exit status.
pub(crate) fn run(args: &RunArgs) -> ExitCode {
    // A seed override that is not a seed would otherwise fail every run the same way.
    if let Err(error) = retrylab::overrides::seed() {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    let mut options = match args.options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let files = match files(&args.paths) {
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
        rows.extend(run_file(file, &mut options, &clients));
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
    match options.format {
        Format::Json => {
            let runs: Result<Vec<serde_json::Value>, String> =
                rows.iter_mut().filter_map(|r| r.json.take()).collect();
            let runs = match runs {
                Ok(runs) => runs,
                Err(error) => {
                    eprintln!("error: writing JSON: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let document = serde_json::json!({
                "runs": runs,
                "totals": {
                    "passed": passed,
                    "failed": failed,
                    "invalid": invalid,
                    "skipped": skipped,
                },
            });
            match serde_json::to_string_pretty(&document) {
                Ok(text) => {
                    let _ = writeln!(out, "{text}");
                }
                Err(error) => {
                    eprintln!("error: writing JSON: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        Format::Junit => match crate::junit::render(&rows) {
            Ok(xml) => {
                let _ = writeln!(out, "{xml}");
            }
            Err(error) => {
                eprintln!("error: writing JUnit XML: {error}");
                return ExitCode::FAILURE;
            }
        },
        Format::Human => human(&mut out, &rows, [passed, failed, invalid, skipped]),
    }
    let mut snapshots_failed = false;
    if let Some(snapshots) = &options.snapshots {
        // On stderr: stdout holds the report in the format asked for.
        for line in snapshots.lines() {
            eprintln!("{line}");
        }
        snapshots_failed = snapshots.failed();
    }
    exit_code(passed, failed + invalid + usize::from(snapshots_failed))
}

/// The table, the summaries of failures, the views of passed fleets, and the counts.
fn human(out: &mut impl std::io::Write, rows: &[Row], counts: [usize; 4]) {
    let [passed, failed, invalid, skipped] = counts;
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for row in rows {
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
    for row in rows {
        if let Some(lines) = &row.fleet {
            let _ = writeln!(out, "\n--- {} (fleet)", row.name);
            for line in lines {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} runs: {passed} passed, {failed} failed, {invalid} invalid, {skipped} skipped",
        rows.len(),
    );
}

/// 0 when every run that ran passed and at least one ran; 1 when a run failed or a file is
/// invalid, or when nothing ran at all (every scenario skipped: nothing was verified).
fn exit_code(passed: usize, failed: usize) -> ExitCode {
    if failed == 0 && passed > 0 {
        ExitCode::SUCCESS
    } else {
        if failed == 0 {
            eprintln!(
                "error: no scenario ran (every one was skipped): nothing was verified; run \
                 scenarios with `client: {{ custom: ... }}` with `cargo test` (a \
                 `scenario_main!` suite that registers their clients), or here with \
                 `--client <policy>`; install a build with the feature a skipped line names \
                 (`cargo install retrylab --features cli,<feature>`)"
            );
        }
        ExitCode::FAILURE
    }
}
