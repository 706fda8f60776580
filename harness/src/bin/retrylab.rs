//! `retrylab`: run and check scenario files from the command line.
//!
//! ```text
//! retrylab run scenarios                 # every scenario, a table, timelines of failures
//! retrylab run scenarios/http --format json
//! retrylab check scenarios/http/429.yaml # parse and validate only; warn of contradictions
//! ```

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use retrylab::scenario::{ClientSpec, Scenario};
use retrylab::suite::{Clients, ScenarioFile, scenario_files};

#[derive(Parser)]
#[command(
    name = "retrylab",
    version,
    about = "Deterministic fault-injection tests for retry clients"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios (files or directories) with their built-in clients.
    Run {
        /// Scenario files or directories (searched recursively for *.yaml).
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
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table, and the timeline of every failure.
    Human,
    /// One JSON object per run, with the snapshot text (stable across runs and machines).
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            paths,
            seeds,
            format,
        } => run(&paths, seeds, format),
        Command::Check { paths } => check(&paths),
    }
}

/// Every scenario file named by `paths`, in a stable order.
fn files(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = scenario_files(path)
                .map_err(|e| format!("{}: cannot read the directory: {e}", path.display()))?;
            out.extend(found);
        } else if path.is_file() {
            let display = path.display().to_string();
            let test_name = path.with_extension("").display().to_string();
            out.push(ScenarioFile {
                path: path.clone(),
                display,
                test_name,
            });
        } else {
            return Err(format!(
                "{}: no such file or directory (give scenario files or folders of them)",
                path.display()
            ));
        }
    }
    Ok(out)
}

fn load(file: &ScenarioFile) -> Result<Scenario, String> {
    let source = std::fs::read_to_string(&file.path)
        .map_err(|e| format!("{}: cannot read: {e}", file.display))?;
    Scenario::from_yaml_str(&source, &file.display).map_err(|e| e.to_string())
}

fn check(paths: &[PathBuf]) -> ExitCode {
    let files = match files(paths) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let mut failed = 0;
    for file in &files {
        // Loading runs the validation a run does, "not supported yet" included.
        match load(file).map(|s| s.warnings()) {
            Ok(warnings) => {
                println!("ok    {}", file.display);
                for warning in warnings {
                    println!("warning: {warning}");
                }
            }
            Err(error) => {
                failed += 1;
                println!("error {}", file.display);
                eprintln!("{error}");
            }
        }
    }
    println!("{} files, {} with errors", files.len(), failed);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

struct Row {
    name: String,
    status: &'static str,
    detail: String,
    summary: Option<String>,
    json: Option<String>,
}

fn run(paths: &[PathBuf], all_seeds: bool, format: Format) -> ExitCode {
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
    let failed = rows.iter().filter(|r| r.status == "FAIL").count();
    let skipped = rows.iter().filter(|r| r.status == "skip").count();
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let _ = writeln!(out, "[");
            let jsons: Vec<&str> = rows.iter().filter_map(|r| r.json.as_deref()).collect();
            let _ = writeln!(out, "{}", jsons.join(",\n"));
            let _ = writeln!(out, "]");
        }
        Format::Human => {
            let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
            for row in &rows {
                let _ = writeln!(
                    out,
                    "{:<4}  {:<width$}  {}",
                    row.status, row.name, row.detail
                );
            }
            for row in rows.iter().filter(|r| r.status == "FAIL") {
                if let Some(summary) = &row.summary {
                    let _ = writeln!(out, "\n--- {}\n{summary}", row.name);
                }
            }
            let _ = writeln!(
                out,
                "\n{} runs: {} passed, {failed} failed, {skipped} skipped",
                rows.len(),
                rows.len() - failed - skipped
            );
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_file(file: &ScenarioFile, all_seeds: bool, clients: &Clients, format: Format) -> Vec<Row> {
    let scenario = match load(file) {
        Ok(scenario) => scenario,
        Err(error) => {
            return vec![Row {
                name: file.test_name.clone(),
                status: "FAIL",
                detail: "invalid scenario".to_owned(),
                summary: Some(error.clone()),
                json: Some(json_row(&file.test_name, 0, false, &error)),
            }];
        }
    };
    if let ClientSpec::Custom(name) = &scenario.client {
        return vec![Row {
            name: file.test_name.clone(),
            status: "skip",
            detail: format!("skipped (custom client: {name})"),
            summary: None,
            json: Some(json_row(
                &file.test_name,
                scenario.seed,
                true,
                &format!("skipped (custom client: {name})"),
            )),
        }];
    }
    let seeds: Vec<u64> = match (&scenario.seeds, all_seeds) {
        (Some(range), true) => range.iter().collect(),
        _ => vec![scenario.effective_seed()],
    };
    let many = seeds.len() > 1;
    seeds
        .into_iter()
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
                        json: Some(json_row(&name, seed, false, &error)),
                        name,
                        status: "FAIL",
                        detail: "not runnable".to_owned(),
                        summary: Some(error),
                    };
                }
            };
            let passed = report.passed();
            let trace = report.trace();
            let detail = format!(
                "{} attempts, {} calls, ended at {}",
                trace.attempts.len(),
                trace.calls.len(),
                retrylab::trace::seconds(trace.end_ms)
            );
            Row {
                json: (format == Format::Json).then(|| {
                    json_row_with_trace(
                        &name,
                        seed,
                        passed,
                        &report.snapshot_text(),
                        Some(report.trace()),
                    )
                }),
                summary: (!passed).then(|| report.summary()),
                name,
                status: if passed { "ok" } else { "FAIL" },
                detail,
            }
        })
        .collect()
}

fn json_row(name: &str, seed: u64, passed: bool, text: &str) -> String {
    json_row_with_trace(name, seed, passed, text, None)
}

/// One run as JSON: its name, seed, verdict, report text and, when it ran, its trace.
fn json_row_with_trace(
    name: &str,
    seed: u64,
    passed: bool,
    text: &str,
    trace: Option<&retrylab::trace::Trace>,
) -> String {
    let trace = trace
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t.to_json()).ok())
        .unwrap_or(serde_json::Value::Null);
    let value = serde_json::json!({
        "name": name,
        "seed": seed,
        "passed": passed,
        "report": text,
        "trace": trace,
    });
    value.to_string()
}
