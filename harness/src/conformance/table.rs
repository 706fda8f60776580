//! The conformance table: every profile against every promise, each cell the verdict of one
//! run, written as Markdown and compared with a committed copy.

use std::fmt::Write as _;
use std::path::Path;

use super::profile::ClientProfile;
use super::protocol::Protocol;
use crate::client::command::{Unusable, resolve};
use crate::report::Report;
use crate::scenario::{ClientSpec, Scenario};

/// How a client did on a promise.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The documentation makes the promise, and the client kept it.
    Conforms,
    /// The documentation makes the promise, and the client broke it: the failed check.
    Deviates(String),
    /// The documentation says nothing of it: what the client did is only observed.
    Silent,
    /// The promise is about another protocol than the one the client speaks (an HTTP
    /// client and a gRPC promise): not run.
    NotApplicable,
    /// The client could not run here (not installed): why.
    Skipped(String),
    /// The run could not judge the client (it did not start, the fault does not apply): why.
    Error(String),
}

impl Verdict {
    /// The word the table shows.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Conforms => "conforms",
            Verdict::Deviates(_) => "deviates",
            Verdict::Silent => "the docs are silent",
            Verdict::NotApplicable => "not applicable",
            Verdict::Skipped(_) => "skipped",
            Verdict::Error(_) => "error",
        }
    }
}

/// One client on one promise.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cell {
    /// The profile's name.
    pub client: String,
    /// The promise: its fault file's stem.
    pub promise: String,
    /// What the documentation says, quoted; `None` when it is silent.
    pub documented: Option<String>,
    /// What the client did: its attempts and how its call ended.
    pub observed: String,
    /// The timeline line that shows a deviation (the first attempt a failed check names).
    pub evidence: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
}

/// A promise of the suite: its name (the file's stem) and its fault file.
#[derive(Debug, Clone)]
pub struct Promise {
    /// The file's stem.
    pub name: String,
    /// The fault, client-independent.
    pub fault: Scenario,
}

/// Runs `profile` on `promise`, and says how it did.
pub fn cell(profile: &ClientProfile, promise: &Promise) -> Cell {
    let mut cell = Cell {
        client: profile.name.clone(),
        promise: promise.name.clone(),
        documented: profile.documented.promises.get(&promise.name).cloned(),
        observed: String::new(),
        evidence: None,
        verdict: Verdict::Silent,
    };
    if Protocol::of(&promise.fault) != profile.protocol {
        cell.verdict = Verdict::NotApplicable;
        return cell;
    }
    let scenario = match profile.apply(&promise.fault, &promise.name) {
        Ok(scenario) => scenario,
        Err(errors) => {
            cell.verdict = Verdict::Error(errors.to_string());
            return cell;
        }
    };
    let missing = profile.missing().map(|file| {
        format!(
            "`{file}` does not exist (install the suite's clients with tests/conformance/install)"
        )
    });
    if let Some(why) = missing.or_else(|| not_installed(&scenario)) {
        cell.verdict = Verdict::Skipped(why);
        return cell;
    }
    let report = scenario.run_builtin();
    cell.observed = observed(&report);
    let process = report
        .verdicts()
        .iter()
        .find(|v| v.check == "client_process" && !v.passed());
    cell.verdict = if let Some(process) = process {
        Verdict::Error(process.message.clone())
    } else if report.passed() {
        if cell.documented.is_some() {
            Verdict::Conforms
        } else {
            Verdict::Silent
        }
    } else if cell.documented.is_none() {
        // Silent docs judge nothing of the client; what failed is the file's own check.
        Verdict::Error(failed(&report))
    } else {
        cell.evidence = evidence(&report);
        Verdict::Deviates(failed(&report))
    };
    cell
}

/// Why the client of `scenario` is not installed here, if it is not: a program missing
/// from `PATH`, or a path that names nothing yet (an install step has not run).
fn not_installed(scenario: &Scenario) -> Option<String> {
    let ClientSpec::Command(command) = &scenario.client else {
        return None;
    };
    let cwd = command
        .cwd
        .as_deref()
        .map_or_else(|| Path::new("").to_path_buf(), Into::into);
    let path = std::env::var("PATH").ok();
    match resolve(command.program(), &cwd, path.as_deref()) {
        Ok(_) => None,
        Err(Unusable::NotOnPath(why) | Unusable::Bad(why)) => Some(format!(
            "{why} (install the suite's clients with tests/conformance/install)"
        )),
    }
}

/// `4 attempts, exit 1`: what the client did, in terms that hold from run to run.
fn observed(report: &Report) -> String {
    let attempts = report.trace().attempts.len();
    let exits: Vec<String> = report
        .processes()
        .iter()
        .map(|p| p.exit.to_string())
        .collect();
    if exits.is_empty() {
        format!("{attempts} attempts")
    } else {
        format!("{attempts} attempts, {}", exits.join(", "))
    }
}

/// The failed checks, by name.
fn failed(report: &Report) -> String {
    report
        .failures()
        .map(|v| v.check.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The timeline line of the first attempt a failed check names, with the check's finding.
fn evidence(report: &Report) -> Option<String> {
    let finding = report
        .failures()
        .flat_map(|v| v.findings.iter())
        .find(|f| f.attempt.is_some())
        .or_else(|| report.failures().flat_map(|v| v.findings.iter()).next())?;
    let line = finding
        .call
        .zip(finding.attempt)
        .and_then(|(call, attempt)| {
            let timeline = report.trace().timeline();
            let wanted = format!("#{attempt} ");
            let lines: Vec<&str> = timeline.lines().collect();
            lines
                .iter()
                .filter(|l| l.contains(&wanted))
                .nth(call.call as usize)
                .or_else(|| lines.iter().find(|l| l.contains(&wanted)))
                .map(|l| l.trim().to_owned())
        });
    Some(match line {
        Some(line) => format!("{} (`{line}`)", finding.message),
        None => finding.message.clone(),
    })
}

/// The table as Markdown: a matrix of verdicts (`n/a` where the promise is of another
/// protocol than the client's), then a section per client with each applicable promise's
/// documented behaviour, observed behaviour, verdict and evidence.
pub fn markdown(profiles: &[ClientProfile], promises: &[Promise], cells: &[Cell]) -> String {
    let mut out = String::new();
    let mark = |v: &Verdict| match v {
        Verdict::Conforms => "conforms",
        Verdict::Deviates(_) => "**deviates**",
        Verdict::Silent => "silent",
        Verdict::NotApplicable => "n/a",
        Verdict::Skipped(_) => "skipped",
        Verdict::Error(_) => "error",
    };
    let _ = write!(out, "| client | language | library |");
    for promise in promises {
        let _ = write!(out, " {} |", promise.name);
    }
    out.push_str("\n|---|---|---|");
    out.push_str(&"---|".repeat(promises.len()));
    out.push('\n');
    for profile in profiles {
        let _ = write!(
            out,
            "| {} | {} | {} |",
            profile.name, profile.language, profile.library
        );
        for promise in promises {
            let verdict = cells
                .iter()
                .find(|c| c.client == profile.name && c.promise == promise.name)
                .map_or("", |c| mark(&c.verdict));
            let _ = write!(out, " {verdict} |");
        }
        out.push('\n');
    }
    for profile in profiles {
        let _ = write!(
            out,
            "\n### {}\n\n{} ({}).\n\n| promise | documented | observed | verdict |\n|---|---|---|---|\n",
            profile.name, profile.library, profile.language
        );
        // A promise of another protocol is only an `n/a` in the matrix: a row saying so
        // for each would bury the rows that say something.
        let applicable = cells
            .iter()
            .filter(|c| c.client == profile.name && c.verdict != Verdict::NotApplicable);
        for cell in applicable {
            let verdict = match &cell.verdict {
                Verdict::Conforms | Verdict::Silent | Verdict::NotApplicable => {
                    cell.verdict.word().to_owned()
                }
                Verdict::Deviates(checks) => format!(
                    "**deviates** ({checks}): {}",
                    cell.evidence.as_deref().unwrap_or("")
                ),
                Verdict::Skipped(why) | Verdict::Error(why) => {
                    format!("{}: {why}", cell.verdict.word())
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                cell.promise,
                table_text(cell.documented.as_deref().unwrap_or("(silent)")),
                table_text(&cell.observed),
                table_text(&verdict)
            );
        }
    }
    out
}

/// `text` fit for a Markdown table cell: one line, no bare `|`.
fn table_text(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The (client, promise, verdict word, attempts) of every row of the per-client sections of
/// a table written by [`markdown`]: what a stale table is judged on. Timings, which real
/// time moves from run to run, are left out.
pub fn verdicts_of(table: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut client = None;
    for line in table.lines() {
        if let Some(name) = line.strip_prefix("### ") {
            client = Some(name.trim().to_owned());
            continue;
        }
        let Some(client) = &client else { continue };
        let cols: Vec<&str> = line.split(" | ").collect();
        if cols.len() < 4 || line.starts_with("| promise") || line.starts_with("|---") {
            continue;
        }
        let promise = cols[0].trim_start_matches("| ").to_owned();
        let attempts = cols[2].split(',').next().unwrap_or("").to_owned();
        let word = cols[3]
            .trim_end_matches(" |")
            .trim_start_matches("**")
            .split([' ', ':', '*'])
            .next()
            .unwrap_or("")
            .to_owned();
        out.push((format!("{client} / {promise}"), attempts, word));
    }
    out
}
