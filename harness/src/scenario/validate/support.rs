//! What this version can run: the one list of parsed-but-not-built features.
//!
//! The whole v1 format parses from the start; a key whose feature is not built yet is
//! answered here with a located "not supported yet" error when a scenario is loaded, built
//! or run, never with "unknown key". Building a feature deletes that feature's line below
//! (and marks its rows built in `docs/scenario-format.md`).
//!
//! Where the run's plan turns such a value into what the run uses (a latency, a fault, a
//! `Retry-After` date), it calls the same functions as this list, so the two cannot
//! disagree about what runs.

use crate::scenario::model::client::ClientSpec;
use crate::scenario::model::duration::{Millis, OffsetMillis};
use crate::scenario::model::endpoint::EndpointSpec;
use crate::scenario::model::retry_after::RetryAfterSpec;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::step::{StepSpec, TimelineStep};
use crate::scenario::model::turmoil::BackendKind;
use crate::scenario::yaml::error::{ScenarioError, ScenarioErrors};
use crate::scenario::yaml::locations::{index, join};

/// The error of a key that needs a feature of retrylab this build lacks: one of the errors
/// that say the build is lacking rather than the scenario being wrong
/// ([`ScenarioError::lacking_feature`]). It names both ways to turn the feature on, since
/// the same error reaches a test suite (`cargo test`) and the CLI (`retrylab run`).
fn lacking_message(key: &str, feature: &str) -> String {
    format!(
        "{key} needs retrylab's `{feature}` feature, which this build lacks: run the tests \
         with `cargo test --features retrylab/{feature}` (or add `features = [\"{feature}\"]` \
         to retrylab in Cargo.toml), or install the CLI with `cargo install retrylab \
         --features cli,{feature}`"
    )
}

impl Scenario {
    /// Located "not supported yet" errors for every key of this scenario whose feature is not
    /// built in this version: the keys `docs/scenario-format.md` marks planned (except
    /// partitions and latencies, which the sim network runs), policies the policy table does
    /// not mark built ([`ClientSpec::is_built`]), and `backend: turmoil` in a build without
    /// the `turmoil` feature. Empty when the scenario can run. [`Scenario::validate`] includes
    /// them, so loading such a file fails with the errors a run would give.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let yaml = "version: 1\nname: x\nbackend: real\nendpoints:\n  api: {}\n\
    ///             operation: { endpoint: api, clients: 2 }\n";
    /// let errors = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
    /// assert_eq!(errors.to_string(),
    ///            "x.yaml:6:29 operation.clients: a fleet of clients (`clients`) on `backend: real` \
    ///             is not supported yet: run the fleet on `backend: sim` (the default), or set \
    ///             `clients: 1`");
    ///
    /// // The same key set on a loaded scenario.
    /// let mut s = Scenario::from_yaml_str(&yaml.replace(", clients: 2", ""), "x.yaml").unwrap();
    /// assert!(s.unsupported().is_empty());
    /// s.operation.clients = 2;
    /// assert_eq!(s.unsupported()[0].message,
    ///            "a fleet of clients (`clients`) on `backend: real` is not supported yet: run \
    ///             the fleet on `backend: sim` (the default), or set `clients: 1`");
    /// ```
    pub fn unsupported(&self) -> Vec<ScenarioError> {
        let mut out = Unsupported {
            s: self,
            errors: Vec::new(),
        };
        out.scenario();
        ScenarioErrors::sorted(out.errors).0
    }

    /// `retry_after: { http_date: <offset> }` at `path` as this version runs it, a date in the
    /// future; a date in the past is not supported yet.
    pub(crate) fn http_date_offset(
        &self,
        path: &str,
        offset: OffsetMillis,
    ) -> Result<Millis, Box<ScenarioError>> {
        u64::try_from(offset.0).map(Millis::from_ms).map_err(|_| {
            Box::new(self.error_at_key(
                &join(path, "http_date"),
                format!(
                    "a date in the past (`http_date: {offset}`) is not supported yet; write the date with `raw:`"
                ),
            ))
        })
    }

    /// "`what` is not supported yet", and `instead`: what to write in its place, so that the
    /// error says how to go on rather than only what stops.
    fn not_supported(
        &self,
        path: &str,
        what: impl std::fmt::Display,
        instead: impl std::fmt::Display,
    ) -> ScenarioError {
        self.error_at_key(path, format!("{what} is not supported yet: {instead}"))
    }
}

struct Unsupported<'a> {
    s: &'a Scenario,
    errors: Vec<ScenarioError>,
}

impl Unsupported<'_> {
    fn flag(&mut self, path: &str, what: impl std::fmt::Display, instead: impl std::fmt::Display) {
        let e = self.s.not_supported(path, what, instead);
        self.errors.push(e);
    }

    fn push(&mut self, result: Result<impl Sized, Box<ScenarioError>>) {
        if let Err(e) = result {
            self.errors.push(*e);
        }
    }

    fn scenario(&mut self) {
        let s = self.s;
        for (name, e) in &s.endpoints {
            // A name over the format's limit is an error already, and every path below it
            // would copy it (a name of megabytes, once per step).
            if crate::scenario::model::bounds::endpoint_name_too_long(name) {
                continue;
            }
            self.endpoint(&join("endpoints", name), e);
        }
        // A fleet runs on the sim network, whose one clock orders every client's instants.
        if s.backend != BackendKind::Sim {
            let backend = match s.backend {
                BackendKind::Real => "real",
                BackendKind::Turmoil => "turmoil",
                BackendKind::Sim => "sim",
            };
            if s.operation.clients != 1 {
                self.flag(
                    "operation.clients",
                    format_args!("a fleet of clients (`clients`) on `backend: {backend}`"),
                    "run the fleet on `backend: sim` (the default), or set `clients: 1`",
                );
            }
            if s.operation.start.is_some() {
                self.flag(
                    "operation.start",
                    format_args!("`start` on `backend: {backend}`"),
                    "run it on `backend: sim` (the default), or remove `start`",
                );
            }
        }
        // A stored message is attributed to a call, not yet to its client: the message
        // checks would take client 1's call 0 for client 0's.
        if s.operation.clients > 1 {
            let e = &s.expect;
            for (key, set) in [
                ("duplicates", e.duplicates.is_some()),
                ("consumer", e.consumer.is_some()),
            ] {
                if set {
                    self.flag(
                        &join("expect", key),
                        format_args!("the `{key}` check in a fleet (`clients` above 1)"),
                        format_args!(
                            "check `{key}` in a scenario of its own with `clients: 1`, or \
                             remove it from this one"
                        ),
                    );
                }
            }
        }
        self.policy("client", &s.client);
        if let Some(c) = &s.expect.conforms_to {
            self.policy("expect.conforms_to", c);
        }
        // Built behind retrylab's `turmoil` feature (the simulator is a dependency of its own).
        if cfg!(not(feature = "turmoil")) && s.backend == BackendKind::Turmoil {
            let e = s
                .error_at_key("backend", lacking_message("`backend: turmoil`", "turmoil"))
                .lacking("turmoil");
            self.errors.push(e);
        }
        // Built behind retrylab's `search` feature (proptest is a dependency of its own).
        if cfg!(not(feature = "search")) && s.search.is_some() {
            let e = s
                .error_at_key("search", lacking_message("`search`", "search"))
                .lacking("search");
            self.errors.push(e);
        }
    }

    fn endpoint(&mut self, path: &str, e: &EndpointSpec) {
        // The bucket, and dedupe, answer at once: their answers are responses, never a
        // delay, a failure, a draw or a commit.
        if let Some(step) = e.when_empty.as_ref().and_then(|w| w.step()) {
            self.immediate_answer(
                &join(path, "when_empty"),
                step,
                "a rate limiter's `when_empty`",
            );
        }
        if let Some(dedupe) = &e.dedupe {
            let dp = join(path, "dedupe");
            for (key, answer) in [
                ("in_flight", &dedupe.in_flight),
                ("mismatch", &dedupe.mismatch),
            ] {
                if let Some(step) = answer.step() {
                    self.immediate_answer(&join(&dp, key), step, &format!("`dedupe.{key}`"));
                }
            }
        }
        if let Some(steps) = &e.script {
            self.steps(&join(path, "script"), steps);
        }
        if let Some(steps) = &e.timeline {
            self.timeline(&join(path, "timeline"), steps);
        }
        for (i, r) in e.routes.iter().enumerate() {
            let rp = index(&join(path, "routes"), i);
            if let Some(steps) = &r.script {
                self.steps(&join(&rp, "script"), steps);
            }
            if let Some(steps) = &r.timeline {
                self.timeline(&join(&rp, "timeline"), steps);
            }
        }
    }

    /// A response an endpoint sends as soon as the request is read, at `path`, described to
    /// the reader as `what`.
    fn immediate_answer(&mut self, path: &str, step: &StepSpec, what: &str) {
        for (key, set) in [
            ("latency", step.latency.is_some()),
            ("trickle", step.trickle.is_some()),
            ("fail", step.fail.is_some()),
            ("commit", step.commit.is_some()),
            ("p", step.p.is_some()),
            ("times", step.times.is_some()),
        ] {
            if set {
                self.flag(
                    &join(path, key),
                    format_args!("`{key}` in {what}"),
                    format_args!(
                        "remove `{key}`: this answer is sent as soon as the request is read"
                    ),
                );
            }
        }
        self.step(path, step);
    }

    fn timeline(&mut self, path: &str, steps: &[TimelineStep]) {
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), &step.as_step());
        }
    }

    fn steps(&mut self, path: &str, steps: &[StepSpec]) {
        for (i, step) in steps.iter().enumerate() {
            self.step(&index(path, i), step);
        }
    }

    fn step(&mut self, path: &str, step: &StepSpec) {
        // Every latency distribution runs on a step: the endpoint draws it.
        if let Some(RetryAfterSpec::HttpDate { offset, .. }) = &step.retry_after {
            self.push(self.s.http_date_offset(&join(path, "retry_after"), *offset));
        }
        if let Some(then) = &step.then {
            self.step(&join(path, "then"), then);
        }
        if let Some(otherwise) = &step.r#else {
            self.step(&join(path, "else"), otherwise);
        }
    }

    fn policy(&mut self, path: &str, policy: &ClientSpec) {
        let name = policy.name();
        // A command is a client, not a policy: built, and validated on its own.
        if !ClientSpec::is_built(name) && !matches!(policy, ClientSpec::Command(_)) {
            let built: Vec<&str> = ClientSpec::names()
                .filter(|n| *n != "custom" && ClientSpec::is_built(n))
                .collect();
            self.flag(
                &join(path, name),
                format_args!("the `{name}` policy"),
                format_args!(
                    "write one of the policies this version runs ({}), or `custom: <name>` \
                     for a client of your own",
                    built.join(", ")
                ),
            );
        }
    }
}
