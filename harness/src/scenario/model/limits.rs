//! Run limits, seed ranges and the scenario's status marker.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::duration::Millis;

/// `limits: { max_virtual_time, max_client_attempts, wall }`. Unset limits default to twice
/// the worst case of the scenario's policy per call, times the calls (1 day, and 10,000
/// attempts or 10 per call, when unknown); `wall` defaults to 60 s, or 5 ms per call of the
/// run (all its clients') when that is more. `Scenario::run_limits` gives the limits a run
/// has.
///
/// ```
/// use retrylab::scenario::{LimitsSpec, Millis};
///
/// let mut l = LimitsSpec::default();
/// l.wall = Some(Millis::from_secs(10));
/// assert!(l.max_virtual_time.is_none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LimitsSpec {
    /// Stop the run at this virtual time (at most 3650d).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_virtual_time: Option<Millis>,
    /// Stop after this many attempts by one client (1 to 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_client_attempts: Option<u64>,
    /// Abandon the run after this much real time (at most 1h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<Millis>,
}

impl LimitsSpec {
    /// Sets `limits.wall`, the real-time guard.
    pub fn wall(mut self, wall: Millis) -> Self {
        self.wall = Some(wall);
        self
    }

    /// Sets `limits.max_virtual_time`.
    pub fn max_virtual_time(mut self, limit: Millis) -> Self {
        self.max_virtual_time = Some(limit);
        self
    }

    /// Whether no limit is set.
    pub fn is_default(&self) -> bool {
        *self == LimitsSpec::default()
    }
}

/// The limits one run of a scenario has: what `limits:` sets, and the defaults for the rest
/// (docs/scenario-format.md#limits).
///
/// ```
/// use retrylab::scenario::{Millis, Scenario};
///
/// let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api, calls: 20000 }\n";
/// let limits = Scenario::from_yaml_str(yaml, "x.yaml").unwrap().run_limits();
/// // Without `attempt_timeout` the worst case is unknown: 10 attempts per call.
/// assert_eq!(limits.max_client_attempts, 200_000);
/// assert_eq!(limits.max_virtual_time, Millis::from_secs(86_400));
/// // 20,000 calls get 5 ms of real time each, more than the default minute.
/// assert_eq!(limits.wall, Millis::from_secs(100));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunLimits {
    /// The virtual time at which the run stops.
    pub max_virtual_time: Millis,
    /// The attempts one client may make; the run stops at the attempt past them.
    pub max_client_attempts: u64,
    /// The real time after which the run is abandoned.
    pub wall: Millis,
}

/// `seeds: 1..20`: an inclusive range of seeds (`1..20` is 20 seeds).
///
/// ```
/// use retrylab::scenario::SeedRange;
///
/// let r: SeedRange = "1..20".parse().unwrap();
/// assert_eq!((r.start, r.end, r.len()), (1, 20, 20));
/// assert_eq!(r.to_string(), "1..20");
/// assert!("5..1".parse::<SeedRange>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeedRange {
    /// First seed.
    pub start: u64,
    /// Last seed, included.
    pub end: u64,
}

impl SeedRange {
    /// How many seeds.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start).saturating_add(1)
    }

    /// Never empty: `start <= end` is checked when parsed.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The seeds in order.
    pub fn iter(&self) -> std::ops::RangeInclusive<u64> {
        self.start..=self.end
    }
}

const EXPECTED_SEEDS: &str = "an inclusive seed range such as `1..20`";

impl FromStr for SeedRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("invalid seed range `{s}`, expected {EXPECTED_SEEDS}");
        let (a, b) = s.trim().split_once("..").ok_or_else(bad)?;
        let b = b.strip_prefix('=').unwrap_or(b);
        let start: u64 = a.trim().parse().map_err(|_| bad())?;
        let end: u64 = b.trim().parse().map_err(|_| bad())?;
        if start > end {
            return Err(format!(
                "seed range `{s}` starts after it ends, expected start <= end"
            ));
        }
        Ok(SeedRange { start, end })
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl Serialize for SeedRange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for SeedRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SeedRange;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED_SEEDS)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SeedRange, E> {
                v.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(V)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for SeedRange {
    fn schema_name() -> String {
        "SeedRange".to_string()
    }
    fn json_schema(_: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        super::schema::string_pattern(r"^[0-9]+\.\.=?[0-9]+$", EXPECTED_SEEDS)
    }
}

/// `status: known_failure`: a regression file expected to fail until its bug is fixed.
///
/// ```
/// use retrylab::scenario::ScenarioStatus;
/// let s: ScenarioStatus = serde_saphyr::from_str("known_failure").unwrap();
/// assert_eq!(s, ScenarioStatus::KnownFailure);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScenarioStatus {
    /// Expected to fail; reported as "now passes: remove the marker" when it passes.
    KnownFailure,
}
