//! The trace as text for people: the timeline a failing test prints, one line per attempt.
//! (The snapshot text, which adds the verdicts, is the report's: `report/snapshot.rs`.)

use std::fmt::Write as _;

use super::{Attempt, AttemptOutcome, ConnUse, DecisionKind, Trace};
use crate::policy::Anchor;

impl Trace {
    /// A compact human timeline, one line per attempt:
    /// `t=2.000s  #2  POST /orders  -> 503  conn 1 reused  gap 1.000s`.
    pub fn timeline(&self) -> String {
        let mut out = String::new();
        for attempt in &self.attempts {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "{}", self.attempt_line(attempt));
        }
        out
    }

    /// One timeline line.
    pub fn attempt_line(&self, a: &Attempt) -> String {
        let mut line = format!(
            "t={}  #{}  {} {}  -> {}",
            seconds(a.start_ms),
            a.n,
            self.name(a.method),
            self.name(a.path),
            self.outcome_text(a.outcome)
        );
        if let Some(broken) = a.body_error {
            let _ = write!(line, ", body {}", self.outcome_text(broken));
        }
        if let Some(conn) = a.conn_id {
            let how = match a.conn {
                ConnUse::New => "new",
                ConnUse::Reused => "reused",
                ConnUse::Unknown => "?",
            };
            let _ = write!(line, "  conn {conn} {how}");
        }
        if let Some(gap) = self.gap_before(a) {
            let _ = write!(line, "  gap {}", seconds(gap));
        }
        if a.client_id != 0 || self.calls.len() > 1 {
            let _ = write!(line, "  call {}", a.call_id);
        }
        if a.client_id != 0 {
            let _ = write!(line, "  client {}", a.client_id);
        }
        if let Some(ra) = a.retry_after {
            let _ = write!(line, "  retry-after {}", self.name(ra));
        }
        if a.resent {
            line.push_str("  resent");
        }
        if let Some(decision) = self.decisions.iter().find(|d| d.attempt_id == a.id) {
            match decision.kind {
                DecisionKind::Retry { delay_ms, from } => {
                    let _ = write!(line, "  => retry in {}", seconds(delay_ms));
                    if from != Anchor::End {
                        let _ = write!(line, " from {}", from.as_str());
                    }
                }
                DecisionKind::Stop(reason) => {
                    let _ = write!(line, "  => stop: {reason}");
                }
            }
            if let Some(state) = decision.state {
                let _ = write!(line, " [{}]", self.name(state));
            }
        }
        line
    }

    fn outcome_text(&self, outcome: AttemptOutcome) -> String {
        match outcome {
            AttemptOutcome::Status(status) => status.to_string(),
            AttemptOutcome::Refused => "refused".into(),
            AttemptOutcome::ConnectAbandoned => "connect abandoned".into(),
            AttemptOutcome::Reset => "reset".into(),
            AttemptOutcome::Closed => "closed".into(),
            AttemptOutcome::Abandoned => "abandoned".into(),
            AttemptOutcome::Io(kind) => format!("io {:?}", kind.0),
            AttemptOutcome::Unfinished => "unfinished".into(),
        }
    }
}

/// `1234` ms as `1.234s`: the timeline's unit, exact to the millisecond.
pub fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}
