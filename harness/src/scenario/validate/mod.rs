//! Cross-field validation: rules that no single field's type can state.
//!
//! Every rule reports through [`Scenario::error_at`], so each error is located in the file
//! (or at the nearest written ancestor of a defaulted field), and all of them are reported at
//! once. The keys and their rules are those of the
//! [scenario format](../../../../docs/scenario-format.md); this module holds the entry point and
//! what every rule uses, and one submodule per part of a scenario holds its rules.

mod client;
mod endpoints;
mod epoch;
mod expect;
mod headers;
mod latency;
mod network;
mod operation;
mod search;
mod steps;
mod top_level;
mod turmoil;

use super::duration::Millis;
use super::error::{ScenarioError, did_you_mean};
use super::model::Scenario;

/// Every cross-field error of `scenario`, unsorted.
pub(crate) fn validate(scenario: &Scenario) -> Vec<ScenarioError> {
    let mut v = Validator {
        s: scenario,
        errors: Vec::new(),
    };
    v.top();
    v.endpoints();
    v.network();
    v.operation();
    v.policy("client", &scenario.client);
    v.expect();
    v.turmoil();
    v.search();
    v.errors
}

/// The scenario under validation and the errors found so far.
struct Validator<'a> {
    s: &'a Scenario,
    errors: Vec<ScenarioError>,
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
        let known: Vec<&str> = self.s.endpoints.keys().map(String::as_str).collect();
        let expected = if known.is_empty() {
            "the name of an endpoint (none is declared)".to_string()
        } else {
            format!(
                "one of the endpoints: {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let e = self
            .s
            .error_at(path, format!("no endpoint is named `{name}`"))
            .with_expected(expected)
            .with_suggestion(did_you_mean(name, known));
        self.errors.push(e);
    }

    fn positive(&mut self, path: &str, d: Millis, what: &str) {
        if d.is_zero() {
            self.err_expected(path, format!("{what} is 0"), "a positive duration");
        }
    }

    fn count_at_least_one(&mut self, path: &str, n: Option<u32>, what: &str) {
        if n == Some(0) {
            self.err_expected(path, format!("`{what}: 0` is not allowed"), "at least 1");
        }
    }
}
