//! Steps, in scripts and timelines: what a step does, which keys go with it, and that timeline
//! windows do not overlap ([scenario format](../../../../docs/scenario-format.md#steps)).

use super::Validator;
use crate::scenario::model::bounds::{
    MAX_AFTER_BYTES, MAX_DURATION, MAX_ERROR_CODE, MAX_HEADER_BYTES, MAX_RETRY_AFTER_SECONDS,
    MAX_STEPS,
};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::endpoint::EndpointKind;
use crate::scenario::model::grpc::{GrpcStatusSpec, PushbackSpec};
use crate::scenario::model::headers::HeadersSpec;
use crate::scenario::model::latency::LatencySpec;
use crate::scenario::model::retry_after::RetryAfterSpec;
use crate::scenario::model::step::{CommitSpec, FailSpec, StepSpec, TimelineStep};
use crate::scenario::model::values::{DurationRange, Probability, status_code};
use crate::scenario::yaml::locations::{index, join};

/// The fields shared by script and timeline steps, borrowed.
pub(super) struct StepView<'a> {
    status: Option<u16>,
    headers: Option<&'a HeadersSpec>,
    body: Option<&'a str>,
    retry_after: Option<&'a RetryAfterSpec>,
    latency: Option<&'a LatencySpec>,
    trickle: Option<Millis>,
    fail: Option<FailSpec>,
    commit: Option<CommitSpec>,
    p: Option<Probability>,
    then: Option<&'a StepSpec>,
    otherwise: Option<&'a StepSpec>,
    error_code: Option<i64>,
    grpc: Option<GrpcStatusSpec>,
    message: Option<&'a str>,
    pushback: Option<&'a PushbackSpec>,
    reply: Option<&'a str>,
    times: Option<u32>,
}

macro_rules! step_view {
    ($s:expr, $times:expr) => {
        StepView {
            status: $s.status,
            headers: $s.headers.as_ref(),
            body: $s.body.as_deref(),
            retry_after: $s.retry_after.as_ref(),
            latency: $s.latency.as_ref(),
            trickle: $s.trickle,
            fail: $s.fail,
            commit: $s.commit,
            p: $s.p,
            then: $s.then.as_deref(),
            otherwise: $s.r#else.as_deref(),
            error_code: $s.error_code,
            grpc: $s.grpc,
            message: $s.message.as_deref(),
            pushback: $s.pushback.as_ref(),
            reply: $s.reply.as_deref(),
            times: $times,
        }
    };
}

pub(super) fn script_view(s: &StepSpec) -> StepView<'_> {
    step_view!(s, s.times)
}

fn timeline_view(s: &TimelineStep) -> StepView<'_> {
    step_view!(s, None)
}

/// 9999-12-31T23:59:59Z in Unix milliseconds: the last instant an HTTP-date (a four-digit
/// year) can write.
const LAST_HTTP_DATE_MS: i64 = 253_402_300_799_000;

impl Validator<'_> {
    pub(super) fn script(&mut self, path: &str, steps: &[StepSpec], kind: EndpointKind) {
        if steps.is_empty() {
            self.err_expected(path, "empty script", "at least one step");
        }
        self.too_many(path, steps.len(), MAX_STEPS, "steps", "in a script");
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), &script_view(step), kind, false);
        }
    }

    pub(super) fn timeline(&mut self, path: &str, steps: &[TimelineStep], kind: EndpointKind) {
        if steps.is_empty() {
            self.err_expected(path, "empty timeline", "at least one step");
        }
        self.too_many(path, steps.len(), MAX_STEPS, "steps", "in a timeline");
        // Windows are half-open, `[a, b)`: one may start where another ends, and one that
        // ends where it starts holds no instant at all.
        for (i, step) in steps.iter().enumerate() {
            let w = step.during;
            if w.min == w.max {
                self.err_expected(
                    &join(&index(path, i), "during"),
                    format!(
                        "window [{}, {}] is empty: it holds the instants from {} up to, not including, {}",
                        w.min, w.max, w.min, w.max
                    ),
                    "an end after the start",
                );
            }
        }
        let mut windows: Vec<(usize, DurationRange)> =
            steps.iter().map(|s| s.during).enumerate().collect();
        windows.sort_by_key(|(_, w)| (w.min, w.max));
        let mut latest: Option<(usize, DurationRange)> = None;
        for (j, b) in windows {
            if b.min == b.max {
                continue;
            }
            if let Some((i, a)) = latest
                && b.min < a.max
            {
                self.err(
                    &join(&index(path, j), "during"),
                    format!(
                        "window [{}, {}] overlaps [{}, {}] of step {i}; a request at that time would match both",
                        b.min, b.max, a.min, a.max
                    ),
                );
            }
            if latest.is_none_or(|(_, a)| b.max > a.max) {
                latest = Some((j, b));
            }
        }
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), &timeline_view(step), kind, false);
        }
    }

    /// A status the file could not have given (parsing checks the range) but a scenario built
    /// in Rust can: an error here, so building the endpoint never meets it.
    pub(super) fn status_code(&mut self, path: &str, code: u16) {
        if !(100..=599).contains(&code) {
            self.err(
                path,
                format!(
                    "status code {code} is out of range, expected {}",
                    status_code::EXPECTED
                ),
            );
        }
    }

    pub(super) fn step(&mut self, path: &str, s: &StepView<'_>, kind: EndpointKind, nested: bool) {
        self.step_answer(path, s, kind);
        self.random_step(path, s, nested);
        if let Some(h) = s.headers {
            self.headers(&join(path, "headers"), h);
        }
        self.step_retry_after(path, s);
        if let Some(body) = s.body {
            self.body(&join(path, "body"), body);
        }
        if let Some(
            FailSpec::Close {
                after_bytes: Some(bytes),
            }
            | FailSpec::Reset {
                after_bytes: Some(bytes),
            },
        ) = s.fail
        {
            let key = if matches!(s.fail, Some(FailSpec::Close { .. })) {
                "close"
            } else {
                "reset"
            };
            self.at_most(
                &join(&join(path, &join("fail", key)), "after_bytes"),
                bytes,
                MAX_AFTER_BYTES,
                "bytes (more than any response holds)",
            );
        }
        if let Some(fail) = s.fail.filter(FailSpec::is_http2) {
            self.h2_fail(&join(path, "fail"), fail);
        }
        if let Some(l) = s.latency {
            self.latency(&join(path, "latency"), l);
        }
        if let Some(t) = s.trickle {
            self.positive(&join(path, "trickle"), t, "`trickle`");
            if s.status.is_some() && s.body.is_none_or(str::is_empty) {
                self.err_key(
                    &join(path, "trickle"),
                    "`trickle` spreads the body over time, and this step has no `body` to spread",
                );
            }
        }
        if let Some(then) = s.then {
            self.step(&join(path, "then"), &script_view(then), kind, true);
        }
        if let Some(otherwise) = s.otherwise {
            self.step(&join(path, "else"), &script_view(otherwise), kind, true);
        }
    }

    /// What a step answers: exactly one of a status, a failure, a random choice or (on a
    /// broker) an error code, and the parts of a response only where a response goes out.
    fn step_answer(&mut self, path: &str, s: &StepView<'_>, kind: EndpointKind) {
        let broker = kind == EndpointKind::Broker;
        let mut forms = Vec::new();
        // A cut response (`fail: { close|reset: { after_bytes } }`) may say what it cuts:
        // its status, headers and body, of which `after_bytes` bytes go out on the wire.
        // So may a stream reset after the head, and a graceful GOAWAY, whose response goes
        // out whole.
        let truncates = s.fail.is_some_and(|f| f.answers());
        if let Some(code) = s.status {
            forms.push("status");
            self.status_code(&join(path, "status"), code);
        }
        if s.fail.is_some() && !(truncates && s.status.is_some()) {
            forms.push("fail");
        }
        if s.p.is_some() {
            forms.push("p");
        }
        if s.error_code.is_some() && broker {
            forms.push("error_code");
        }
        if s.grpc.is_some() {
            forms.push("grpc");
        }
        let one_of = if broker {
            "one of `status`, `fail`, `p` or `error_code`"
        } else {
            // `grpc` is left out of the list: it answers only on HTTP/2 endpoints, and
            // the message reads as it did before gRPC steps for the others.
            "one of `status`, `fail` or `p`"
        };
        match forms.len() {
            // An `error_code` off a broker is the mistake, said once below: the step meant
            // to do something.
            0 if s.error_code.is_some() => {}
            0 => self.err_expected(path, "a step needs something to do", one_of),
            1 => {}
            _ => self.err_expected(
                path,
                format!(
                    "a step does one thing, but this one has {}",
                    forms
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                format!("exactly {one_of}"),
            ),
        }
        if let Some(code) = s.error_code.filter(|_| broker) {
            if !(1..=MAX_ERROR_CODE).contains(&code) {
                self.err_expected(
                    &join(path, "error_code"),
                    format!("error code {code} is not a broker error code"),
                    format!("a code from 1 to {MAX_ERROR_CODE}, such as 530"),
                );
            }
        }
        // The broker's error answer is JSON and says so: a `content-type` of the step's own
        // would be a second one.
        if broker && s.error_code.is_some() {
            let typed = s.headers.is_some_and(|h| {
                h.entries()
                    .iter()
                    .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            });
            if typed {
                self.err_key(
                    &join(path, "headers"),
                    "an `error_code` answer is JSON and sets `content-type: application/json` \
                     itself; this step may not set `content-type`",
                );
            }
        }
        if s.error_code.is_some() && !broker {
            self.err_key(
                &join(path, "error_code"),
                format!(
                    "`error_code` is for `kind: broker` endpoints, not `{}`",
                    kind.name()
                ),
            );
        }
        // Headers may come with a broker's error response; a body and its pacing only with
        // a status the step writes itself.
        let responds = s.status.is_some() || (broker && s.error_code.is_some()) || s.grpc.is_some();
        let response_fields = [
            ("headers", s.headers.is_some(), responds),
            ("retry_after", s.retry_after.is_some(), responds),
            ("body", s.body.is_some(), s.status.is_some()),
            ("trickle", s.trickle.is_some(), s.status.is_some()),
        ];
        let hangs = s.fail == Some(FailSpec::Hang);
        for (key, set, allowed) in response_fields {
            if key == "trickle" && set && hangs {
                // Said once, in the words of the clash, rather than as a missing `status`.
                self.err_key(
                    &join(path, key),
                    "`trickle` spreads a response body over time, and `fail: hang` never sends one",
                );
            } else if set && !allowed && s.grpc.is_some() {
                self.err_expected(
                    &join(path, key),
                    format!("a `grpc` step answers with a message, not a `{key}`"),
                    "`reply: <base64>`, the response message",
                );
            } else if set && !allowed {
                self.err_key(
                    &join(path, key),
                    format!("`{key}` is part of a response and needs `status`"),
                );
            }
        }
        self.grpc_fields(path, s.grpc.is_some(), s.message, s.pushback, s.reply);
    }

    /// A random step's branches, and `times`, which counts the step whichever branch it
    /// takes.
    fn random_step(&mut self, path: &str, s: &StepView<'_>, nested: bool) {
        if s.p.is_some() {
            if s.then.is_none() {
                self.err_expected(
                    path,
                    "missing required key `then` of a random step",
                    "`then: <step>`",
                );
            }
            if s.otherwise.is_none() {
                self.err_expected(
                    path,
                    "missing required key `else` of a random step",
                    "`else: <step>`",
                );
            }
            for (key, set) in [
                ("latency", s.latency.is_some()),
                ("commit", s.commit.is_some()),
            ] {
                if set {
                    self.err_key(
                        &join(path, key),
                        format!("`{key}` belongs inside `then` and `else` of a random step"),
                    );
                }
            }
        } else {
            for (key, set) in [("then", s.then.is_some()), ("else", s.otherwise.is_some())] {
                if set {
                    self.err_key(&join(path, key), format!("`{key}` needs `p`"));
                }
            }
        }
        if nested && s.times.is_some() {
            self.err_key(
                &join(path, "times"),
                "`times` belongs to the random step itself: it consumes one count whichever branch it takes",
            );
        } else if s.times == Some(0) {
            self.err_expected(
                &join(path, "times"),
                "`times: 0` would never run the step",
                "at least 1 (remove the step instead)",
            );
        }
    }

    /// A header value a file writes verbatim (`{ raw: ... }`): one line, within the size a
    /// header may have.
    pub(super) fn raw_header_value(&mut self, path: &str, raw: &str) {
        if raw.contains(['\r', '\n']) {
            self.err(path, "a header value cannot contain a line break");
        }
        if raw.len() > MAX_HEADER_BYTES {
            self.over_limit(
                path,
                format!("a header value of {} bytes", raw.len()),
                format!("at most {MAX_HEADER_BYTES} bytes"),
            );
        }
    }

    /// A step's `retry_after`: a raw value that is one header line, seconds and dates within
    /// the format's limits, a date an HTTP-date can write.
    fn step_retry_after(&mut self, path: &str, s: &StepView<'_>) {
        match s.retry_after {
            Some(RetryAfterSpec::Raw(raw)) => {
                self.raw_header_value(&join(path, "retry_after.raw"), raw);
            }
            Some(RetryAfterSpec::Seconds(seconds))
                if seconds.unsigned_abs() > MAX_RETRY_AFTER_SECONDS.unsigned_abs() =>
            {
                self.over_limit(
                    &join(path, "retry_after"),
                    format!("`retry_after: {seconds}`"),
                    format!(
                        "at most {MAX_RETRY_AFTER_SECONDS} seconds either way (3650 days; send \
                         a larger value with `{{ raw: \"{seconds}\" }}`)"
                    ),
                );
            }
            Some(RetryAfterSpec::HttpDate { offset, .. })
                if offset.0.unsigned_abs() > MAX_DURATION.as_ms() =>
            {
                self.over_limit(
                    &join(path, "retry_after.http_date"),
                    format!("`http_date: {offset}`"),
                    format!("an offset of at most {MAX_DURATION} either way"),
                );
            }
            Some(RetryAfterSpec::HttpDate { offset, .. }) => {
                // The earliest date the step can write is the epoch plus the offset: past
                // the last second of year 9999 no HTTP-date can hold it, and a date clamped
                // to that second would be judged as if it had been sent.
                if let Ok(epoch) = self.s.epoch_unix_ms() {
                    let at_ms = i128::from(epoch) + i128::from(offset.0);
                    // A date is written in whole seconds: the last second holds up to 999 ms.
                    if at_ms >= i128::from(LAST_HTTP_DATE_MS) + 1000 {
                        self.err_expected(
                            &join(path, "retry_after.http_date"),
                            format!(
                                "`http_date: {offset}` from the epoch is a date past \
                                 9999-12-31T23:59:59Z, the last an HTTP-date can write"
                            ),
                            "an offset that keeps the date in year 9999 or before (or an \
                             earlier `epoch`)",
                        );
                    }
                }
            }
            _ => {}
        }
    }
}
