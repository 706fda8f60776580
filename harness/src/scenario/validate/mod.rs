//! Validation: rules that no single field's type can state, and everything else a run would
//! refuse, checked when a scenario is loaded or built.
//!
//! Every rule reports through [`Scenario::error_at`], so each error is located in the file
//! (or at the nearest written ancestor of a defaulted field), and all of them are reported at
//! once. The keys and their rules are those of the
//! [scenario format](../../../../docs/scenario-format.md); this module holds the entry point and
//! what every rule uses, and one submodule per part of a scenario holds its rules.

mod client;
mod command;
mod connect;
pub(crate) mod contradictions;
mod endpoints;
mod expect;
mod grpc;
mod h2;
mod headers;
mod latency;
mod network;
mod operation;
mod reachable;
mod run_size;
mod search;
mod steps;
pub(crate) mod support;
mod top_level;
mod turmoil;
pub(crate) mod vacuous;

use crate::scenario::model::bounds::MAX_BODY_BYTES;
use crate::scenario::model::duration::Millis;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::yaml::error::{ScenarioError, ScenarioErrors};
use crate::scenario::yaml::suggest::{SUGGESTION_STEPS, Suggester};

pub(crate) use top_level::unsupported_version;

/// Every error that stops `scenario` from running, unsorted: the cross-field rules, each
/// policy's own validation and the keys of features not built yet. Loading, the builder and
/// every run call this one function (through [`Scenario::validate`]), so what loads runs.
pub(crate) fn validate(scenario: &Scenario) -> Vec<ScenarioError> {
    // A scenario of another format version is answered with that alone: what this version
    // makes of its keys would only bury the one error that matters.
    if let Some(e) = unsupported_version(&scenario.source, u64::from(scenario.version)) {
        return vec![e];
    }
    let mut v = Validator {
        s: scenario,
        errors: Vec::new(),
        suggester: Suggester::new(SUGGESTION_STEPS),
        protocol: crate::scenario::model::endpoint::Protocol::default(),
    };
    v.top();
    v.endpoints();
    v.network();
    v.operation();
    v.run_size();
    v.policy("client", &scenario.client);
    v.expect();
    v.turmoil();
    v.search();
    v.errors.extend(scenario.unsupported());
    v.errors
}

impl Scenario {
    /// Checks the scenario as loading it and running it do, and gives every problem at once,
    /// sorted by position: the cross-field rules, the policy's own validation, and located
    /// "not supported yet" errors for keys of features not built yet. [`Scenario::load`],
    /// [`Scenario::from_yaml_str`], [`ScenarioBuilder::build`](crate::scenario::ScenarioBuilder::build)
    /// and every run call it, so a scenario that loads can run; call it again after changing
    /// a loaded scenario's fields.
    ///
    /// ```
    /// use retrylab::scenario::{BackendKind, Scenario};
    ///
    /// let mut s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// assert!(s.validate().is_ok());
    /// s.backend = BackendKind::Real;
    /// assert!(s.validate().is_ok());
    /// s.operation.clients = 2;
    /// assert!(s.validate().unwrap_err().to_string().ends_with(
    ///     "operation.clients: a fleet of clients (`clients`) on `backend: real` is not \
    ///      supported yet: run the fleet on `backend: sim` (the default), or set `clients: 1`"));
    /// ```
    pub fn validate(&self) -> Result<(), ScenarioErrors> {
        let errors = validate(self);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ScenarioErrors::reported(errors))
        }
    }
}

/// The scenario under validation and the errors found so far.
struct Validator<'a> {
    s: &'a Scenario,
    errors: Vec<ScenarioError>,
    /// Did-you-means for the unknown names of the file, within one budget of work.
    suggester: Suggester,
    /// The protocol of the endpoint whose steps are being read: HTTP/2's own faults need
    /// `http2`.
    protocol: crate::scenario::model::endpoint::Protocol,
}

/// The names an error lists as what was expected: the first ones, then how many more.
const MAX_LISTED_NAMES: usize = 20;

/// `names`, quoted and joined, the first [`MAX_LISTED_NAMES`] of them and a count of the
/// rest: a message stays short whatever the scenario holds.
fn listed<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = names.len();
    let mut text = names
        .take(MAX_LISTED_NAMES)
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if count > MAX_LISTED_NAMES {
        text.push_str(&format!(" and {} more", count - MAX_LISTED_NAMES));
    }
    text
}

/// RFC 9110 `tchar`: what a method or header name may contain.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Validator<'_> {
    fn err(&mut self, path: &str, message: impl Into<String>) {
        let e = self.s.error_at(path, message);
        self.errors.push(e);
    }

    /// Keeps the error of a conversion the run makes (a method, a header, a latency), if it
    /// fails: validation calls the run's own conversions rather than restating their rules.
    fn converts<T>(&mut self, converted: Result<T, Box<ScenarioError>>) {
        if let Err(e) = converted {
            self.errors.push(*e);
        }
    }

    fn err_key(&mut self, path: &str, message: impl Into<String>) {
        let e = self.s.error_at_key(path, message);
        self.errors.push(e);
    }

    fn err_expected(
        &mut self,
        path: &str,
        message: impl Into<String>,
        expected: impl Into<String>,
    ) {
        let e = self.s.error_at(path, message).with_expected(expected);
        self.errors.push(e);
    }

    /// An error for a name that must be one of `endpoints`, with a did-you-mean.
    fn endpoint_ref(&mut self, path: &str, name: &str) {
        if self.s.endpoints.contains_key(name) {
            return;
        }
        let expected = if self.s.endpoints.is_empty() {
            "the name of an endpoint (none is declared)".to_string()
        } else {
            format!(
                "one of the endpoints: {}",
                listed(self.s.endpoints.keys().map(String::as_str))
            )
        };
        let suggestion = self.suggest(name, self.s.endpoints.keys().map(String::as_str));
        let e = self
            .s
            .error_at(path, format!("no endpoint is named `{name}`"))
            .with_expected(expected)
            .with_suggestion(suggestion);
        self.errors.push(e);
    }

    /// A did-you-mean for the unknown name `word`, while the file's budget for them lasts
    /// (see [`SUGGESTION_STEPS`]): 100,000 misspelled references to 1,000 names cost no
    /// more than a few.
    fn suggest<'c>(
        &mut self,
        word: &str,
        candidates: impl IntoIterator<Item = &'c str>,
    ) -> Option<String> {
        self.suggester.closest(word, candidates)
    }

    fn positive(&mut self, path: &str, d: Millis, what: &str) {
        if d.is_zero() {
            self.err_expected(path, format!("{what} is 0"), "a positive duration");
        }
    }

    /// An error for a count or size past the limits of the format (see
    /// `scenario/bounds.rs`): `what` was written (`1001 steps`), and the
    /// limit, stated as what was expected (`at most 1000 steps in a script`).
    fn over_limit(&mut self, path: &str, what: impl std::fmt::Display, limit: impl Into<String>) {
        self.err_expected(path, format!("{what}, over the limit of the format"), limit);
    }

    /// `count` `items` at `path` (a list), past `cap` of them `per` what holds them.
    fn too_many(&mut self, path: &str, count: usize, cap: usize, items: &str, per: &str) {
        if count > cap {
            self.over_limit(
                path,
                format!("{count} {items}"),
                format!("at most {cap} {items} {per}"),
            );
        }
    }

    /// A value written at `path` (`key: value`) past `cap` `unit`.
    fn at_most(&mut self, path: &str, value: u64, cap: u64, unit: &str) {
        if value > cap {
            let key = path.rsplit('.').next().unwrap_or(path);
            self.over_limit(
                path,
                format!("`{key}: {value}`"),
                format!("at most {cap} {unit}"),
            );
        }
    }

    /// A duration at `path` past `cap`, for the durations a run's own limits are made of (a
    /// file's durations past `internals::MAX_DURATION` are refused when
    /// parsed; this holds a scenario built in code to the same limits).
    fn duration_at_most(&mut self, path: &str, d: Millis, cap: Millis) {
        if d > cap {
            let key = path.rsplit('.').next().unwrap_or(path);
            self.over_limit(path, format!("`{key}: {d}`"), format!("at most {cap}"));
        }
    }

    /// A body (`operation.body`, a step's `body`) of at most
    /// `internals::MAX_BODY_BYTES`.
    fn body(&mut self, path: &str, body: &str) {
        if body.len() > MAX_BODY_BYTES {
            self.over_limit(
                path,
                format!("a body of {} bytes", body.len()),
                format!("at most {MAX_BODY_BYTES} bytes"),
            );
        }
    }

    fn count_at_least_one(&mut self, path: &str, n: Option<u32>, what: &str) {
        if n == Some(0) {
            self.err_expected(path, format!("`{what}: 0` is not allowed"), "at least 1");
        }
    }
}
