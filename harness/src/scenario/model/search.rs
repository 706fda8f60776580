//! `search:`: vary parts of a scenario and check invariants. The search itself is the
//! `search` module, behind retrylab's `search` feature (docs/scenario-format.md#search).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::expect::Expectations;
use super::values::DurationRange;

/// `search: { cases, vary: { <path>: <strategy> }, invariants: { <checks> } }`.
///
/// ```
/// use retrylab::scenario::SearchSpec;
///
/// let s: SearchSpec = serde_saphyr::from_str(
///     "cases: 50\nvary: { network.latency: { durations: [0ms, 50ms] } }\ninvariants: { effects: exactly_once }\n",
/// ).unwrap();
/// assert_eq!(s.cases, 50);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SearchSpec {
    /// Cases to try (default 256; at most 100,000).
    #[serde(default = "default_cases", skip_serializing_if = "is_default_cases")]
    pub cases: u32,
    /// What to vary: a field path of the scenario, and how.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vary: BTreeMap<String, VarySpec>,
    /// Checks that must hold in every case.
    #[serde(default)]
    pub invariants: Expectations,
}

fn default_cases() -> u32 {
    256
}
fn is_default_cases(v: &u32) -> bool {
    *v == 256
}

/// How one field varies.
///
/// ```
/// use retrylab::scenario::VarySpec;
/// let v: VarySpec = serde_saphyr::from_str("{ one_of: [1, 2s, none] }").unwrap();
/// assert!(matches!(v, VarySpec::OneOf(values) if values.len() == 3));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum VarySpec {
    /// A duration in `[min, max]`.
    Durations(DurationRange),
    /// An integer in `[min, max]`.
    Integers([i64; 2]),
    /// A number in `[min, max]`.
    Numbers([f64; 2]),
    /// One of these values.
    OneOf(Vec<serde_json::Value>),
}
