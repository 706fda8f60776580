//! `retrylab run`: run scenarios with their built-in clients, and print a table or JSON.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use retrylab::scenario::ClientSpec;
use retrylab::suite::{Clients, ScenarioFile};
use retrylab::{Judgement, Report};

use crate::files::{Load, files, load};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A table, and the timeline of every failure.
    Human,
    /// One JSON object per run, with the snapshot text (stable across runs and machines).
    Json,
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

pub(crate) fn run(paths: &[PathBuf], all_seeds: bool, format: Format) -> ExitCode {
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
                summary: (status == Status::Failed).then(|| report.summary()),
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
