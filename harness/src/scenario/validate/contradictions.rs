//! Static contradictions: expectations that no run of the scenario can meet, found from the
//! scenario alone.
//!
//! Each rule here is certain, never a guess: it holds whatever the seed, the timing or the
//! network do, because it follows from how the built-in client counts attempts and ends a
//! call, or from what the limits allow. A warning is a located [`ScenarioError`] so that
//! `retrylab check` prints it like an error (`file:line:col path: message`), but a warning
//! fails nothing. A check named in `must_fail` is meant to fail, so no warning is given about
//! it.
//!
//! The rules about the built-in client apply only when its attempt count is known: a policy
//! of the table that this version runs, named by `client:`. A `custom:` client is a Rust
//! client whose behaviour the scenario cannot tell, and a scenario that leaves `client:` out
//! (so `no_retry` by default) is one meant for a Rust client under test, which is run
//! with `Scenario::run` and may retry as it likes.

use retrylab_endpoints::{Broker, Refusal};

use crate::scenario::model::checks::{Outcome, StopReason};
use crate::scenario::model::endpoint::EndpointKind;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::step::StepSpec;
use crate::scenario::model::values::CountSpec;
use crate::scenario::yaml::error::{ScenarioError, ScenarioErrors};
use crate::scenario::yaml::locations::{index, join};

use super::reachable;

impl Scenario {
    /// Warnings about expectations that no run can meet, located like errors and sorted by
    /// position; empty for a consistent scenario. They fail nothing: `retrylab check` prints
    /// them, and every run copies them into its report ([`Report::warnings`]).
    ///
    /// The rules, each certain whatever the seed and timing:
    ///
    /// - With a built-in `client:` whose policy allows at most `m` attempts per call:
    ///   `attempts` needing more than `m` (or allowing none: every call makes one);
    ///   `total_attempts` needing more than `m` per call in all, or allowing fewer than one
    ///   per call; `gaps` listing more than `m - 1` gaps (a gap needs an attempt after it);
    ///   `stop_reason: max_attempts_exceeded` with an `attempts` count that excludes `m`.
    /// - With a built-in `client:`: `stop_reason: success` with a call expected to fail, or
    ///   another stop reason with a call expected to succeed (the built-in client returns
    ///   `Ok` exactly when it stops on success); a call expected to succeed although no
    ///   answer it can get is a 2xx: the operation's endpoint never accepts a connection
    ///   (`connect:` only refuses or black-holes), no route matches the operation (every
    ///   request gets 404), or every step its requests can reach answers with a status other
    ///   than 2xx, fails the connection (`fail` without `after_bytes`) or answers after the
    ///   client's `attempt_timeout`. The first call of a scenario whose calls run one after
    ///   another can reach only the steps that the first `m` requests of a script get;
    ///   other calls can reach any step.
    /// - With a built-in `client:` calling a `kind: broker` endpoint: an operation the
    ///   broker answers itself whatever its script says (not `POST /topics/{topic}/messages`,
    ///   a topic missing from its `topics`, a body that is not a JSON object or whose `key` is
    ///   neither a string nor `null`), so that no request reaches a step and no message is
    ///   stored. The broker's own reading of a request decides.
    /// - With any client: `attempts` or `total_attempts` needing more attempts than
    ///   `limits.max_client_attempts`, which stops the run at the attempt past it.
    ///
    /// Checks named in `must_fail` are meant to fail and get no warning. The built-in client
    /// is known when `client:` names a policy this version runs; a `custom:` client, or a
    /// scenario that leaves `client:` out (it is meant for a client written in Rust), gets
    /// only the rules for any client.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
    ///             operation: { endpoint: api }\n\
    ///             client: { exponential: { max_attempts: 3 } }\n\
    ///             expect: { attempts: 4 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// let warnings = scenario.warnings();
    /// assert_eq!(
    ///     warnings[0].to_string(),
    ///     "x.yaml:6:21 expect.attempts: every call must make at least 4 attempts, but the \
    ///      built-in client (`exponential`) makes at most 3 per call"
    /// );
    /// ```
    ///
    /// [`Report::warnings`]: crate::Report::warnings
    pub fn warnings(&self) -> Vec<ScenarioError> {
        let mut rules = Contradictions {
            s: self,
            found: Vec::new(),
        };
        rules.limits();
        rules.epoch_on_real_sockets();
        rules.unreachable_steps();
        if let Some(client) = BuiltIn::of(self) {
            rules.refused_by_broker();
            rules.attempt_counts(&client);
            rules.stop_reason(&client);
            rules.success(&client);
        }
        // And the expectations no run can fail.
        rules.found.extend(self.vacuous());
        ScenarioErrors::capped(rules.found, "warnings").0
    }
}

/// The built-in client of a scenario, when it is known.
struct BuiltIn {
    /// The policy's name, as written under `client:`.
    name: &'static str,
    /// The most attempts it makes per call, the first included.
    max_attempts: u32,
}

impl BuiltIn {
    fn of(s: &Scenario) -> Option<BuiltIn> {
        // `no_retry` is also what a scenario without `client:` gets; only one that writes it
        // says the built-in client is meant.
        if s.client.is_no_retry() && s.locate("client").is_none() {
            return None;
        }
        let policy = s.client.policy().ok()?;
        Some(BuiltIn {
            name: s.client.name(),
            max_attempts: policy.max_attempts()?,
        })
    }
}

struct Contradictions<'a> {
    s: &'a Scenario,
    found: Vec<ScenarioError>,
}

/// The least count `count` allows.
fn min_of(count: CountSpec) -> u64 {
    match count {
        CountSpec::Exactly(n) | CountSpec::Between { min: n, .. } => n,
    }
}

/// The greatest count `count` allows, if bounded.
fn max_of(count: CountSpec) -> Option<u64> {
    match count {
        CountSpec::Exactly(n) => Some(n),
        CountSpec::Between { max, .. } => max,
    }
}

impl Contradictions<'_> {
    /// A warning about `path`, unless one of `checks` is meant to fail.
    fn warn(&mut self, checks: &[&str], path: &str, message: String) {
        if checks
            .iter()
            .any(|check| self.s.must_fail.iter().any(|name| name == check))
        {
            return;
        }
        let warning = self.s.error_at(path, message);
        self.found.push(warning);
    }

    /// `epoch` on `backend: real`: the wall clock there is the real one, so a date the file
    /// chose would be a promise the run does not keep. A warning, not an error: `retrylab
    /// serve` and `--backend real` put files written for the sim network on real sockets,
    /// and those run as well with the real clock.
    fn epoch_on_real_sockets(&mut self) {
        if self.s.backend == crate::scenario::BackendKind::Real && self.s.epoch.is_some() {
            self.warn(
                &[],
                "epoch",
                "`epoch` is not used on `backend: real`: the wall clock there is the real \
                 one, read once as the run starts, and every `Date` and HTTP-date \
                 `Retry-After` is written from it"
                    .to_owned(),
            );
        }
    }

    /// Every call of every client instance.
    fn calls(&self) -> u64 {
        u64::from(self.s.operation.calls) * u64::from(self.s.operation.clients)
    }

    /// Steps no request can reach, whatever the client: a random step's branch with no
    /// chance (`p: 0` never takes `then`, `p: 1` never takes `else`), and a timeline window
    /// that opens when the run has already stopped.
    fn unreachable_steps(&mut self) {
        let stop = self.s.run_limits().max_virtual_time;
        for (name, endpoint) in &self.s.endpoints {
            let mut routes = vec![(
                format!("endpoints.{name}"),
                endpoint.script.as_deref(),
                endpoint.timeline.as_deref(),
            )];
            for (i, route) in endpoint.routes.iter().enumerate() {
                routes.push((
                    format!("endpoints.{name}.routes[{i}]"),
                    route.script.as_deref(),
                    route.timeline.as_deref(),
                ));
            }
            for (path, script, timeline) in routes {
                for (i, step) in script.unwrap_or_default().iter().enumerate() {
                    self.branches_without_chance(step, &format!("{path}.script[{i}]"));
                }
                for (i, window) in timeline.unwrap_or_default().iter().enumerate() {
                    let at = format!("{path}.timeline[{i}]");
                    self.branches_without_chance(&window.as_step(), &at);
                    if window.during.min >= stop {
                        self.warn(
                            &[],
                            &format!("{at}.during"),
                            format!(
                                "this window opens at {} but the run stops at {stop} \
                                 (limits.max_virtual_time): no request can arrive in it",
                                window.during.min
                            ),
                        );
                    }
                }
            }
        }
    }

    /// The branches of the random step `step` at `path`, and of those inside it, that a
    /// probability of 0 or 1 makes unreachable.
    fn branches_without_chance(&mut self, step: &StepSpec, path: &str) {
        let (Some(p), Some(then), Some(otherwise)) = (step.p, &step.then, &step.r#else) else {
            return;
        };
        // A probability lies in [0, 1], so these are its two ends.
        let never = if p.value() <= 0.0 {
            Some("then")
        } else if p.value() >= 1.0 {
            Some("else")
        } else {
            None
        };
        if let Some(key) = never {
            self.warn(
                &[],
                &format!("{path}.{key}"),
                format!(
                    "`p: {}` never takes this branch: write the other step without `p`",
                    p.value()
                ),
            );
        }
        if never != Some("then") {
            self.branches_without_chance(then, &format!("{path}.then"));
        }
        if never != Some("else") {
            self.branches_without_chance(otherwise, &format!("{path}.else"));
        }
    }

    /// `limits.max_client_attempts` against the attempt counts, for any client.
    fn limits(&mut self) {
        let Some(limit) = self.s.limits.max_client_attempts else {
            return;
        };
        let e = &self.s.expect;
        for (check, count, what) in [
            ("attempts", e.attempts, "every call"),
            ("total_attempts", e.total_attempts, "the run"),
        ] {
            let Some(count) = count else { continue };
            let min = min_of(count);
            if min > limit {
                self.warn(
                    &[check],
                    &join("expect", check),
                    format!(
                        "{what} must make at least {min} attempts, but \
                         `limits.max_client_attempts: {limit}` stops the run at attempt {}",
                        limit + 1
                    ),
                );
            }
        }
    }

    /// `attempts`, `total_attempts` and `gaps` against the client's attempt count.
    fn attempt_counts(&mut self, client: &BuiltIn) {
        let e = &self.s.expect;
        let m = u64::from(client.max_attempts);
        let name = client.name;
        if let Some(count) = e.attempts {
            let min = min_of(count);
            if min > m {
                self.warn(
                    &["attempts"],
                    "expect.attempts",
                    format!(
                        "every call must make at least {min} attempts, but the built-in client \
                         (`{name}`) makes at most {m} per call"
                    ),
                );
            }
            if max_of(count) == Some(0) {
                self.warn(
                    &["attempts"],
                    "expect.attempts",
                    format!(
                        "no call may make an attempt, but the built-in client (`{name}`) makes \
                         at least one per call"
                    ),
                );
            }
        }
        if let Some(count) = e.total_attempts {
            let calls = self.calls();
            let (min, most) = (min_of(count), m.saturating_mul(calls));
            if min > most {
                self.warn(
                    &["total_attempts"],
                    "expect.total_attempts",
                    format!(
                        "the run must make at least {min} attempts, but the built-in client \
                         (`{name}`) makes at most {m} per call, {most} in {calls} calls"
                    ),
                );
            }
            if let Some(max) = max_of(count).filter(|max| *max < calls) {
                self.warn(
                    &["total_attempts"],
                    "expect.total_attempts",
                    format!(
                        "the run may make at most {max} attempts, but the built-in client \
                         (`{name}`) makes at least one in each of its {calls} calls"
                    ),
                );
            }
        }
        let gaps = e.gaps.len() as u64;
        if gaps >= m && gaps > 0 {
            // Entry i bounds the gap before attempt i + 2; the first one past the client's
            // last attempt is where the list stops being reachable.
            let unreachable = usize::try_from(m.saturating_sub(1)).unwrap_or(usize::MAX);
            self.warn(
                &["gaps"],
                &index("expect.gaps", unreachable),
                format!(
                    "{gaps} gaps need {} attempts per call, but the built-in client (`{name}`) \
                     makes at most {m}, so this gap never comes",
                    gaps + 1
                ),
            );
        }
    }

    /// `stop_reason` against `outcome`, `outcomes` and `attempts`.
    fn stop_reason(&mut self, client: &BuiltIn) {
        let e = &self.s.expect;
        let Some(reason) = e.stop_reason else {
            return;
        };
        // The built-in client returns `Ok` exactly when it stops on success.
        let ends = if reason == StopReason::Success {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        let why = format!(
            "the built-in client returns {} when it stops with `{reason}`",
            if reason == StopReason::Success {
                "`Ok`"
            } else {
                "`Err`"
            }
        );
        if e.outcome == Some(ends) {
            self.warn(
                &["stop_reason", "outcome"],
                "expect.outcome",
                format!("no call can end in {}: {why}", ends.as_str()),
            );
        }
        for (i, outcome) in e.outcomes.iter().flatten().enumerate() {
            if *outcome == ends {
                self.warn(
                    &["stop_reason", "outcomes"],
                    &index("expect.outcomes", i),
                    format!("call {i} cannot end in {}: {why}", ends.as_str()),
                );
            }
        }
        let m = u64::from(client.max_attempts);
        if let Some(count) = e.attempts {
            if reason == StopReason::MaxAttemptsExceeded && !count.contains(m) {
                self.warn(
                    &["stop_reason", "attempts"],
                    "expect.attempts",
                    format!(
                        "`stop_reason: max_attempts_exceeded` means every call made all {m} \
                         attempts of the built-in client (`{}`), which this count excludes",
                        client.name
                    ),
                );
            }
        }
    }

    /// `outcome: success` (or an `outcomes` entry) that no answer can give.
    fn success(&mut self, client: &BuiltIn) {
        let e = &self.s.expect;
        // The calls run one after another, so the first call's requests come before any
        // other's: each scope's counter is at most at its m-th request during that call.
        let sequential = !self.s.operation.is_concurrent();
        let first_call = sequential.then_some(client.max_attempts);
        if e.outcome == Some(Outcome::Success) {
            if let Some(why) = reachable::never_succeeds(self.s, first_call) {
                self.warn(
                    &["outcome"],
                    "expect.outcome",
                    format!("no call can end in success: {why}"),
                );
            }
        }
        // Every call after the first can reach any step: the answer is the same for all of
        // them, found once rather than once per entry of a list as long as the calls.
        let mut later_calls: Option<Option<String>> = None;
        for (i, outcome) in e.outcomes.iter().flatten().enumerate() {
            if *outcome != Outcome::Success {
                continue;
            }
            let why = if i == 0 && first_call.is_some() {
                reachable::never_succeeds(self.s, first_call)
            } else {
                later_calls
                    .get_or_insert_with(|| reachable::never_succeeds(self.s, None))
                    .clone()
            };
            if let Some(why) = why {
                self.warn(
                    &["outcomes"],
                    &index("expect.outcomes", i),
                    format!("call {i} cannot end in success: {why}"),
                );
            }
        }
    }

    /// An operation a broker refuses on every request: its method, path or topic (404) or
    /// its body (400), read by the broker's own rule, located at what is wrong.
    fn refused_by_broker(&mut self) {
        let s = self.s;
        let name = &s.operation.endpoint;
        let Some(endpoint) = s
            .operation_endpoint()
            .filter(|e| e.kind == EndpointKind::Broker)
        else {
            return;
        };
        let op = &s.operation;
        // A method the http crate cannot parse is an error of its own, reported elsewhere.
        let Ok(method) = http::Method::from_bytes(op.method.as_bytes()) else {
            return;
        };
        // The broker reads the path without its query, as routes do.
        let path = op.path.split('?').next().unwrap_or_default();
        let body = op.body.as_deref().unwrap_or_default();
        let broker = Broker::new().topics(endpoint.topics.iter().cloned());
        let Some(refusal) = broker.refusal(&method, path, body.as_bytes()) else {
            return;
        };
        let (at, why) = match refusal {
            Refusal::NotFound => (
                "operation.path",
                format!(
                    "`{} {path}` is not a send (`POST /topics/{{topic}}/messages`)",
                    op.method
                ),
            ),
            Refusal::TopicNotFound => (
                "operation.path",
                format!("`{path}` names a topic that is not one of its `topics`"),
            ),
            Refusal::BadRequest if op.body.is_none() => (
                "operation",
                "the operation sends no body, and a send's body must be a JSON object".to_owned(),
            ),
            Refusal::BadRequest => (
                "operation.body",
                "the body is not a JSON object with a string `key` (or none)".to_owned(),
            ),
        };
        self.warn(
            &[],
            at,
            format!(
                "broker `{name}` refuses every request of the operation: {why}, so every \
                 request gets {} and reaches no step",
                refusal.status().as_u16()
            ),
        );
    }
}
