//! What a plot shows, taken from a run: one row per call with its attempts, the gaps
//! between them, the windows `conforms_to` allows each retry in, the instants Retry-After
//! names, the effects, the fault windows, and for a fleet its attempts per time bucket.

use std::collections::BTreeMap;

use crate::policy::RetryAfterValue;
use crate::report::Report;
use crate::scenario::Scenario;
use crate::trace::{AttemptOutcome, FaultEventKind, FleetView, Trace};

/// The most calls drawn as rows: past it, the first ones are drawn and the title says how
/// many there were.
pub(super) const MAX_ROWS: usize = 40;

/// How an attempt ended, as the plot colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    /// 1xx to 3xx.
    Success,
    /// 4xx.
    ClientError,
    /// 5xx.
    ServerError,
    /// Refused, reset, closed or another transport error.
    Transport,
    /// Given up by the client (connecting or waiting for the head).
    Timeout,
    /// Still waiting when the run ended.
    Unfinished,
}

impl Kind {
    fn of(outcome: AttemptOutcome) -> Kind {
        match outcome {
            AttemptOutcome::Status(s) if s < 400 => Kind::Success,
            AttemptOutcome::Status(s) if s < 500 => Kind::ClientError,
            AttemptOutcome::Status(_) => Kind::ServerError,
            AttemptOutcome::ConnectAbandoned | AttemptOutcome::Abandoned => Kind::Timeout,
            AttemptOutcome::Unfinished => Kind::Unfinished,
            AttemptOutcome::Refused
            | AttemptOutcome::Reset
            | AttemptOutcome::Closed
            | AttemptOutcome::Io(_)
            | AttemptOutcome::StreamReset(_)
            | AttemptOutcome::GoAway(_) => Kind::Transport,
        }
    }

    /// The legend's word.
    pub(super) fn label(self) -> &'static str {
        match self {
            Kind::Success => "2xx",
            Kind::ClientError => "4xx",
            Kind::ServerError => "5xx",
            Kind::Transport => "transport error",
            Kind::Timeout => "timed out",
            Kind::Unfinished => "unfinished",
        }
    }
}

/// One attempt on its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bar {
    pub(super) row: usize,
    pub(super) from_ms: u64,
    pub(super) to_ms: u64,
    pub(super) kind: Kind,
}

/// A span of virtual time on a row (a gap, an allowed window) or across rows (a fault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) row: usize,
    pub(super) from_ms: u64,
    pub(super) to_ms: u64,
}

/// An instant on a row (a Retry-After's, an effect's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) row: usize,
    pub(super) at_ms: u64,
}

/// A fault window: an endpoint partitioned, crashed or held, from one event to the one that
/// ends it (or the end of the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fault {
    pub(super) what: String,
    pub(super) from_ms: u64,
    pub(super) to_ms: u64,
}

/// Everything a plot draws, in virtual milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Timeline {
    pub(super) title: String,
    /// The rows' names, top to bottom.
    pub(super) rows: Vec<String>,
    pub(super) bars: Vec<Bar>,
    pub(super) gaps: Vec<Span>,
    /// The windows `conforms_to` allows, by the row of the call they are of.
    pub(super) envelope: Vec<Span>,
    pub(super) retry_after: Vec<Mark>,
    pub(super) effects: Vec<Mark>,
    pub(super) faults: Vec<Fault>,
    /// For a fleet: its attempts per bucket.
    pub(super) fleet: Option<FleetView>,
    /// The time axis ends here.
    pub(super) end_ms: u64,
}

impl Timeline {
    /// The timeline of `report`, a run of `scenario`.
    pub(super) fn of(scenario: &Scenario, report: &Report) -> Result<Timeline, String> {
        let trace = report.trace();
        // On real sockets the dates were written from the real clock, which the trace keeps.
        let epoch = match trace.real_epoch_unix_ms() {
            Some(real) => real,
            None => scenario.epoch_unix_ms().map_err(|e| e.to_string())?,
        };
        let mut rows = Vec::new();
        let mut row_of = BTreeMap::new();
        for call in trace.calls.iter().take(MAX_ROWS) {
            row_of.insert((call.client_id, call.call_id), rows.len());
            rows.push(if call.client_id == 0 {
                format!("call {}", call.call_id)
            } else {
                format!("client {} call {}", call.client_id, call.call_id)
            });
        }
        let mut title = format!("{} (seed {})", report.name(), report.seed());
        if trace.calls.len() > rows.len() {
            title.push_str(&format!(
                ", the first {} of {} calls",
                rows.len(),
                trace.calls.len()
            ));
        }
        let end_ms = trace.end_ms;
        let mut bars = Vec::new();
        let mut gaps = Vec::new();
        let mut retry_after = Vec::new();
        let mut last_end: BTreeMap<usize, u64> = BTreeMap::new();
        for a in &trace.attempts {
            let Some(&row) = row_of.get(&(a.client_id, a.call_id)) else {
                continue;
            };
            let to_ms = a.end_ms.unwrap_or(end_ms).max(a.start_ms);
            if let Some(previous) = last_end.insert(row, to_ms) {
                if a.start_ms > previous {
                    gaps.push(Span {
                        row,
                        from_ms: previous,
                        to_ms: a.start_ms,
                    });
                }
            }
            bars.push(Bar {
                row,
                from_ms: a.start_ms,
                to_ms,
                kind: Kind::of(a.outcome),
            });
            if let Some(raw) = a.retry_after {
                let head = a.head_ms.unwrap_or(to_ms);
                retry_after.push(Mark {
                    row,
                    at_ms: retry_after_instant(trace.name(raw), head, epoch),
                });
            }
        }
        let envelope = match crate::check::conforms_windows(scenario, report) {
            None => Vec::new(),
            Some(windows) => windows?
                .into_iter()
                .filter_map(|(client, call, w)| {
                    let row = *row_of.get(&(client, call))?;
                    Some(Span {
                        row,
                        from_ms: w.earliest_ms,
                        // An open window is drawn to the end of the axis.
                        to_ms: w.latest_ms.max(w.earliest_ms).min(end_ms.max(1) * 2),
                    })
                })
                .collect(),
        };
        let effects = trace
            .effects
            .iter()
            .filter_map(|e| {
                let row = *row_of.get(&(e.client_id, e.call_id?))?;
                Some(Mark {
                    row,
                    at_ms: e.at_ms,
                })
            })
            .collect();
        let faults = faults(trace, end_ms);
        let fleet = trace.fleet();
        let drawn_end = bars
            .iter()
            .map(|b| b.to_ms)
            .chain(envelope.iter().map(|s| s.to_ms))
            .chain(retry_after.iter().map(|m| m.at_ms))
            .fold(end_ms, u64::max);
        Ok(Timeline {
            title,
            rows,
            bars,
            gaps,
            envelope,
            retry_after,
            effects,
            faults,
            fleet,
            end_ms: drawn_end.max(1),
        })
    }
}

/// The instant a `Retry-After` value names for a response whose head came at `head_ms`:
/// seconds after the head, or the date on the run's wall clock (which reads `epoch` at 0:
/// the scenario's, or on real sockets the real clock the trace header keeps). A value that
/// is neither is marked at the head.
fn retry_after_instant(raw: &str, head_ms: u64, epoch_unix_ms: u64) -> u64 {
    match RetryAfterValue::parse(raw) {
        RetryAfterValue::Seconds(s) => head_ms.saturating_add(s.saturating_mul(1000)),
        RetryAfterValue::Date(unix_s) => {
            let at = i128::from(unix_s) * 1000 - i128::from(epoch_unix_ms);
            u64::try_from(at.max(i128::from(head_ms))).unwrap_or(u64::MAX)
        }
        RetryAfterValue::Invalid(_) => head_ms,
    }
}

/// The fault windows of `trace`: each start paired with the next end of the same endpoint,
/// an unended one drawn to `end_ms`.
fn faults(trace: &Trace, end_ms: u64) -> Vec<Fault> {
    let mut open: BTreeMap<(u32, &'static str), u64> = BTreeMap::new();
    let mut out = Vec::new();
    for event in &trace.faults {
        let (what, starts) = match event.kind {
            FaultEventKind::Partitioned => ("partitioned", true),
            FaultEventKind::Healed => ("partitioned", false),
            FaultEventKind::Crashed => ("crashed", true),
            FaultEventKind::Restarted => ("crashed", false),
            FaultEventKind::Held => ("held", true),
            FaultEventKind::Released => ("held", false),
        };
        let key = (event.endpoint.0, what);
        if starts {
            open.entry(key).or_insert(event.at_ms);
        } else if let Some(from_ms) = open.remove(&key) {
            out.push(Fault {
                what: format!("{} {what}", trace.name(event.endpoint)),
                from_ms,
                to_ms: event.at_ms,
            });
        }
    }
    for ((endpoint, what), from_ms) in open {
        out.push(Fault {
            what: format!("{} {what}", trace.name(crate::trace::Name(endpoint))),
            from_ms,
            to_ms: end_ms,
        });
    }
    out.sort_by_key(|f| (f.from_ms, f.to_ms));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_names_an_instant() {
        assert_eq!(retry_after_instant("2", 4, 0), 2004);
        // An HTTP-date on the virtual wall clock, which reads 1,000 s at instant 0.
        assert_eq!(
            retry_after_instant("Thu, 01 Jan 1970 00:16:45 GMT", 4, 1_000_000),
            5_000
        );
        // A date already past is the head; a value that is neither is marked at the head.
        assert_eq!(
            retry_after_instant("Thu, 01 Jan 1970 00:00:01 GMT", 7, 1_000_000),
            7
        );
        assert_eq!(retry_after_instant("soon", 9, 0), 9);
    }

    #[test]
    fn faults_pair_their_start_and_end() {
        use crate::trace::{FaultEvent, Name};
        let event = |at_ms, endpoint, kind| FaultEvent {
            at_ms,
            endpoint: Name(endpoint),
            kind,
        };
        let trace = Trace {
            names: vec!["api".into(), "db".into()],
            faults: vec![
                event(10, 0, FaultEventKind::Partitioned),
                event(20, 1, FaultEventKind::Crashed),
                event(30, 0, FaultEventKind::Healed),
            ],
            end_ms: 100,
            ..Trace::default()
        };
        let found: Vec<(String, u64, u64)> = faults(&trace, 100)
            .into_iter()
            .map(|f| (f.what, f.from_ms, f.to_ms))
            .collect();
        assert_eq!(
            found,
            [
                ("api partitioned".to_owned(), 10, 30),
                ("db crashed".to_owned(), 20, 100)
            ]
        );
    }
}
