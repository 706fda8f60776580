//! Checks: one module per expectation kind, each producing [`Verdict`]s that explain
//! themselves and point at the attempt (docs/scenario-format.md#expectations).
//!
//! Expectations apply to every logical call unless their name starts with `total_`.

mod amplification;
mod attempts;
mod broker_messages;
pub(crate) mod bypass;
mod client_process;
mod conforms;
mod consumer;
mod dead_letter;
mod dead_steps;
mod deadline;
mod distinct_keys;
mod duplicates;
mod effects;
mod gaps;
mod jitter;
mod late;
mod marker;
mod max_rate;
mod not_retried;
mod outcome;
mod requests;
mod retry_after;
mod retry_waves;
mod snapshot;
mod tolerance;
mod total_time;

use retrylab_endpoints::LedgerSnapshot;

use crate::report::{Finding, Report, RunEnd, Verdict};
use crate::scenario::{BoundSpec, CountSpec, Scenario};
use crate::trace::index::TraceIndex;
use crate::trace::{Attempt, Trace, seconds};

pub(crate) use tolerance::Tolerance;

/// What every check reads.
pub(crate) struct Ctx<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) trace: &'a Trace,
    pub(crate) ledgers: &'a [(String, LedgerSnapshot)],
    /// The (client, call) of each request of each ledger, parallel to `ledgers`.
    pub(crate) request_calls: &'a [Vec<Option<(u32, u32)>>],
    pub(crate) epoch_unix_ms: u64,
    pub(crate) long_polls: &'a [crate::trace::LongPoll],
    /// Why the run did not settle before judging, if it did not: what endpoints commit and
    /// receive may be incomplete.
    pub(crate) unsettled: Option<&'a str>,
    /// How the run ended: a check whose evidence a run cut short may be missing says so.
    pub(crate) end: &'a RunEnd,
    /// The slack every timing bound is judged with ([`Scenario::tolerance_ms`]).
    pub(crate) tolerance: Tolerance,
    /// The trace's attempts by call, decisions by attempt and effects by call, looked up
    /// rather than searched, so that every check is linear in the attempts.
    pub(crate) index: TraceIndex<'a>,
}

impl<'a> Ctx<'a> {
    /// What the checks read of `report`, a run of `scenario` whose virtual clock started at
    /// `epoch_unix_ms`.
    fn new(scenario: &'a Scenario, report: &'a Report, epoch_unix_ms: u64) -> Ctx<'a> {
        Ctx {
            scenario,
            trace: &report.trace,
            ledgers: &report.ledgers,
            request_calls: &report.request_calls,
            epoch_unix_ms,
            long_polls: &report.long_polls,
            unsettled: report.unsettled.as_deref(),
            end: &report.end,
            tolerance: Tolerance(scenario.tolerance_ms()),
            index: TraceIndex::new(&report.trace),
        }
    }

    /// The calls of the run, as (client, call) pairs in order.
    pub(crate) fn calls(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.trace.calls.iter().map(|c| (c.client_id, c.call_id))
    }

    /// The attempts of one call, in order.
    pub(crate) fn attempts_of(&self, client: u32, call: u32) -> Vec<&Attempt> {
        self.index.attempts_of(client, call)
    }

    /// Whether `endpoint` is a `kind: dead_letter` endpoint.
    pub(crate) fn is_dead_letter(&self, endpoint: &str) -> bool {
        self.scenario
            .endpoints
            .get(endpoint)
            .is_some_and(|e| e.kind == crate::scenario::EndpointKind::DeadLetter)
    }

    /// `verdict`, or, when the run did not settle (so what endpoints committed and received
    /// may be incomplete), the same finding as not judged.
    pub(crate) fn unless_unsettled(&self, verdict: Verdict) -> Verdict {
        match self.unsettled {
            Some(why) => Verdict::not_judged(
                verdict.check,
                format!("{why}; on the evidence so far: {}", verdict.message),
            )
            .with_findings(verdict.findings),
            None => verdict,
        }
    }

    /// `>= 1.000s (less the 50ms tolerance)`: a bound as a verdict prints it, with the
    /// tolerance it was widened by.
    pub(crate) fn bound_text(&self, bound: BoundSpec) -> String {
        format!("{}{}", bound_text(bound), self.tolerance.note_for(bound))
    }

    /// `call 2` (or `client 1 call 2` in a fleet): how verdicts name a call.
    pub(crate) fn call_name(&self, client: u32, call: u32) -> String {
        if client == 0 {
            format!("call {call}")
        } else {
            format!("client {client} call {call}")
        }
    }
}

/// What judging a run needs besides its scenario and its report.
pub(crate) struct Judging {
    /// The seed the run used.
    pub(crate) seed: u64,
    /// The virtual wall clock at the run's start, for `Retry-After` dates.
    pub(crate) epoch_unix_ms: u64,
    /// Whether the run may compare a snapshot: `false` for a served run, whose client is
    /// outside the process.
    pub(crate) snapshots: bool,
}

/// The one step from a run to its report, taken by every backend and by `serve`: the
/// scenario's warnings, its `expect:` judged (every expectation `not judged` on a run that
/// was cut short), warnings of script steps no request consumed, `must_fail` and
/// `status: known_failure` applied, and the snapshot the run compares named.
pub(crate) fn judge(scenario: &Scenario, mut report: Report, judging: &Judging) -> Report {
    report
        .warnings
        .extend(scenario.warnings().iter().map(ToString::to_string));
    let verdicts = {
        // On real sockets the run's wall clock was the real one, which only its trace knows.
        let epoch_unix_ms = report
            .trace
            .real_epoch_unix_ms()
            .unwrap_or(judging.epoch_unix_ms);
        let ctx = Ctx::new(scenario, &report, epoch_unix_ms);
        evaluate(&ctx)
    };
    if matches!(scenario.client, crate::scenario::ClientSpec::Command(_)) {
        // Before the expectations: a client that never ran explains every other failure.
        report
            .verdicts
            .insert(0, client_process::check(&report.processes));
    }
    match incomplete(&report) {
        Some(why) => report
            .verdicts
            .extend(verdicts.into_iter().map(|v| unjudged(v, &why))),
        None => report.verdicts.extend(verdicts),
    }
    let dead = dead_steps::warnings(scenario, &report.end, &report.ledgers);
    report.warnings.extend(dead);
    marker::apply(scenario, &mut report);
    if judging.snapshots {
        snapshot::name(scenario, &mut report, judging.seed);
    }
    report
}

/// The windows the scenario's `conforms_to` policy allows each retry of `report`'s calls
/// in, as (client, call, window); `None` when the scenario has no `conforms_to`. Computed on
/// the views of the attempts the check judges.
#[cfg(feature = "plot")]
pub(crate) fn conforms_windows(
    scenario: &Scenario,
    report: &Report,
) -> Option<Result<conforms::CallWindows, String>> {
    let spec = scenario.expect.conforms_to.as_ref()?;
    let epoch_unix_ms = match report.trace.real_epoch_unix_ms() {
        Some(ms) => ms,
        None => match scenario.epoch_unix_ms() {
            Ok(ms) => ms,
            Err(error) => return Some(Err(error.to_string())),
        },
    };
    let ctx = Ctx::new(scenario, report, epoch_unix_ms);
    Some(conforms::windows(&ctx, spec))
}

/// Why the run's evidence is incomplete, when it is: the run ended before every call
/// returned (a limit, a panic, the wall clock), so no expectation can be judged on it.
fn incomplete(report: &Report) -> Option<String> {
    let trace = &report.trace;
    let ending = match report.end {
        RunEnd::Completed => return None,
        RunEnd::VirtualTimeLimit => "at limits.max_virtual_time",
        RunEnd::AttemptLimit => "at limits.max_client_attempts",
        RunEnd::WallLimit => "at limits.wall (real time ran out)",
        RunEnd::Panicked => "in a panic",
        RunEnd::NotRunnable => "before it started",
    };
    let returned = trace.calls.iter().filter(|c| c.end_ms.is_some()).count();
    Some(format!(
        "the run ended {ending} at t={} after {} attempts, with {returned} of {} calls \
         returned",
        seconds(trace.end_ms),
        trace.attempts.len(),
        trace.calls.len()
    ))
}

/// An expectation's verdict on a run whose evidence is incomplete: not judged, keeping what
/// the check found so far. Diagnostics (`bypass`) explain the run and stay as they are, and
/// `no_attempt_after` judges a cut-short run itself: an attempt already late is a failure
/// whatever could have come after it.
fn unjudged(verdict: Verdict, why: &str) -> Verdict {
    if verdict.check == bypass::CHECK || verdict.check == deadline::CHECK {
        return verdict;
    }
    Verdict::not_judged(
        verdict.check,
        format!("{why}; on the evidence so far: {}", verdict.message),
    )
    .with_findings(verdict.findings)
}

fn evaluate(ctx: &Ctx<'_>) -> Vec<Verdict> {
    let expect = &ctx.scenario.expect;
    let mut out = Vec::new();
    if let Some(outcome) = expect.outcome {
        out.push(outcome::outcome(ctx, outcome));
    }
    if let Some(outcomes) = &expect.outcomes {
        out.push(outcome::outcomes(ctx, outcomes));
    }
    if let Some(reason) = expect.stop_reason {
        out.push(outcome::stop_reason(ctx, reason));
    }
    if let Some(count) = expect.attempts {
        out.push(attempts::per_call(ctx, count));
    }
    if let Some(count) = expect.total_attempts {
        out.push(attempts::total(ctx, count));
    }
    if let Some(count) = expect.requests_received {
        out.push(attempts::requests_received(ctx, count));
    }
    if !expect.gaps.is_empty() {
        out.push(gaps::gaps(ctx, &expect.gaps));
    }
    if let Some(bound) = expect.gaps_each {
        out.push(gaps::gaps_each(ctx, bound));
    }
    if let Some(spec) = expect.retry_after {
        out.push(retry_after::check(ctx, spec));
    }
    if !expect.not_retried_on.is_empty() {
        out.push(not_retried::check(ctx, &expect.not_retried_on));
    }
    if let Some(spec) = expect.effects {
        out.push(effects::check(ctx, spec));
    }
    if let Some(policy) = &expect.conforms_to {
        out.push(conforms::check(ctx, policy));
    }
    out.extend(expect.jitter.map(|_| jitter::check(ctx)));
    if let Some(bound) = expect.total_time {
        out.push(total_time::check(ctx, bound));
    }
    out.extend(
        expect
            .no_attempt_after
            .map(|limit| deadline::check(ctx, limit)),
    );
    if let Some(count) = expect.dead_lettered {
        out.push(dead_letter::check(ctx, count));
    }
    if let Some(spec) = expect.max_rate {
        out.push(max_rate::check(ctx, spec));
    }
    if let Some(spec) = expect.amplification {
        out.push(amplification::check(ctx, spec));
    }
    if let Some(spec) = expect.retry_waves {
        out.push(retry_waves::check(ctx, spec));
    }
    if let Some(n) = expect.late_requests {
        out.push(late::check(ctx, n));
    }
    if let Some(on) = expect.same_idempotency_key {
        out.push(requests::same_idempotency_key(ctx, on));
    }
    if let Some(on) = expect.same_body {
        out.push(requests::same_body(ctx, on));
    }
    if let Some(spec) = &expect.header {
        out.push(requests::header(ctx, spec));
    }
    if let Some(expected) = expect.distinct_keys {
        out.push(distinct_keys::check(ctx, expected));
    }
    if let Some(spec) = expect.duplicates {
        out.push(duplicates::check(ctx, spec));
    }
    if let Some(spec) = expect.consumer {
        out.push(consumer::check(ctx, spec));
    }
    // A program with its own network stack bypasses nothing: it reaches the endpoints'
    // sockets, and `client_process` says when it sent no request.
    if !matches!(ctx.scenario.client, crate::scenario::ClientSpec::Command(_)) {
        out.extend(bypass::diagnose(ctx));
    }
    out
}

/// `4`, `between 2 and 5`, `at least 3`: a count as a verdict says it.
pub(crate) fn count_text(count: CountSpec) -> String {
    match count {
        CountSpec::Exactly(n) => n.to_string(),
        CountSpec::Between {
            min,
            max: Some(max),
        } => format!("between {min} and {max}"),
        CountSpec::Between { min, max: None } => format!("at least {min}"),
    }
}

/// `within [0.000s, 0.400s]`, `>= 2.000s`, `<= 1.000s`.
fn bound_text(bound: BoundSpec) -> String {
    match bound {
        BoundSpec::Within(r) => format!(
            "within [{}, {}]",
            seconds(r.min.as_ms()),
            seconds(r.max.as_ms())
        ),
        BoundSpec::AtLeast(a) => format!(">= {}", seconds(a.as_ms())),
        BoundSpec::AtMost(b) => format!("<= {}", seconds(b.as_ms())),
    }
}

/// Like [`verdict`], for a check that needs evidence: with nothing to judge (`evidence` is
/// 0) and nothing wrong, the verdict is `not judged` and says what was missing (`nothing`),
/// so a check never passes on nothing.
pub(crate) fn verdict_on<P: Into<Finding>>(
    check: &str,
    evidence: usize,
    nothing: impl FnOnce() -> String,
    problems: Vec<P>,
    ok: impl FnOnce() -> String,
) -> Verdict {
    if evidence == 0 && problems.is_empty() {
        Verdict::not_judged(check, nothing())
    } else {
        verdict(check, problems, ok)
    }
}

/// Problems a verdict's message lists; the rest are counted, so a check that fails on
/// every one of 10,000 calls still prints one readable line.
const LISTED_PROBLEMS: usize = 10;

/// A verdict from a list of problems: passes when there are none.
pub(crate) fn verdict<P: Into<Finding>>(
    check: &str,
    problems: Vec<P>,
    ok: impl FnOnce() -> String,
) -> Verdict {
    if problems.is_empty() {
        return Verdict::pass(check, ok());
    }
    let problems: Vec<Finding> = problems.into_iter().map(Into::into).collect();
    let listed: Vec<&str> = problems
        .iter()
        .take(LISTED_PROBLEMS)
        .map(|f| f.message.as_str())
        .collect();
    let mut message = listed.join("; ");
    if problems.len() > LISTED_PROBLEMS {
        message.push_str(&format!(
            "; and {} more like these ({} in all)",
            problems.len() - LISTED_PROBLEMS,
            problems.len()
        ));
    }
    Verdict::fail(check, message).with_findings(problems)
}

/// Runs `yaml` with seed 0, lets `edit` change its report (its trace, or what the trace
/// attributed requests to), and gives `judge` the context the checks read, over the edited
/// report.
#[cfg(test)]
pub(super) fn with_edited_report<T>(
    yaml: &str,
    edit: impl FnOnce(&mut crate::Report),
    judge: impl FnOnce(&Ctx<'_>) -> T,
) -> T {
    let scenario = crate::Scenario::from_yaml_str(yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let mut report = scenario.run_builtin_with_seed(0);
    edit(&mut report);
    judge(&Ctx::new(&scenario, &report, 0))
}
