//! `client_process`: the verdict every run of a command client gets on its processes. A
//! program that never started, never sent a request, was killed at its timeout or left
//! processes behind says nothing about retries: the run fails, naming the process, whatever
//! else passed.

use crate::report::{Finding, ProcessExit, ProcessRun, Verdict};

/// The verdict on `processes`, the processes of a command client's run.
pub(super) fn check(processes: &[ProcessRun]) -> Verdict {
    let Some(first) = processes.first() else {
        return Verdict::fail(
            "client_process",
            "no process of the command ran: the run ended before its first call",
        );
    };
    let findings: Vec<Finding> = processes.iter().filter_map(finding).collect();
    if findings.is_empty() {
        let codes: Vec<String> = processes.iter().map(|p| p.exit.to_string()).collect();
        return Verdict::pass(
            "client_process",
            format!(
                "{} process(es) of `{}` sent requests and exited on their own ({})",
                processes.len(),
                first.argv.first().map_or("", String::as_str),
                tally(&codes)
            ),
        );
    }
    let message = findings
        .iter()
        .take(3)
        .map(|f| f.message.clone())
        .collect::<Vec<_>>()
        .join("; ");
    let more = findings.len().saturating_sub(3);
    let message = if more > 0 {
        format!("{message}; and {more} more")
    } else {
        message
    };
    Verdict::fail("client_process", message).with_findings(findings)
}

/// What is wrong with `process`, if anything.
fn finding(process: &ProcessRun) -> Option<Finding> {
    let what = match &process.exit {
        ProcessExit::NotStarted(why) => format!("{}: {why}", process.headline_argv()),
        ProcessExit::TimedOut { .. } | ProcessExit::Stopped => format!(
            "{} was {} with its process group, after {} request(s){}",
            process.headline_argv(),
            match process.exit {
                ProcessExit::Stopped => "killed when the run stopped",
                _ => "still running at its `timeout` and killed",
            },
            process.requests,
            last_words(process)
        ),
        _ if process.requests == 0 => format!(
            "{} ended ({}) before sending any request{}",
            process.headline_argv(),
            process.exit,
            last_words(process)
        ),
        _ if process.left_children => format!(
            "{} exited ({}) leaving processes of its group running, which retrylab killed: a \
             client must not outlive its call",
            process.headline_argv(),
            process.exit
        ),
        _ => return None,
    };
    Some(match process.call {
        Some(call) => Finding::call(process.client, call, what),
        None => Finding::from(what),
    })
}

/// `: it said "..."`: the last line of its standard error, or of its output.
fn last_words(process: &ProcessRun) -> String {
    [&process.stderr.text, &process.stdout.text]
        .into_iter()
        .find_map(|text| text.lines().rev().find(|l| !l.trim().is_empty()))
        .map(|line| {
            let line: String = line.chars().take(200).collect();
            format!(": it said \"{line}\"")
        })
        .unwrap_or_default()
}

/// `exit 0 ×3, exit 1`: how many processes ended each way, in the order first seen.
fn tally(codes: &[String]) -> String {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for code in codes {
        match counted.iter_mut().find(|(c, _)| c == code) {
            Some((_, n)) => *n += 1,
            None => counted.push((code, 1)),
        }
    }
    counted
        .iter()
        .map(|(code, n)| {
            if *n > 1 {
                format!("{code} ×{n}")
            } else {
                (*code).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
