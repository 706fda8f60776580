//! A failed run's offending attempts: the attempts of each call a failed verdict names, the
//! attempt it names marked, and what the verdict found under it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::{Judgement, Report};
use crate::trace::{Attempt, AttemptOutcome};

use super::Style;

/// The most calls shown, and the most attempts of a call shown whole: past that, only the
/// marked attempts and their neighbours.
const MAX_CALLS: usize = 5;
const MAX_WHOLE: usize = 30;

/// ANSI colours, only when the style asks for them.
const RED: &str = "\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const YELLOW: &str = "\u{1b}[33m";
const MAGENTA: &str = "\u{1b}[35m";
const BOLD: &str = "\u{1b}[1m";
const RESET: &str = "\u{1b}[0m";

/// What a failed verdict found about a call: the attempt (0 for the call as a whole), the
/// check and the message.
type Named<'a> = (u32, &'a str, &'a str);

/// The failed verdicts of `report` as timelines: for each call a failed verdict's finding
/// names (the first few), its attempts, each coloured by outcome when `style` has colour,
/// the attempt a finding names marked `>`, and under it the check and what it found; a
/// finding about the call as a whole is shown under its name. `None` when no failed
/// verdict names a call.
///
/// ```
/// use retrylab::diagnostic::{Style, offending_attempts};
/// use retrylab::scenario::Scenario;
///
/// let yaml = "version: 1\nname: x\n\
///             endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
///             operation: { endpoint: api }\n\
///             client: { fixed: { delay: 100ms, max_attempts: 3 } }\n\
///             expect: { conforms_to: { fixed: { delay: 200ms } } }\n";
/// let report = Scenario::from_yaml_str(yaml, "x.yaml").unwrap().run_builtin();
/// let text = offending_attempts(&report, &Style::plain()).unwrap();
/// assert!(text.contains("\n    > t=0.1"), "{text}");
/// assert!(text.contains("        conforms_to: call 0: attempt 2 started"), "{text}");
/// ```
pub fn offending_attempts(report: &Report, style: &Style) -> Option<String> {
    let mut named: BTreeMap<(u32, u32), Vec<Named<'_>>> = BTreeMap::new();
    for verdict in report
        .verdicts()
        .iter()
        .filter(|v| v.judgement == Judgement::Failed)
    {
        for finding in &verdict.findings {
            if let Some(call) = finding.call {
                named.entry((call.client, call.call)).or_default().push((
                    finding.attempt.unwrap_or(0),
                    &verdict.check,
                    &finding.message,
                ));
            }
        }
    }
    if named.is_empty() {
        return None;
    }
    let trace = report.trace();
    let mut out = String::from("offending attempts:\n");
    for (&(client, call), findings) in named.iter().take(MAX_CALLS) {
        let name = if client == 0 {
            format!("call {call}")
        } else {
            format!("client {client} call {call}")
        };
        let _ = writeln!(out, "  {name}");
        for (_, check, message) in findings.iter().filter(|f| f.0 == 0) {
            let _ = writeln!(out, "        {}", said(check, message, style));
        }
        let attempts: Vec<&Attempt> = trace
            .attempts
            .iter()
            .filter(|a| a.client_id == client && a.call_id == call)
            .collect();
        let marked = |a: &Attempt| findings.iter().any(|f| f.0 == a.n);
        let near = |i: usize| {
            attempts.len() <= MAX_WHOLE
                || attempts[i.saturating_sub(1)..(i + 2).min(attempts.len())]
                    .iter()
                    .any(|a| marked(a))
        };
        let mut skipped = false;
        for (i, a) in attempts.iter().enumerate() {
            if !near(i) {
                if !skipped {
                    out.push_str("      ...\n");
                }
                skipped = true;
                continue;
            }
            skipped = false;
            let line = crate::scenario::visible(&trace.attempt_line(a)).into_owned();
            let (mark, line) = match (marked(a), style.colour) {
                (true, true) => (
                    format!("{BOLD}{RED}>{RESET}"),
                    format!("{BOLD}{}{RESET}", coloured(a, &line)),
                ),
                (true, false) => (">".to_owned(), line),
                (false, true) => (" ".to_owned(), coloured(a, &line)),
                (false, false) => (" ".to_owned(), line),
            };
            let _ = writeln!(out, "    {mark} {line}");
            for (_, check, message) in findings.iter().filter(|f| f.0 == a.n && f.0 > 0) {
                let _ = writeln!(out, "        {}", said(check, message, style));
            }
        }
    }
    if named.len() > MAX_CALLS {
        let _ = writeln!(out, "  ... {} more calls", named.len() - MAX_CALLS);
    }
    Some(out)
}

/// `check: message`, the check's name in red when coloured.
fn said(check: &str, message: &str, style: &Style) -> String {
    let message = crate::scenario::visible(message);
    if style.colour {
        format!("{RED}{check}{RESET}: {message}")
    } else {
        format!("{check}: {message}")
    }
}

/// `line` in the colour of how the attempt ended.
fn coloured(a: &Attempt, line: &str) -> String {
    let colour = match a.outcome {
        AttemptOutcome::Status(s) if s < 400 => GREEN,
        AttemptOutcome::Status(s) if s < 500 => YELLOW,
        AttemptOutcome::Status(_) => RED,
        _ => MAGENTA,
    };
    format!("{colour}{line}{RESET}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn run(expect: &str) -> Report {
        let yaml = format!(
            "version: 1\nname: x\nendpoints: {{ api: {{ script: [ {{ status: 503, times: 2 }}, \
             {{ status: 200 }} ] }} }}\noperation: {{ endpoint: api }}\nclient: {{ fixed: {{ \
             delay: 100ms, max_attempts: 3 }} }}\nexpect: {expect}\n"
        );
        Scenario::from_yaml_str(&yaml, "x.yaml")
            .expect("a sound scenario")
            .run_builtin()
    }

    #[test]
    fn colour_only_when_asked_and_nothing_for_a_pass() {
        let failed = run("{ conforms_to: { fixed: { delay: 200ms } } }");
        let plain = offending_attempts(&failed, &Style::plain()).expect("a finding on call 0");
        assert!(!plain.contains('\u{1b}'), "{plain}");
        assert_eq!(plain.matches("\n    > ").count(), 2, "{plain}");
        let coloured = offending_attempts(&failed, &Style::coloured(true)).expect("the same");
        assert!(
            coloured.contains(&format!("{BOLD}{RED}>{RESET}")),
            "{coloured}"
        );
        assert!(coloured.contains(GREEN), "the 200 in green: {coloured}");
        let passed = run("{ conforms_to: { fixed: { delay: 100ms } } }");
        assert!(passed.passed(), "{}", passed.summary());
        assert_eq!(offending_attempts(&passed, &Style::plain()), None);
    }
}
