//! Backends and turmoil-native faults.

use serde::{Deserialize, Serialize};

use super::duration::Millis;
use super::latency::LatencySpec;
use super::values::Probability;

/// Where a scenario runs (default `sim`).
///
/// ```
/// use retrylab::scenario::BackendKind;
/// assert_eq!(BackendKind::default(), BackendKind::Sim);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BackendKind {
    /// The in-memory TCP model on a paused tokio runtime.
    #[default]
    Sim,
    /// A turmoil simulation: each endpoint a host, the client in a host of its own (with
    /// retrylab's `turmoil` feature).
    Turmoil,
    /// Real sockets on 127.0.0.1 in real time, for clients with a network stack of their own.
    Real,
}

impl BackendKind {
    /// Whether this is `sim` (the default).
    pub fn is_sim(&self) -> bool {
        *self == BackendKind::Sim
    }

    /// The name as written in YAML.
    pub fn name(&self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Turmoil => "turmoil",
            BackendKind::Real => "real",
        }
    }
}

/// Turmoil-native network behaviour: `loss`, a fixed or turmoil-drawn `latency` on every
/// link, `hold` and `partition` windows, and host `crash`es, run on `backend: turmoil`.
///
/// ```
/// use retrylab::scenario::TurmoilSpec;
/// assert!(TurmoilSpec::default().hold.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TurmoilSpec {
    /// Random message loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    /// Every link's latency, one way: a duration, or `{ exponential: { mean, max } }` with
    /// `max`, which turmoil draws per message (it cannot draw `uniform` nor `lognormal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySpec>,
    /// Hold messages to an endpoint, then release them (at most 1,000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hold: Vec<WindowSpec>,
    /// Crash an endpoint's host, then bounce it (at most 1,000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash: Vec<TurmoilCrashSpec>,
    /// Partition an endpoint's host (at most 1,000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition: Vec<WindowSpec>,
}

/// `loss: { fail_rate, repair_rate }`.
///
/// ```
/// use retrylab::scenario::LossSpec;
/// let l: LossSpec = serde_saphyr::from_str("{ fail_rate: 0.1, repair_rate: 0.5 }").unwrap();
/// assert_eq!(l.fail_rate.value(), 0.1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LossSpec {
    /// Probability a working link starts dropping.
    pub fail_rate: Probability,
    /// Probability a dropping link recovers.
    pub repair_rate: Probability,
}

/// `{ at, endpoint, for }`.
///
/// ```
/// use retrylab::scenario::{Millis, WindowSpec};
/// let w: WindowSpec = serde_saphyr::from_str("{ at: 1s, endpoint: api, for: 5s }").unwrap();
/// assert_eq!(w.r#for, Millis::from_secs(5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WindowSpec {
    /// When it starts.
    pub at: Millis,
    /// The endpoint.
    pub endpoint: String,
    /// How long it lasts.
    pub r#for: Millis,
}

/// `{ at, endpoint, bounce_after }`.
///
/// ```
/// use retrylab::scenario::TurmoilCrashSpec;
/// let c: TurmoilCrashSpec = serde_saphyr::from_str("{ at: 1s, endpoint: api, bounce_after: 2s }").unwrap();
/// assert_eq!(c.endpoint, "api");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TurmoilCrashSpec {
    /// When it crashes.
    pub at: Millis,
    /// The endpoint.
    pub endpoint: String,
    /// When it comes back (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounce_after: Option<Millis>,
}
