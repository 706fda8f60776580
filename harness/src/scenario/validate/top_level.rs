//! The top-level keys: `version`, `name`, that there is an endpoint, `must_fail` and `limits`
//! ([scenario format](../../../../docs/scenario-format.md#top-level)).

use super::Validator;
use crate::scenario::error::{ScenarioError, did_you_mean};
use crate::scenario::expect::Expectations;
use crate::scenario::locations::{SourceInfo, index};

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
        let present = s.expect.check_names();
        let mut seen = Vec::new();
        for (i, name) in s.must_fail.iter().enumerate() {
            let path = index("must_fail", i);
            if !Expectations::CHECK_NAMES.contains(&name.as_str()) {
                let e = self
                    .s
                    .error_at(&path, format!("unknown check `{name}`"))
                    .with_expected(format!(
                        "one of {}",
                        Expectations::CHECK_NAMES
                            .iter()
                            .map(|c| format!("`{c}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .with_suggestion(did_you_mean(
                        name,
                        Expectations::CHECK_NAMES.iter().copied(),
                    ));
                self.errors.push(e);
            } else if !present.contains(&name.as_str()) {
                self.err_expected(
                    &path,
                    format!("`{name}` is not among the checks of `expect:`, so it cannot fail"),
                    format!("a check set in `expect:` (set: {})", present.join(", ")),
                );
            }
            if seen.contains(&name) {
                self.err(&path, format!("`{name}` is listed twice"));
            }
            seen.push(name);
        }
        let limits = s.limits;
        if let Some(t) = limits.max_virtual_time {
            self.positive("limits.max_virtual_time", t, "`max_virtual_time`");
        }
        if let Some(t) = limits.wall {
            self.positive("limits.wall", t, "`wall`");
        }
        if limits.max_client_attempts == Some(0) {
            self.err_expected(
                "limits.max_client_attempts",
                "`max_client_attempts: 0` is not allowed",
                "at least 1",
            );
        }
    }
}
