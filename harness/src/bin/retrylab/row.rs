//! One file's runs under `retrylab run`: a row per seed, or one for a file that did not run.

use retrylab::internals::MAX_SWEEP_CALLS;
use retrylab::scenario::{ClientSpec, Scenario};
use retrylab::suite::{Clients, ScenarioFile};
use retrylab::{Judgement, Report};

use crate::files::{Load, load};
use crate::options::{Format, RunOptions, Seeds};

/// How one run of the command line ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
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
    pub(crate) fn mark(self) -> &'static str {
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

/// One run, or a file that did not run, as every format prints it.
pub(crate) struct Row {
    /// The file's name without extension, `@seed-<n>` added when the file runs several seeds.
    pub(crate) name: String,
    /// The file as given or found (`scenarios/http/429.yaml`).
    pub(crate) file: String,
    /// The seed of the run; none for a file that did not run.
    pub(crate) seed: Option<u64>,
    pub(crate) status: Status,
    pub(crate) detail: String,
    /// A failed run's report (verdicts, calls, timeline), an invalid file's errors.
    pub(crate) summary: Option<String>,
    /// A failed run's verdicts that did not pass, one line each (`FAIL outcome: ...`).
    pub(crate) failed: Vec<String>,
    /// A passed fleet's view (its outcomes and attempts per bucket), printed after the
    /// table; a failed run's summary has it already.
    pub(crate) fleet: Option<Vec<String>>,
    /// The run as JSON (with `--format json`), or why it could not be written as JSON.
    pub(crate) json: Option<Result<serde_json::Value, String>>,
    /// A command client's processes: each one's argv and exit, then its standard output
    /// (`.0`) and standard error (`.1`), for `JUnit`'s `system-out` and `system-err`.
    pub(crate) output: Option<(String, String)>,
}

impl Row {
    /// A file, or a seed of one, that did not run: skipped or invalid, and why.
    fn not_run(
        file: &ScenarioFile,
        name: String,
        status: Status,
        detail: String,
        why: String,
        json: bool,
    ) -> Row {
        Row {
            json: json.then(|| Ok(not_run_json(&name, status, &why))),
            name,
            file: file.display.clone(),
            seed: None,
            status,
            detail,
            // A skipped file's reason is its detail; only errors get a section of their own.
            summary: (status == Status::Invalid).then_some(why),
            failed: Vec::new(),
            fleet: None,
            output: None,
        }
    }
}

/// The scenario with the command line's `--backend` and `--client` in place of its own,
/// checked again as a whole: what the file asks of the old backend or client may not hold
/// for the new one.
fn overridden(
    mut scenario: Scenario,
    file: &ScenarioFile,
    options: &RunOptions,
) -> Result<Scenario, String> {
    let mut what = Vec::new();
    if let Some(backend) = options.backend {
        scenario.backend = backend;
        what.push(format!("--backend {}", backend.name()));
    }
    if let Some(client) = &options.client {
        scenario.client = client.clone();
        what.push(format!("--client {}", client.name()));
        // A command runs on real sockets: unless `--backend` said otherwise, the file runs
        // there, as one whose own client is a command does.
        if options.backend.is_none() {
            scenario.imply_backend();
        }
    }
    if let Some(profile) = &options.profile {
        let promise = file
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return profile
            .apply(&scenario, &promise)
            .map_err(|errors| format!("with --profile {}:\n{errors}", profile.name));
    }
    if what.is_empty() {
        return Ok(scenario);
    }
    scenario
        .validate()
        .map(|()| scenario)
        .map_err(|errors| format!("with {}:\n{errors}", what.join(" ")))
}

/// Runs `file` as `options` say: a row per seed, or one row for a file that did not run.
pub(crate) fn run_file(
    file: &ScenarioFile,
    options: &mut RunOptions,
    clients: &Clients,
) -> Vec<Row> {
    let scenario = match runnable(file, options, clients) {
        Ok(scenario) => scenario,
        Err(row) => return vec![*row],
    };
    let seeds = match seeds_of(file, options, &scenario) {
        Ok(seeds) => seeds,
        Err(row) => return vec![*row],
    };
    let json = options.format == Format::Json;
    let client = JudgedBy::of(&scenario, options);
    let many = seeds.start() != seeds.end();
    let mut rows = Vec::new();
    for seed in seeds {
        let name = if many {
            format!("{}@seed-{seed}", file.test_name)
        } else {
            file.test_name.clone()
        };
        let row = match clients.run(&scenario, seed) {
            Ok(report) => row_of(file, name, seed, &report, &client, options),
            Err(error) => {
                let detail = "not runnable".to_owned();
                let mut row =
                    Row::not_run(file, name, Status::Invalid, detail, error.to_string(), json);
                row.seed = Some(seed);
                row
            }
        };
        rows.push(row);
    }
    rows
}

/// The scenario of `file` with the command line's overrides, or the row that says why it
/// does not run here: invalid, lacking a feature of this build, or a custom client.
fn runnable(
    file: &ScenarioFile,
    options: &RunOptions,
    clients: &Clients,
) -> Result<Scenario, Box<Row>> {
    let json = options.format == Format::Json;
    let name = file.test_name.clone();
    let not_run = |status, detail: String, why: String| {
        Box::new(Row::not_run(file, name.clone(), status, detail, why, json))
    };
    let scenario = match load(file) {
        Ok(scenario) => scenario,
        // Sound, but not for this build (`backend: turmoil` without the feature).
        Err(Load::Lacking { feature, error }) => {
            let detail = format!(
                "skipped (needs retrylab's `{feature}` feature: `cargo install retrylab \
                 --features cli,{feature}`)"
            );
            return Err(not_run(Status::Skipped, detail, error));
        }
        // Every format prints an invalid file's errors one line each: JSON's `why`, the
        // JUnit error's text and the human summary alike.
        Err(Load::Invalid(errors)) => {
            let detail = "invalid scenario".to_owned();
            return Err(not_run(Status::Invalid, detail, errors.to_string()));
        }
    };
    let scenario = overridden(scenario, file, options).map_err(|error| {
        let detail = "invalid with the command line's overrides".to_owned();
        not_run(Status::Invalid, detail, error)
    })?;
    if let ClientSpec::Custom(client) = &scenario.client {
        let why = format!(
            "skipped: `retrylab run` cannot run the client `custom: {client}` (it lives in \
             Rust code): run the file with `cargo test`, in a `scenario_main!` suite that \
             registers `{client}`; or run it here with `--client <policy>`, or write \
             `client: {{ command: [...] }}` in the file"
        );
        let detail = format!("skipped (custom client: {client}; run it with `cargo test`)");
        return Err(not_run(Status::Skipped, detail, why));
    }
    // A tool this machine lacks: the file is sound, and runs where the tool is.
    if let Some(why) = clients.unavailable_here(&scenario) {
        let detail = format!("skipped (client {})", JudgedBy::of(&scenario, options).name);
        return Err(not_run(Status::Skipped, detail, format!("skipped: {why}")));
    }
    Ok(scenario)
}

/// The seeds `scenario` runs with, or the row that says why it cannot. Loading bounded the
/// file's own range (`retrylab::internals::MAX_SEEDS`); the command line's was bounded in
/// seeds, and its calls are bounded here as a file's are. The seeds are walked, never
/// collected, so nothing is spent per seed before a run.
fn seeds_of(
    file: &ScenarioFile,
    options: &RunOptions,
    scenario: &Scenario,
) -> Result<std::ops::RangeInclusive<u64>, Box<Row>> {
    let json = options.format == Format::Json;
    let not_runnable = |why: String| {
        let detail = "not runnable".to_owned();
        let name = file.test_name.clone();
        Box::new(Row::not_run(file, name, Status::Invalid, detail, why, json))
    };
    match (options.seeds, &scenario.seeds, scenario.effective_seed()) {
        (Seeds::Range(range), _, _) => {
            let o = &scenario.operation;
            let calls = u128::from(range.len()) * u128::from(o.calls) * u128::from(o.clients);
            if calls > u128::from(MAX_SWEEP_CALLS) {
                return Err(not_runnable(format!(
                    "{}: --seeds={range} makes {calls} calls ({} seeds of {} calls), at most \
                     {MAX_SWEEP_CALLS} in a sweep of seeds",
                    file.display,
                    range.len(),
                    u128::from(o.calls) * u128::from(o.clients)
                )));
            }
            Ok(range.iter())
        }
        (Seeds::Sweep, Some(range), _) => Ok(range.iter()),
        (_, _, Ok(seed)) => Ok(seed..=seed),
        (_, _, Err(error)) => Err(not_runnable(error.to_string())),
    }
}

/// Which client judged a file's runs, and where it came from: every output says so, since
/// a file that names no client runs with the default (`no_retry`) and may pass by it.
struct JudgedBy {
    /// The policy's name (`exponential`, `no_retry`, ...), or a command's argv.
    name: String,
    /// `file`, `default` (the file names none), `command line` (`--client`) or `profile`
    /// (`--profile`).
    source: &'static str,
}

impl JudgedBy {
    fn of(scenario: &Scenario, options: &RunOptions) -> JudgedBy {
        let source = if options.client.is_some() {
            "command line"
        } else if options.profile.is_some() {
            "profile"
        } else if scenario.locate("client").is_some() {
            "file"
        } else {
            "default"
        };
        JudgedBy {
            name: JudgedBy::name_of(&scenario.client),
            source,
        }
    }

    /// `exponential`, or a command's argv: `` command `node client.js {url}` ``.
    fn name_of(client: &ClientSpec) -> String {
        match client {
            ClientSpec::Command(command) => format!("command `{}`", command.command.join(" ")),
            client => client.name().to_owned(),
        }
    }

    /// `client exponential`, `client no_retry (the default: the file names none)`, ...
    fn text(&self) -> String {
        match self.source {
            "default" => format!("client {} (the default: the file names none)", self.name),
            "command line" => format!("client {} (--client)", self.name),
            "profile" => format!("client {} (--profile)", self.name),
            _ => format!("client {}", self.name),
        }
    }
}

/// The row of a run of `file` with `seed`, whose test is `name`; its snapshot recorded when
/// the command line asks for them.
fn row_of(
    file: &ScenarioFile,
    name: String,
    seed: u64,
    report: &Report,
    client: &JudgedBy,
    options: &mut RunOptions,
) -> Row {
    let json = options.format == Format::Json;
    let status = if report.passed() {
        Status::Passed
    } else {
        Status::Failed
    };
    if let Some(snapshots) = options.snapshots.as_mut() {
        snapshots.record(&file.display, report);
    }
    let trace = report.trace();
    let detail = format!(
        "{} attempts, {} calls, ended at {}, {}{}",
        trace.attempts.len(),
        trace.calls.len(),
        retrylab::trace::seconds(trace.end_ms),
        client.text(),
        // An `ok` with no check behind it says so.
        if report.verdicts().is_empty() {
            ", nothing judged (no `expect`)"
        } else {
            ""
        }
    );
    Row {
        json: json.then(|| report_json(&name, status, report, client)),
        output: process_output(report),
        summary: (status == Status::Failed).then(|| failure_summary(report, options.format)),
        failed: report
            .failures()
            .map(|v| format!("{} {}: {}", v.judgement.mark(), v.check, v.message))
            .collect(),
        fleet: (status == Status::Passed)
            .then(|| trace.fleet().map(|view| view.lines()))
            .flatten(),
        name,
        file: file.display.clone(),
        seed: Some(seed),
        status,
        detail,
    }
}

/// A failed run's summary, then the attempts its failed verdicts name, marked: coloured only
/// in the human table on a terminal without `NO_COLOR`, as `JUnit` XML would carry the
/// escapes as text.
fn failure_summary(report: &Report, format: Format) -> String {
    use std::io::IsTerminal as _;
    let colour = format == Format::Human
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let style = retrylab::diagnostic::Style::coloured(colour);
    let mut text = report.summary();
    if let Some(marked) = retrylab::diagnostic::offending_attempts(report, &style) {
        text.push_str(&marked);
    }
    text
}

/// `retrylab serve --format json`: the run as `retrylab run --format json` writes one, its
/// client the file's command, or the program outside that was served.
pub(crate) fn served_json(
    scenario: &Scenario,
    report: &Report,
) -> Result<serde_json::Value, String> {
    let client = match &scenario.client {
        ClientSpec::Command(_) => JudgedBy {
            name: JudgedBy::name_of(&scenario.client),
            source: "file",
        },
        _ => JudgedBy {
            name: "the program served".to_owned(),
            source: "outside",
        },
    };
    let status = if report.passed() {
        Status::Passed
    } else {
        Status::Failed
    };
    report_json(report.name(), status, report, &client)
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
/// the warnings, the report text (the snapshot's, stable across runs and machines), the
/// summary (the verdicts and the timeline as `Report::summary` writes them) and the trace.
fn report_json(
    name: &str,
    status: Status,
    report: &Report,
    client: &JudgedBy,
) -> Result<serde_json::Value, String> {
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
    let trace = report
        .trace()
        .to_json_value()
        .map_err(|error| format!("{name}: the trace as JSON: {error}"))?;
    Ok(serde_json::json!({
        "name": name,
        "seed": report.seed(),
        "status": status.name(),
        "passed": status == Status::Passed,
        "client": { "policy": client.name, "from": client.source },
        "processes": report.processes().iter().map(retrylab::ProcessRun::to_json).collect::<Vec<_>>(),
        "verdicts": verdicts,
        "warnings": report.warnings(),
        "report": report.snapshot_text(),
        // The report for people, as `retrylab serve` prints it: the verdicts, then the
        // timeline with its real instants (the snapshot text above hides them on `real`).
        "summary": report.summary(),
        "trace": trace,
    }))
}

/// A command client's processes as `JUnit` carries them: `system-out` has each process's
/// argv and exit, then what it printed; `system-err` what it printed to its error stream.
/// `None` for any other client.
fn process_output(report: &Report) -> Option<(String, String)> {
    if report.processes().is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut err = String::new();
    for process in report.processes() {
        let headline = process.headline();
        out.push_str(&format!("--- {headline}\n{}", process.stdout.shown()));
        err.push_str(&format!("--- {headline}\n{}", process.stderr.shown()));
    }
    Some((out, err))
}
