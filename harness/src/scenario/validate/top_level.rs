//! The top-level keys: `version`, `name`, that there is an endpoint, `must_fail`, `limits`,
//! `drain`, `tolerance` and `seeds`
//! ([scenario format](../../../../docs/scenario-format.md#top-level)).

use std::collections::BTreeSet;

use super::Validator;
use crate::scenario::model::bounds::{
    MAX_ATTEMPTS, MAX_DURATION, MAX_SEEDS, MAX_SWEEP_CALLS, MAX_TOLERANCE, MAX_WALL,
};
use crate::scenario::model::expect::Expectations;
use crate::scenario::yaml::error::ScenarioError;
use crate::scenario::yaml::locations::{SourceInfo, index};

/// The one error for a file written for another version of the format than 1, located at
/// its `version:`; `None` for version 1.
pub(crate) fn unsupported_version(source: &SourceInfo, version: u64) -> Option<ScenarioError> {
    (version != 1).then(|| {
        ScenarioError::new(
            source.file.clone(),
            source.locate_nearest("version", false),
            "version",
            format!("unsupported format version {version}"),
        )
        .with_expected("1")
    })
}

impl Validator<'_> {
    pub(super) fn top(&mut self) {
        let s = self.s;
        if s.name.trim().is_empty() {
            self.err_expected("name", "empty name", "a name for reports and snapshots");
        }
        if s.endpoints.is_empty() {
            self.err_expected("endpoints", "no endpoints", "at least one endpoint");
        }
        self.converts(s.epoch_unix_ms());
        if s.status.is_some() && !s.must_fail.is_empty() {
            self.err(
                "must_fail",
                "`must_fail` cannot be combined with `status: known_failure`; a known failure is expected to fail until fixed, a must_fail scenario always fails the named checks",
            );
        }
        // A search's cases are judged by its invariants, so those are what it may fail.
        let (present, set_in) = match &s.search {
            Some(search) => (search.invariants.check_names(), "`search.invariants:`"),
            None => (s.expect.check_names(), "`expect:`"),
        };
        // Written once: a list of 150,000 names gets each error without building them again.
        let known = format!(
            "one of {}",
            Expectations::CHECK_NAMES
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let set = format!("a check set in {set_in} (set: {})", present.join(", "));
        let mut seen = BTreeSet::new();
        for (i, name) in s.must_fail.iter().enumerate() {
            let path = index("must_fail", i);
            if !Expectations::CHECK_NAMES.contains(&name.as_str()) {
                let suggestion = self.suggest(name, Expectations::CHECK_NAMES.iter().copied());
                let e = self
                    .s
                    .error_at(&path, format!("unknown check `{name}`"))
                    .with_expected(known.clone())
                    .with_suggestion(suggestion);
                self.errors.push(e);
            } else if !present.contains(&name.as_str()) {
                self.err_expected(
                    &path,
                    format!("`{name}` is not among the checks of {set_in}, so it cannot fail"),
                    set.clone(),
                );
            }
            if !seen.insert(name) {
                self.err(&path, format!("`{name}` is listed twice"));
            }
        }
        let limits = s.limits;
        if let Some(t) = limits.max_virtual_time {
            self.positive("limits.max_virtual_time", t, "`max_virtual_time`");
            self.duration_at_most("limits.max_virtual_time", t, MAX_DURATION);
        }
        if let Some(t) = limits.wall {
            self.positive("limits.wall", t, "`wall`");
            self.duration_at_most("limits.wall", t, MAX_WALL);
        }
        self.duration_at_most("drain", s.drain, MAX_DURATION);
        if let Some(t) = s.tolerance {
            self.duration_at_most("tolerance", t, MAX_TOLERANCE);
        }
        match limits.max_client_attempts {
            Some(0) => self.err_expected(
                "limits.max_client_attempts",
                "`max_client_attempts: 0` is not allowed",
                "at least 1",
            ),
            Some(n) => self.at_most(
                "limits.max_client_attempts",
                n,
                MAX_ATTEMPTS,
                "attempts per run",
            ),
            None => {}
        }
        self.seeds();
    }

    /// `seeds:`: each seed is a run of its own, so the range and its calls are bounded
    /// before anything is run (or listed) per seed.
    fn seeds(&mut self) {
        let Some(range) = self.s.seeds else {
            return;
        };
        // In 128 bits: `0..18446744073709551615` holds 2^64 seeds.
        let seeds = u128::from(range.end) - u128::from(range.start.min(range.end)) + 1;
        let o = &self.s.operation;
        let calls = u128::from(o.calls) * u128::from(o.clients);
        if seeds > u128::from(MAX_SEEDS) {
            self.over_limit(
                "seeds",
                format!("a range of {seeds} seeds"),
                format!("at most {MAX_SEEDS} seeds, each run as a test of its own"),
            );
        } else if seeds * calls > u128::from(MAX_SWEEP_CALLS) {
            self.over_limit(
                "seeds",
                format!(
                    "{seeds} seeds of {calls} calls each ({} calls)",
                    seeds * calls
                ),
                format!("at most {MAX_SWEEP_CALLS} calls in a sweep of seeds"),
            );
        }
    }
}
