//! The trace as text for people: the timeline a failing test prints, one line per attempt.
//! (The snapshot text, which adds the verdicts, is the report's: `report/snapshot.rs`.)

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::index::TraceIndex;
use super::instants::{Instants, REAL, seconds};
use super::{
    AnsweredBy, Attempt, AttemptOutcome, Call, CallResult, ConnUse, DecisionKind, DecisionRecord,
    Trace,
};
use crate::policy::{Anchor, RetryAfterValue};

impl Call {
    /// What the call returned and how long it took: `call 0: Ok(200) in 1.204s` (`client 1
    /// call 0: ...` for a client of a fleet other than the first).
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("one 200")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// assert_eq!(report.trace().calls[0].line(), "call 0: Ok(200) in 0.000s");
    /// ```
    pub fn line(&self) -> String {
        self.line_with(Instants::Exact)
    }

    /// [`Call::line`], with its duration shown as `instants` says.
    pub(crate) fn line_with(&self, instants: Instants) -> String {
        let took = self.end_ms.map_or("never returned".to_owned(), |end| {
            format!("in {}", instants.show(end.saturating_sub(self.start_ms)))
        });
        let result = match &self.result {
            CallResult::Success(v) => format!("Ok({v})"),
            CallResult::Failure(e) => format!("Err({e})"),
            CallResult::Stopped => "stopped".to_owned(),
            CallResult::Panicked(message) => format!("panicked: {message}"),
        };
        let client = match self.client_id {
            0 => String::new(),
            id => format!("client {id} "),
        };
        format!("{client}call {}: {result} {took}", self.call_id)
    }
}

impl Trace {
    /// A compact human timeline, one line per attempt:
    /// `t=2.000s  #2  POST /orders  -> 503  conn 1 reused  gap 1.000s`; an attempt whose body
    /// ended after its head also shows both instants, `head t=0.004s  end t=1.000s`.
    pub fn timeline(&self) -> String {
        let index = TraceIndex::new(self);
        let mut out = String::new();
        for (i, a) in self.attempts.iter().enumerate() {
            let (head, shape) = self.attempt_parts(a, &index, i, Instants::Exact);
            // Writing to a String cannot fail.
            let _ = writeln!(out, "{head}  {shape}");
        }
        out
    }

    /// One line per fault event, `t=1.000s  api crashed`, in the order they happened.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let scenario = Scenario::from_yaml_str(
    ///     "version: 1\nname: crash\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
    ///      operation: { endpoint: api }\nclient: { fixed: { delay: 2s, max_attempts: 3 } }\n\
    ///      network: { faults: [ { at: 1s, crash: api, restart_after: 2s } ] }\n",
    ///     "crash.yaml",
    /// ).unwrap();
    /// let trace = scenario.run_builtin().trace().clone();
    /// assert_eq!(trace.fault_lines(), ["t=1.000s  api crashed", "t=3.000s  api restarted"]);
    /// ```
    pub fn fault_lines(&self) -> Vec<String> {
        self.fault_lines_with(Instants::Exact)
    }

    /// [`Trace::fault_lines`], with instants shown as `instants` says.
    pub(crate) fn fault_lines_with(&self, instants: Instants) -> Vec<String> {
        self.faults
            .iter()
            .map(|f| {
                format!(
                    "t={}  {} {}",
                    instants.show(f.at_ms),
                    self.name(f.endpoint),
                    f.kind.text()
                )
            })
            .collect()
    }

    /// One line per message a broker stored, in the order they were stored: the instant,
    /// the broker, the topic, the id it gave the message, its key (or `no key`) and the call
    /// and attempt that sent it, when known.
    ///
    /// ```
    /// let scenario = retrylab::scenario::Scenario::from_yaml_str(
    ///     concat!(
    ///         "version: 1\nname: m\nendpoints:\n  broker: { kind: broker, topics: [orders] }\n",
    ///         "operation: { endpoint: broker, method: POST, path: /topics/orders/messages, ",
    ///         "body: '{\"key\": \"o-1\"}' }\n",
    ///     ),
    ///     "messages.yaml",
    /// ).unwrap();
    /// let trace = scenario.run_builtin().trace().clone();
    /// assert_eq!(
    ///     trace.message_lines(),
    ///     ["t=0.000s  broker  orders  id broker-1  key o-1  call 0  attempt #1"]
    /// );
    /// ```
    pub fn message_lines(&self) -> Vec<String> {
        self.message_lines_with(Instants::Exact, usize::MAX)
    }

    /// The first `limit` lines of [`Trace::message_lines`], with instants shown as
    /// `instants` says. Only the lines shown are built, and the attempts they name are found
    /// in one pass over the trace's attempts: a summary of a long run stays linear in it.
    pub(crate) fn message_lines_with(&self, instants: Instants, limit: usize) -> Vec<String> {
        let shown = &self.messages[..limit.min(self.messages.len())];
        // The number of each attempt a shown message names, by the attempt's id.
        let mut numbers: BTreeMap<u32, Option<u32>> = shown
            .iter()
            .filter_map(|m| Some((m.attempt_id?, None)))
            .collect();
        if !numbers.is_empty() {
            for a in &self.attempts {
                if let Some(n) = numbers.get_mut(&a.id) {
                    n.get_or_insert(a.n);
                }
            }
        }
        shown
            .iter()
            .map(|m| {
                let mut line = format!(
                    "t={}  {}  {}  id {}",
                    instants.show(m.at_ms),
                    self.name(m.endpoint),
                    self.name(m.topic),
                    self.name(m.id)
                );
                match m.key {
                    Some(key) => line.push_str(&format!("  key {}", self.name(key))),
                    None => line.push_str("  no key"),
                }
                if let Some(call) = m.call_id {
                    line.push_str(&format!("  call {call}"));
                }
                if let Some(n) = m
                    .attempt_id
                    .and_then(|id| numbers.get(&id).copied().flatten())
                {
                    line.push_str(&format!("  attempt #{n}"));
                }
                line
            })
            .collect()
    }

    /// The timeline with runs of look-alike attempts folded: three or more consecutive
    /// attempts of one call that read the same apart from their instant and number become one
    /// line, `t=1.000s..9.000s  #2..#10 (x9)  GET /  -> 503 ...`, so a 100,000-attempt trace
    /// stays a few lines long. One line per entry, without a trailing newline.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("ten 503s")
    ///     .endpoint("api", endpoint().script([status(503)]))
    ///     .operation(get("api", "/"))
    ///     .client(fixed(secs(1)).max_attempts(10))
    ///     .build()
    ///     .unwrap();
    ///
    /// let trace = scenario.run_builtin().trace().clone();
    ///
    /// assert_eq!(trace.attempts.len(), 10);
    /// let folded = trace.compact_timeline();
    /// assert!(folded.len() < 10, "{folded:#?}");
    /// assert!(folded.iter().any(|line| line.contains("(x")), "{folded:#?}");
    /// ```
    pub fn compact_timeline(&self) -> Vec<String> {
        self.compact_timeline_with(Instants::Exact)
    }

    /// [`Trace::compact_timeline`], with instants and durations shown as `instants` says. A
    /// redacted line reads the same whatever its instants, so look-alike attempts fold as
    /// they do on a simulated run.
    pub(crate) fn compact_timeline_with(&self, instants: Instants) -> Vec<String> {
        let index = TraceIndex::new(self);
        // Each line as its `t=... #n` head and the rest, its shape, which look-alike
        // attempts share.
        let lines: Vec<(String, String)> = self
            .attempts
            .iter()
            .enumerate()
            .map(|(i, a)| self.attempt_parts(a, &index, i, instants))
            .collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let mut j = i + 1;
            while j < lines.len()
                && self.fold_key(j, &lines[j].1) == self.fold_key(i, &lines[i].1)
                && self.attempts[j].call_id == self.attempts[i].call_id
                && self.attempts[j].client_id == self.attempts[i].client_id
            {
                j += 1;
            }
            if j - i >= 3 {
                let first = &self.attempts[i];
                let last = &self.attempts[j - 1];
                let span = match instants {
                    Instants::Exact => {
                        format!("{}..{}", seconds(first.start_ms), seconds(last.start_ms))
                    }
                    Instants::Redacted => REAL.to_owned(),
                };
                out.push(format!(
                    "t={span}  #{}..#{} (x{})  {}",
                    first.n,
                    last.n,
                    j - i,
                    self.fold_key(i, &lines[i].1)
                ));
            } else {
                out.extend(
                    lines[i..j]
                        .iter()
                        .map(|(head, shape)| format!("{head}  {shape}")),
                );
            }
            i = j;
        }
        out
    }

    /// The shape of attempt `i`'s line that look-alike attempts share: all of it but its
    /// HTTP/2 stream, which differs from each request to the next as instants do (a folded
    /// line shows neither).
    fn fold_key<'s>(&self, i: usize, shape: &'s str) -> std::borrow::Cow<'s, str> {
        match self.attempts[i].stream_id {
            Some(stream) => shape.replacen(&format!("  stream {stream}"), "", 1).into(),
            None => shape.into(),
        }
    }

    /// One timeline line.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("one 503, then 200")
    ///     .endpoint("api", endpoint().script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(fixed(secs(1)).max_attempts(2))
    ///     .build()
    ///     .unwrap();
    /// let trace = scenario.run_builtin().trace().clone();
    /// assert_eq!(
    ///     trace.attempt_line(&trace.attempts[1]),
    ///     "t=1.000s  #2  GET /  -> 200  conn 1 reused  gap 1.000s  => stop: success"
    /// );
    /// ```
    pub fn attempt_line(&self, a: &Attempt) -> String {
        self.attempt_line_with(a, Instants::Exact)
    }

    /// [`Trace::attempt_line`], with instants and durations shown as `instants` says: a
    /// redacted line keeps what the attempt came to, its connection and a `Retry-After` in
    /// seconds, and hides its start, its gap, the reference client's delay and a
    /// `Retry-After` date (each depends on when things happened).
    pub(crate) fn attempt_line_with(&self, a: &Attempt, instants: Instants) -> String {
        let decision = self.decisions.iter().find(|d| d.attempt_id == a.id);
        let of = a
            .answered_by
            .and_then(AnsweredBy::of)
            .and_then(|id| self.attempts.iter().find(|o| o.id == id));
        let (head, shape) = self.line_parts(a, self.gap_before(a), decision, of, instants);
        format!("{head}  {shape}")
    }

    /// [`Trace::line_parts`] of the attempt at `position`, its gap and decision looked up
    /// in `index`.
    fn attempt_parts(
        &self,
        a: &Attempt,
        index: &TraceIndex<'_>,
        position: usize,
        instants: Instants,
    ) -> (String, String) {
        let of = a
            .answered_by
            .and_then(AnsweredBy::of)
            .and_then(|id| index.attempt(id));
        self.line_parts(a, index.gap(position), index.decision(a.id), of, instants)
    }

    /// A timeline line in two parts: `t=... #n`, and the rest (its shape). `of` is the
    /// attempt its dedupe answer names, if any.
    fn line_parts(
        &self,
        a: &Attempt,
        gap: Option<u64>,
        decision: Option<&DecisionRecord>,
        of: Option<&Attempt>,
        instants: Instants,
    ) -> (String, String) {
        let head = format!("t={}  #{}", instants.show(a.start_ms), a.n);
        let mut line = format!(
            "{} {}  -> {}",
            self.name(a.method),
            self.name(a.path),
            self.outcome_text(a.outcome)
        );
        // A gRPC answer's outcome is its grpc-status, beside the HTTP status that carried
        // it (always 200 from an endpoint).
        if let Some(grpc) = a.grpc {
            let _ = write!(line, " grpc {}", grpc.name());
            // Quoted: a message is free text, spaces and all.
            if let Some(message) = grpc.message {
                let _ = write!(line, " {:?}", self.name(message));
            }
        }
        if let Some(label) = answer_label(a, of) {
            let _ = write!(line, " ({label})");
        }
        if let Some(broken) = a.body_error {
            let _ = write!(line, ", body {}", self.outcome_text(broken));
        }
        // A body that took time after its head (a trickle, a client reading it late) shows
        // both instants; an attempt whose body came with its head reads as before. Redacted
        // (real) instants leave both out: whether a real millisecond passed between head and
        // end depends on the machine's load, and the redacted text must be the same on every
        // run.
        if let (Some(head), Some(end), Instants::Exact) = (a.head_ms, a.end_ms, instants) {
            if end > head {
                let _ = write!(
                    line,
                    "  head t={}  end t={}",
                    instants.show(head),
                    instants.show(end)
                );
            }
        }
        if let Some(conn) = a.conn_id {
            let how = match a.conn {
                ConnUse::New => "new",
                ConnUse::Reused => "reused",
                ConnUse::Unknown => "?",
            };
            let _ = write!(line, "  conn {conn} {how}");
        }
        if let Some(stream) = a.stream_id {
            let _ = write!(line, "  stream {stream}");
        }
        if let Some(gap) = gap {
            let _ = write!(line, "  gap {}", instants.show(gap));
        }
        // An unattributed attempt's `call_id` (0) names no call, so it is not shown as one.
        if self.is_unattributed(a.id) {
            line.push_str("  unattributed");
        } else if a.client_id != 0 || self.calls.len() > 1 {
            let _ = write!(line, "  call {}", a.call_id);
        }
        if a.client_id != 0 {
            let _ = write!(line, "  client {}", a.client_id);
        }
        if let Some(ra) = a.retry_after {
            let raw = self.name(ra);
            let dated = matches!(RetryAfterValue::parse(raw), RetryAfterValue::Date(_));
            let shown = if dated && instants == Instants::Redacted {
                REAL
            } else {
                raw
            };
            let _ = write!(line, "  retry-after {shown}");
        }
        // A delay in milliseconds, not an instant: shown as sent on every backend.
        if let Some(amz) = a.amz_retry_after {
            let _ = write!(line, "  x-amz-retry-after {}", self.name(amz));
        }
        if let Some(pushback) = a.grpc.and_then(|g| g.pushback) {
            let raw = self.name(pushback);
            // Whole milliseconds read as a duration; anything else is shown as sent.
            if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
                let _ = write!(line, "  pushback {raw}ms");
            } else {
                let _ = write!(line, "  pushback {raw:?}");
            }
        }
        if a.resent {
            line.push_str("  resent");
        }
        if let Some(decision) = decision {
            match decision.kind {
                DecisionKind::Retry { delay_ms, from } => {
                    let _ = write!(line, "  => retry in {}", instants.show(delay_ms));
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
        (head, line)
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
            AttemptOutcome::StreamReset(code) => format!("RST_STREAM {code}"),
            AttemptOutcome::GoAway(code) => format!("GOAWAY {code}"),
            AttemptOutcome::Unfinished => "unfinished".into(),
        }
    }
}

/// The label of an attempt's answer when the endpoint's dedupe or rate limiter gave it, or
/// a broker refused the request, as docs/scenario-format.md#timeline-labels writes it:
/// `replay of #1`, `in flight: #1`, `mismatch with #1`, `rerun of #1`, `rate limited`,
/// `refused by the broker`. `of` is the attempt the answer names.
pub(crate) fn answer_label(a: &Attempt, of: Option<&Attempt>) -> Option<String> {
    let by = a.answered_by?;
    // The attempt named, as the reader finds it in the timeline: its number within the same
    // call, its call (and client) otherwise.
    let named = match of {
        None => "an untraced request".to_owned(),
        Some(o) if o.client_id == a.client_id && o.call_id == a.call_id => format!("#{}", o.n),
        Some(o) if o.client_id == a.client_id => format!("call {} #{}", o.call_id, o.n),
        Some(o) => format!("client {} call {} #{}", o.client_id, o.call_id, o.n),
    };
    Some(match by {
        AnsweredBy::Replay { .. } => format!("replay of {named}"),
        AnsweredBy::InFlight { .. } => format!("in flight: {named}"),
        AnsweredBy::Mismatch { .. } => format!("mismatch with {named}"),
        AnsweredBy::Rerun { .. } => format!("rerun of {named}"),
        AnsweredBy::RateLimited => "rate limited".to_owned(),
        AnsweredBy::RefusedByBroker => "refused by the broker".to_owned(),
    })
}
