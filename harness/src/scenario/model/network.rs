//! The simulated network: base latency, per-endpoint latency and scheduled faults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::duration::Millis;
use super::latency::LatencySpec;

/// The sim backend's network.
///
/// ```
/// use retrylab::scenario::{LatencySpec, Millis, NetworkSpec};
///
/// let n = NetworkSpec::with_latency(Millis::from_ms(1));
/// assert_eq!(n.latency, LatencySpec::Fixed(Millis::from_ms(1)));
/// assert!(NetworkSpec::default().faults.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct NetworkSpec {
    /// One-way latency of every segment (default 0).
    #[serde(default, skip_serializing_if = "LatencySpec::is_zero")]
    pub latency: LatencySpec,
    /// Latency towards particular endpoints, replacing `latency` (built later; at most
    /// 1,000 entries).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub endpoint_latency: BTreeMap<String, LatencySpec>,
    /// Scheduled partitions and crashes (built later; at most 1,000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultSpec>,
}

impl NetworkSpec {
    /// A network with a fixed one-way latency.
    pub fn with_latency(latency: Millis) -> Self {
        NetworkSpec {
            latency: LatencySpec::Fixed(latency),
            ..NetworkSpec::default()
        }
    }

    /// Whether everything is the default.
    pub fn is_default(&self) -> bool {
        *self == NetworkSpec::default()
    }
}

/// A scheduled fault: `{ at, partition: <endpoint>, for }` or
/// `{ at, crash: <endpoint>, restart_after, script_state: keep | reset }`.
///
/// ```
/// use retrylab::scenario::{FaultSpec, Millis};
///
/// let f = FaultSpec::Partition { at: Millis::from_secs(1), endpoint: "api".into(), r#for: Millis::from_secs(5) };
/// assert_eq!(f.endpoint(), "api");
/// assert_eq!(f.window_end(), Some(Millis::from_secs(6)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawFault", into = "RawFault")]
#[non_exhaustive]
pub enum FaultSpec {
    /// Segments to and from the endpoint are held for `for`, then delivered; connects
    /// black-hole meanwhile.
    Partition {
        /// When it starts.
        at: Millis,
        /// The endpoint cut off.
        endpoint: String,
        /// How long it lasts.
        r#for: Millis,
    },
    /// The endpoint's host crashes: its connections reset and it refuses connects.
    Crash {
        /// When it crashes.
        at: Millis,
        /// The endpoint that crashes.
        endpoint: String,
        /// When it comes back (`None`: never).
        restart_after: Option<Millis>,
        /// Whether its scripts resume or start over.
        script_state: ScriptState,
    },
}

impl FaultSpec {
    /// The endpoint the fault hits.
    pub fn endpoint(&self) -> &str {
        match self {
            FaultSpec::Partition { endpoint, .. } | FaultSpec::Crash { endpoint, .. } => endpoint,
        }
    }

    /// When the fault starts.
    pub fn at(&self) -> Millis {
        match self {
            FaultSpec::Partition { at, .. } | FaultSpec::Crash { at, .. } => *at,
        }
    }

    /// When the fault ends (`None` for a crash with no restart).
    pub fn window_end(&self) -> Option<Millis> {
        match self {
            FaultSpec::Partition { at, r#for, .. } => Some(Millis(at.0.saturating_add(r#for.0))),
            FaultSpec::Crash {
                at, restart_after, ..
            } => restart_after.map(|r| Millis(at.0.saturating_add(r.0))),
        }
    }

    /// `partition` or `crash`.
    pub fn kind(&self) -> &'static str {
        match self {
            FaultSpec::Partition { .. } => "partition",
            FaultSpec::Crash { .. } => "crash",
        }
    }
}

/// Whether a restarted endpoint keeps its script position.
///
/// ```
/// use retrylab::scenario::ScriptState;
/// assert_eq!(ScriptState::default(), ScriptState::Keep);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScriptState {
    /// Scripts resume where they were.
    #[default]
    Keep,
    /// Scripts start over.
    Reset,
}

/// The written form of a fault; [`FaultSpec`] is checked from it, so errors about a missing
/// or misplaced key point at the fault's own mapping.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFault {
    at: Millis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    crash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r#for: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restart_after: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    script_state: Option<ScriptState>,
}

impl TryFrom<RawFault> for FaultSpec {
    type Error = String;

    fn try_from(raw: RawFault) -> Result<Self, String> {
        match (raw.partition, raw.crash) {
            (Some(endpoint), None) => {
                if raw.restart_after.is_some() || raw.script_state.is_some() {
                    return Err(
                        "`restart_after` and `script_state` belong to a crash, expected `{ at, partition, for }`"
                            .into(),
                    );
                }
                let Some(r#for) = raw.r#for else {
                    return Err(
                        "a partition needs `for`, expected `{ at, partition: <endpoint>, for: <duration> }`"
                            .into(),
                    );
                };
                Ok(FaultSpec::Partition {
                    at: raw.at,
                    endpoint,
                    r#for,
                })
            }
            (None, Some(endpoint)) => {
                if raw.r#for.is_some() {
                    return Err(
                        "`for` belongs to a partition; a crash takes `restart_after`".into(),
                    );
                }
                Ok(FaultSpec::Crash {
                    at: raw.at,
                    endpoint,
                    restart_after: raw.restart_after,
                    script_state: raw.script_state.unwrap_or_default(),
                })
            }
            (Some(_), Some(_)) => Err(
                "a fault is either a partition or a crash, expected one of `partition`, `crash`"
                    .into(),
            ),
            (None, None) => {
                Err("a fault needs `partition: <endpoint>` or `crash: <endpoint>`".into())
            }
        }
    }
}

impl From<FaultSpec> for RawFault {
    fn from(f: FaultSpec) -> Self {
        match f {
            FaultSpec::Partition {
                at,
                endpoint,
                r#for,
            } => RawFault {
                at,
                partition: Some(endpoint),
                r#for: Some(r#for),
                ..RawFault::default()
            },
            FaultSpec::Crash {
                at,
                endpoint,
                restart_after,
                script_state,
            } => RawFault {
                at,
                crash: Some(endpoint),
                restart_after,
                script_state: (script_state != ScriptState::Keep).then_some(script_state),
                ..RawFault::default()
            },
        }
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for FaultSpec {
    fn schema_name() -> String {
        "FaultSpec".to_string()
    }
    fn json_schema(generator: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        RawFault::json_schema(generator)
    }
}
