//! Snapshots: a report rendered as stable, reviewable text, asserted with insta.
//!
//! Long runs are compacted: consecutive attempts of a call that read the same apart from
//! their instant and number become one line with a count, so a 100,000-attempt trace stays
//! a few lines long. A run on the real backend (its trace header says `backend: real`) shows
//! every instant and duration as `[real]`, in verdicts too, and every local port as `[port]`
//! (`trace/redaction.rs`), so its snapshot is the same from run to run. The snapshot lives in `$CARGO_MANIFEST_DIR/tests/snapshots` of the crate
//! whose test runs it, under an explicit name (insta would otherwise resolve paths inside
//! retrylab's own source).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::Report;
use crate::trace::instants::Instants;
use crate::trace::redaction;
use crate::trace::{ConnEventKind, Side, Trace};

/// Connection events and effects are listed one by one up to this many; past it, counted.
const LIST_LIMIT: usize = 100;

/// The snapshot text of a report.
pub(crate) fn render(report: &Report) -> String {
    let trace = &report.trace;
    let instants = Instants::of(trace);
    let mut out = String::new();
    // What the file and the client wrote shows escaped where it holds a control character
    // (unchanged otherwise), so a snapshot never carries one to a terminal or a diff.
    let visible = crate::scenario::visible;
    let _ = writeln!(out, "scenario: {}", visible(&report.name));
    for (key, value) in &trace.header {
        // A real run's wall clock is the machine's: the same from run to run only redacted.
        let value = match instants {
            Instants::Redacted if key == crate::trace::EPOCH_KEY => crate::trace::instants::REAL,
            _ => value,
        };
        let _ = writeln!(out, "{key}: {value}");
    }
    out.push_str("calls:\n");
    for call in &trace.calls {
        let _ = writeln!(out, "  {}", visible(&call.line_with(instants)));
    }
    out.push_str("attempts:\n");
    for line in trace.compact_timeline_with(instants) {
        let _ = writeln!(out, "  {}", visible(&line));
    }
    if !trace.faults.is_empty() {
        out.push_str("faults:\n");
        for line in trace.fault_lines_with(instants) {
            let _ = writeln!(out, "  {line}");
        }
    }
    // Only a fleet's (more than one client), so other snapshots read as before.
    if let Some(fleet) = trace.fleet() {
        out.push_str("fleet:\n");
        for line in fleet.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    connections(&mut out, trace, instants);
    effects(&mut out, trace, instants);
    if !trace.messages.is_empty() {
        out.push_str("messages:\n");
        if trace.messages.len() <= LIST_LIMIT {
            for line in trace.message_lines_with(instants, usize::MAX) {
                let _ = writeln!(out, "  {line}");
            }
        } else {
            let _ = writeln!(out, "  {} messages", trace.messages.len());
        }
    }
    late_requests(&mut out, trace, instants);
    out.push_str("verdicts:\n");
    for verdict in report.verdicts() {
        let mark = verdict.judgement.mark();
        let message = crate::scenario::visible(&verdict.message);
        let message = match instants {
            Instants::Exact => message.into_owned(),
            Instants::Redacted => redaction::durations(&message),
        };
        let _ = writeln!(out, "  {mark} {}: {message}", verdict.check);
    }
    if !report.warnings.is_empty() {
        out.push_str("warnings:\n");
        for warning in &report.warnings {
            let _ = writeln!(out, "  {warning}");
        }
    }
    let _ = writeln!(out, "end: t={}", instants.show(trace.end_ms));
    match instants {
        Instants::Exact => out,
        // Ports show up wherever a client or the run quotes a URL: in call results, verdicts
        // and warnings alike.
        Instants::Redacted => redaction::ports(&out),
    }
}

/// The connection events, or a count of each kind past [`LIST_LIMIT`].
fn connections(out: &mut String, trace: &Trace, instants: Instants) {
    out.push_str("connections:\n");
    if trace.connections.len() <= LIST_LIMIT {
        for event in &trace.connections {
            let _ = writeln!(
                out,
                "  t={}  conn {}  {}  {}",
                instants.show(event.at_ms),
                event.conn_id,
                trace.name(event.endpoint),
                event_text(event.kind)
            );
        }
    } else {
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for event in &trace.connections {
            let text = kind_text(event.kind);
            match counts.iter_mut().find(|(k, _)| *k == text) {
                Some((_, n)) => *n += 1,
                None => counts.push((text, 1)),
            }
        }
        for (kind, n) in counts {
            let _ = writeln!(out, "  {kind}: {n}");
        }
    }
}

/// The effects, or their count past [`LIST_LIMIT`].
fn effects(out: &mut String, trace: &Trace, instants: Instants) {
    out.push_str("effects:\n");
    if trace.effects.len() <= LIST_LIMIT {
        for effect in &trace.effects {
            let _ = write!(
                out,
                "  t={}  {}",
                instants.show(effect.at_ms),
                trace.name(effect.endpoint)
            );
            if let Some(call) = effect.call_id {
                if effect.client_id != 0 {
                    let _ = write!(out, "  client {}", effect.client_id);
                }
                let _ = write!(out, "  call {call}");
            }
            if let Some(attempt) = effect.attempt_id {
                let n = trace
                    .attempts
                    .iter()
                    .find(|a| a.id == attempt)
                    .map_or(0, |a| a.n);
                let _ = write!(out, "  attempt #{n}");
            }
            if let Some(key) = effect.key {
                let _ = write!(out, "  key {}", trace.name(key));
            }
            out.push('\n');
        }
    } else {
        let _ = writeln!(out, "  {} effects", trace.effects.len());
    }
}

/// Requests that arrived after their call returned, and rebuilt attempts no call owns.
fn late_requests(out: &mut String, trace: &Trace, instants: Instants) {
    if !trace.late_requests.is_empty() {
        out.push_str("late requests:\n");
        for late in &trace.late_requests {
            // `client 2 call 0` in a fleet, `call 0` otherwise, as verdicts name calls.
            let client = if late.client_id == 0 {
                String::new()
            } else {
                format!("client {} ", late.client_id)
            };
            let _ = writeln!(
                out,
                "  t={}  {}  {client}call {}",
                instants.show(late.at_ms),
                trace.name(late.endpoint),
                late.call_id
            );
        }
    }
    if !trace.unattributed.is_empty() {
        // Rebuilt attempts that started before any call of their client: no call's.
        let ids: Vec<String> = trace
            .unattributed
            .iter()
            .map(|id| format!("#{id}"))
            .collect();
        let _ = writeln!(
            out,
            "unattributed attempts (no call of their client had started): {}",
            ids.join(", ")
        );
    }
}

/// A connection event as its line says it: a GOAWAY with its last stream id and code.
fn event_text(kind: ConnEventKind) -> std::borrow::Cow<'static, str> {
    match kind {
        ConnEventKind::GoAway {
            last_stream_id,
            code,
            graceful,
        } => {
            let how = if graceful { "graceful" } else { "abrupt" };
            format!("GOAWAY last_stream_id {last_stream_id} {code} ({how})").into()
        }
        kind => kind_text(kind).into(),
    }
}

/// A connection event's kind, as the counts past [`LIST_LIMIT`] group them.
fn kind_text(kind: ConnEventKind) -> &'static str {
    match kind {
        ConnEventKind::GoAway { graceful: true, .. } => "GOAWAY (graceful)",
        ConnEventKind::GoAway {
            graceful: false, ..
        } => "GOAWAY (abrupt)",
        ConnEventKind::Connect => "connect",
        ConnEventKind::Connected => "connected",
        ConnEventKind::Refused => "refused",
        ConnEventKind::ConnectAbandoned => "connect abandoned",
        ConnEventKind::Reused => "reused",
        ConnEventKind::Fin(Side::Client) => "FIN by client",
        ConnEventKind::Fin(Side::Server) => "FIN by server",
        ConnEventKind::Rst(Side::Client) => "RST by client",
        ConnEventKind::Rst(Side::Server) => "RST by server",
    }
}

/// Where snapshots go: `$CARGO_MANIFEST_DIR/tests/snapshots` of the running test's crate
/// (cargo sets the variable when it runs tests), else `tests/snapshots` under the current
/// directory.
pub(crate) fn directory() -> PathBuf {
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    base.join("tests").join("snapshots")
}

/// A file-safe snapshot name: the scenario's path relative to the crate, without its
/// extension, folders joined with `__` (`scenarios/http/429.yaml` -> `scenarios__http__429`),
/// or for a scenario made in code, its name made file-safe.
///
/// An absolute path (`concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/429.yaml")`) is
/// taken relative to the crate's directory first, so the name is the same on every machine
/// and the same as for the relative path `../scenarios/429.yaml`: `..` steps are dropped.
pub(crate) fn name_for(file: &str, name: &str) -> String {
    let path = Path::new(file);
    let relative = if path.is_absolute() {
        let base = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        below_common_prefix(&lexical(path), &lexical(&base))
    } else {
        path.to_path_buf()
    };
    let parts: Vec<String> = relative
        .with_extension("")
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.is_empty() || file.starts_with('<') {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect()
    } else {
        parts.join("__")
    }
}

/// `path` with `.` and `..` resolved by their text (no file system access: the file need
/// not exist where the name is computed).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What of `path` lies below its common prefix with `base`.
fn below_common_prefix(path: &Path, base: &Path) -> PathBuf {
    let mut rest = path.components().peekable();
    for component in base.components() {
        if rest.peek() == Some(&component) {
            rest.next();
        } else {
            break;
        }
    }
    rest.collect()
}

/// Asserts the snapshot `name` of `text` in [`directory`].
pub(crate) fn assert(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(directory());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::trace::{CallResult, DecisionKind, seconds};

    /// Four 503s a second apart, then a 200, on the sim backend.
    fn sim_report() -> Report {
        Scenario::builder("four 503s, then 200")
            .endpoint(
                "api",
                endpoint().script([status(503).times(4), status(200)]),
            )
            .operation(get("api", "/orders"))
            .client(fixed(secs(1)).max_attempts(5))
            .expect(expect().outcome(Success).gaps_each(at_least(secs(1))))
            .build()
            .unwrap()
            .run_builtin()
    }

    /// An attempt no call could be named for is listed by id after the calls, and its own
    /// line says `unattributed` rather than naming call 0.
    #[test]
    fn unattributed_attempts_are_listed_and_named_so() {
        let mut report = sim_report();
        let first = report.trace.attempts[0].id;
        report.trace.unattributed = vec![first];
        let text = super::render(&report);
        assert!(
            text.contains(&format!(
                "\nunattributed attempts (no call of their client had started): #{first}\n"
            )),
            "{text}"
        );
        let line = report.trace.attempt_line(&report.trace.attempts[0]);
        assert!(
            line.ends_with("  unattributed") || line.contains("  unattributed  "),
            "{line}"
        );
    }

    /// `report` as if the real backend had run it: its header says so, every instant is late
    /// by a jitter that grows with `jitter`, the call's result quotes the server's `port`, and
    /// a verdict quotes a measured gap.
    fn as_real(report: &Report, jitter: u64, port: u16) -> Report {
        let mut real = report.clone();
        let trace = &mut real.trace;
        for (key, value) in &mut trace.header {
            if key == "backend" {
                *value = "real".to_owned();
            }
        }
        let late = |ms: u64, k: u64| ms + jitter * k;
        for a in &mut trace.attempts {
            // Late by more each time, so that no two gaps are equal.
            let k = u64::from(a.n) * u64::from(a.n);
            a.start_ms = late(a.start_ms, k);
            a.head_ms = a.head_ms.map(|t| late(t, k + 1));
            a.end_ms = a.end_ms.map(|t| late(t, k + 1));
        }
        for (k, event) in trace.connections.iter_mut().enumerate() {
            event.at_ms = late(event.at_ms, k as u64);
        }
        for effect in &mut trace.effects {
            effect.at_ms = late(effect.at_ms, 6);
        }
        for d in &mut trace.decisions {
            if let DecisionKind::Retry { delay_ms, .. } = &mut d.kind {
                *delay_ms = late(*delay_ms, 1);
            }
        }
        for call in &mut trace.calls {
            call.end_ms = call.end_ms.map(|t| late(t, 9));
            call.result = CallResult::Success(format!("200 from http://127.0.0.1:{port}/orders"));
        }
        trace.end_ms = late(trace.end_ms, 9);
        real.verdicts.push(Verdict::pass(
            "note",
            format!("a gap of {} (localhost:{port})", seconds(1000 + jitter)),
        ));
        real
    }

    #[test]
    fn a_real_run_s_snapshot_hides_its_instants_and_ports() {
        let sim = sim_report();
        assert!(sim.passed(), "{}", sim.summary());
        let one = as_real(&sim, 1, 38211);
        let other = as_real(&sim, 7, 40999);
        assert_ne!(one.trace, other.trace);
        let text = one.snapshot_text();
        assert_eq!(text, other.snapshot_text());
        // The sim rendering keeps its instants.
        assert!(
            sim.snapshot_text()
                .contains("t=1.000s..3.000s  #2..#4 (x3)")
        );
        let body = text
            .lines()
            .filter(|l| !l.starts_with("client: ") && !l.starts_with("server: "))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            body,
            "scenario: four 503s, then 200\n\
             backend: real\n\
             seed: 0\n\
             calls:\n  \
               call 0: Ok(200 from http://127.0.0.1:[port]/orders) in [real]\n\
             attempts:\n  \
               t=[real]  #1  GET /orders  -> 503  conn 1 new  => retry in [real]\n  \
               t=[real]  #2..#4 (x3)  GET /orders  -> 503  conn 1 reused  gap [real]  => retry in [real]\n  \
               t=[real]  #5  GET /orders  -> 200  conn 1 reused  gap [real]  => stop: success\n\
             connections:\n  \
               t=[real]  conn 1  api  connect\n  \
               t=[real]  conn 1  api  connected\n\
             effects:\n  \
               t=[real]  api  call 0  attempt #5\n\
             verdicts:\n  \
               ok outcome: every call ended in success\n  \
               ok gaps_each: every gap was >= [real] (gaps: 4)\n  \
               ok note: a gap of [real] (localhost:[port])\n\
             end: t=[real]"
        );
        // The report for people keeps the real instants, and so folds no gaps that differ.
        assert!(one.summary().contains("t=1.004s  #2"), "{}", one.summary());
        assert!(
            other.summary().contains("t=1.028s  #2"),
            "{}",
            other.summary()
        );
        assert!(!one.summary().contains("(x3)"), "{}", one.summary());
    }
}
