//! `search:`: property search over varied scenario values.

use super::Validator;
use crate::scenario::model::bounds::MAX_SEARCH_CASES;
use crate::scenario::model::search::VarySpec;
use crate::scenario::yaml::locations::join;

impl Validator<'_> {
    pub(super) fn search(&mut self) {
        let Some(search) = &self.s.search else {
            return;
        };
        if search.cases == 0 {
            self.err_expected("search.cases", "`cases: 0` is not allowed", "at least 1");
        }
        self.at_most(
            "search.cases",
            u64::from(search.cases),
            u64::from(MAX_SEARCH_CASES),
            "cases",
        );
        for (key, vary) in &search.vary {
            let vp = join("search.vary", key);
            if key.trim().is_empty() {
                self.err_key(&vp, "empty path");
            }
            // A path into an endpoint names one the file declares: a case would otherwise
            // make the endpoint up, and fail on what it lacks.
            if let Some(name) = key
                .strip_prefix("endpoints.")
                .and_then(|rest| rest.split('.').next())
            {
                self.endpoint_ref(&vp, name);
            }
            match vary {
                VarySpec::Numbers([a, b]) if !a.is_finite() || !b.is_finite() => self.err_expected(
                    &vp,
                    format!("range [{a}, {b}] has a bound that is not a finite number"),
                    "[min, max] of two finite numbers with min <= max",
                ),
                VarySpec::Integers([a, b]) if a > b => self.err_expected(
                    &vp,
                    format!("range [{a}, {b}] is reversed"),
                    "[min, max] with min <= max",
                ),
                VarySpec::Numbers([a, b])
                    if a.partial_cmp(b) != Some(std::cmp::Ordering::Less) && a != b =>
                {
                    self.err_expected(
                        &vp,
                        format!("range [{a}, {b}] is reversed"),
                        "[min, max] with min <= max",
                    )
                }
                VarySpec::OneOf(values) if values.is_empty() => {
                    self.err_expected(&vp, "no values to choose from", "at least one value")
                }
                _ => {}
            }
        }
        if search.invariants.is_empty() {
            // Every case would hold whatever the client did: a search that tests nothing.
            self.err_expected(
                "search.invariants",
                "no invariant to check",
                "at least one check, such as `conforms_to` or `attempts`",
            );
        }
        if let Some(c) = &search.invariants.conforms_to {
            self.policy("search.invariants.conforms_to", c);
        }
    }
}
