//! Snapshots: a report rendered as stable, reviewable text, asserted with insta.
//!
//! Long runs are compacted: consecutive attempts of a call that read the same apart from
//! their instant and number become one line with a count, so a 100,000-attempt trace stays
//! a few lines long. The snapshot lives in `$CARGO_MANIFEST_DIR/tests/snapshots` of the crate
//! whose test runs it, under an explicit name (insta would otherwise resolve paths inside
//! retrylab's own source).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::Report;
use crate::trace::{ConnEventKind, Side, seconds};

/// Connection events and effects are listed one by one up to this many; past it, counted.
const LIST_LIMIT: usize = 100;

/// The snapshot text of a report.
pub(crate) fn render(report: &Report) -> String {
    let trace = &report.trace;
    let mut out = String::new();
    let _ = writeln!(out, "scenario: {}", report.name);
    for (key, value) in &trace.header {
        let _ = writeln!(out, "{key}: {value}");
    }
    out.push_str("calls:\n");
    for call in &trace.calls {
        let _ = writeln!(out, "  {}", call.line());
    }
    out.push_str("attempts:\n");
    for line in trace.compact_timeline() {
        let _ = writeln!(out, "  {line}");
    }
    out.push_str("connections:\n");
    if trace.connections.len() <= LIST_LIMIT {
        for event in &trace.connections {
            let _ = writeln!(
                out,
                "  t={}  conn {}  {}  {}",
                seconds(event.at_ms),
                event.conn_id,
                trace.name(event.endpoint),
                kind_text(event.kind)
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
    out.push_str("effects:\n");
    if trace.effects.len() <= LIST_LIMIT {
        for effect in &trace.effects {
            let _ = write!(
                out,
                "  t={}  {}",
                seconds(effect.at_ms),
                trace.name(effect.endpoint)
            );
            if let Some(call) = effect.call_id {
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
    if !trace.late_requests.is_empty() {
        out.push_str("late requests:\n");
        for late in &trace.late_requests {
            let _ = writeln!(
                out,
                "  t={}  {}  call {}",
                seconds(late.at_ms),
                trace.name(late.endpoint),
                late.call_id
            );
        }
    }
    out.push_str("verdicts:\n");
    for verdict in report.verdicts() {
        let mark = verdict.judgement.mark();
        let _ = writeln!(
            out,
            "  {mark} {}: {}",
            verdict.check,
            crate::scenario::visible(&verdict.message)
        );
    }
    if !report.warnings.is_empty() {
        out.push_str("warnings:\n");
        for warning in &report.warnings {
            let _ = writeln!(out, "  {warning}");
        }
    }
    let _ = writeln!(out, "end: t={}", seconds(trace.end_ms));
    out
}

fn kind_text(kind: ConnEventKind) -> &'static str {
    match kind {
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
