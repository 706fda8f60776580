//! What one case gives, as one line, worked out in the child process: the case is loaded
//! as `retrylab check` loads it and, when it loads, run as `retrylab run --seeds` runs it.
//!
//! - `rejected: <the first error>[ (+N more errors)]`, or `rejected (no location): ...`
//!   for an error without a line and column;
//! - `ran: <passed | failed | not judged> <how the run ended> ...`, with the checks that did
//!   not pass, the attempts and calls, and the warnings;
//! - `loaded, not run: ...` for a `custom:` client, which only Rust code can register (the
//!   command line skips it the same way).

use std::path::Path;

use retrylab::scenario::{ClientSpec, Millis, Scenario, ScenarioErrors};
use retrylab::suite::Clients;
use retrylab::{Judgement, Report, RunEnd};

/// The most characters of one outcome line: enough for a message that lists every top-level
/// key and ends with a did-you-mean, while a case with a 1 MB name does not put a megabyte
/// into the golden table.
const MAX_LINE_CHARS: usize = 480;

/// At most this many checks are named on a `ran:` line.
const MAX_CHECKS_NAMED: usize = 6;

/// The outcome line of the case at `path`, whose errors name it `display`; `wall` is the
/// `limits.wall` given to a case that sets none (`None`: the default of 60 s).
pub(crate) fn outcome(path: &Path, display: &str, wall: Option<Millis>) -> String {
    let mut scenario = match Scenario::load_as(path, display) {
        Ok(scenario) => scenario,
        Err(errors) => return printable(&rejected(&errors), MAX_LINE_CHARS),
    };
    // `retrylab check` prints the static warnings after loading: finding them is part of
    // checking a file, so a case that hangs there must hang here too.
    let _ = scenario.warnings();
    if let ClientSpec::Custom(name) = &scenario.client {
        return printable(
            &format!("loaded, not run: the client is `custom: {name}`"),
            MAX_LINE_CHARS,
        );
    }
    if scenario.limits.wall.is_none() {
        scenario.limits.wall = wall;
    }
    // Every seed of a sweep, as `retrylab run --seeds` and `scenario_main!` list them.
    let seeds: Vec<u64> = match &scenario.seeds {
        Some(range) => range.iter().collect(),
        None => match scenario.effective_seed() {
            Ok(seed) => vec![seed],
            Err(error) => return printable(&format!("not runnable: {error}"), MAX_LINE_CHARS),
        },
    };
    let clients = Clients::new();
    let mut runs: Vec<(u64, String)> = Vec::with_capacity(seeds.len());
    for &seed in &seeds {
        let line = match clients.run(&scenario, seed) {
            Ok(report) => ran(&report),
            Err(error) => format!("not runnable: {error}"),
        };
        runs.push((seed, line));
    }
    printable(&seeds_together(&runs), MAX_LINE_CHARS)
}

/// The first error, and how many follow it.
fn rejected(errors: &ScenarioErrors) -> String {
    let Some(first) = errors.iter().next() else {
        return "rejected: (an empty list of errors)".to_owned();
    };
    let located = if first.line > 0 {
        "rejected"
    } else {
        "rejected (no location)"
    };
    let more = match errors.len() - 1 {
        0 => String::new(),
        1 => " (+1 more error)".to_owned(),
        n => format!(" (+{n} more errors)"),
    };
    format!("{located}: {first}{more}")
}

/// One run: its judgement and ending, the checks that did not pass, and its size.
fn ran(report: &Report) -> String {
    let verdicts = report.verdicts();
    let judgement = if report.passed() {
        "passed"
    } else if verdicts.iter().any(|v| v.judgement == Judgement::Failed) {
        "failed"
    } else {
        "not judged"
    };
    let end = report.end();
    let mut line = format!(
        "ran: {judgement} {}",
        end.verdict_name().unwrap_or("completed")
    );
    let unmet: Vec<String> = report
        .failures()
        .map(|v| format!("{} {}", v.check, v.judgement.mark()))
        .collect();
    if !unmet.is_empty() {
        let shown = unmet.len().min(MAX_CHECKS_NAMED);
        line += &format!(" [{}", unmet[..shown].join(", "));
        if unmet.len() > shown {
            line += &format!(", +{} more", unmet.len() - shown);
        }
        line += "]";
    }
    // How far a run abandoned at the wall limit got depends on the machine: leave it out.
    if *end != RunEnd::WallLimit {
        let trace = report.trace();
        line += &format!(
            ", {}, {}, ended at {}",
            count(trace.attempts.len(), "attempt"),
            count(trace.calls.len(), "call"),
            retrylab::trace::seconds(trace.end_ms)
        );
    }
    if !report.warnings().is_empty() {
        line += &format!(", {}", count(report.warnings().len(), "warning"));
    }
    // Why a run could not start or broke down is the point of the line.
    if matches!(end, RunEnd::Panicked | RunEnd::NotRunnable) {
        if let Some(v) = report
            .failures()
            .find(|v| v.check == end.verdict_name().unwrap_or(""))
        {
            line += &format!(": {}", v.message.lines().next().unwrap_or(""));
        }
    }
    line
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// One line for every seed of a sweep: the first seed's, and each seed that differs from it.
fn seeds_together(runs: &[(u64, String)]) -> String {
    match runs {
        [] => "ran: no seed".to_owned(),
        [(_, line)] => line.clone(),
        [(first_seed, first), rest @ ..] => {
            let mut line = format!("{} seeds; seed {first_seed}: {first}", runs.len());
            let differing: Vec<&(u64, String)> = rest.iter().filter(|(_, l)| l != first).collect();
            for (seed, other) in differing.iter().take(2) {
                line += &format!("; seed {seed}: {other}");
            }
            if differing.len() > 2 {
                line += &format!("; {} more seeds differ", differing.len() - 2);
            }
            line
        }
    }
}

/// `text` on one line that shows what it holds: control and invisible characters (NUL, a
/// line break, a byte-order mark, a zero-width space, a direction override) escaped as
/// `\u{..}`, and at most `max` characters, with a note of how many were cut.
pub(crate) fn printable(text: &str, max: usize) -> String {
    let mut out = String::new();
    let total = text.chars().count();
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            out += &format!("... (+{} chars)", total - shown);
            break;
        }
        if invisible(c) {
            out += &format!("\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that do not show, or move what follows, in a terminal or a review.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}')
}
