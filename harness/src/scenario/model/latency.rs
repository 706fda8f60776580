//! Latencies: a fixed duration, or a seeded distribution.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::duration::{EXPECTED_DURATION, Millis, parse_bounded};
use super::values::{DurationRange, one_key_map};

/// A latency: `1500ms`, `{ uniform: [a, b] }`, `{ lognormal: { median, sigma, max } }` or
/// `{ exponential: { mean, max } }`.
///
/// Distributions are drawn from the scenario's labelled random substreams, so a seed gives
/// the same latencies every run: a step's per request, the sim network's per segment (see
/// `docs/scenario-format.md#latency` for the labels and the samplers). An exponential
/// `turmoil.latency` is drawn by turmoil per message, from the simulation's seeded generator.
///
/// ```
/// use retrylab::scenario::{LatencySpec, Millis};
///
/// assert_eq!(LatencySpec::default(), LatencySpec::Fixed(Millis::ZERO));
/// assert_eq!(LatencySpec::fixed(Millis::from_ms(5)).fixed_millis(), Some(Millis::from_ms(5)));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LatencySpec {
    /// Always this long.
    Fixed(Millis),
    /// Uniform between the two bounds, inclusive.
    Uniform(DurationRange),
    /// Log-normal around a median.
    Lognormal(LognormalSpec),
    /// Exponential with a mean.
    Exponential(ExponentialLatencySpec),
}

impl Default for LatencySpec {
    fn default() -> Self {
        LatencySpec::Fixed(Millis::ZERO)
    }
}

impl LatencySpec {
    /// A fixed latency.
    pub fn fixed(d: Millis) -> Self {
        LatencySpec::Fixed(d)
    }

    /// The duration of a fixed latency; `None` for a distribution.
    pub fn fixed_millis(&self) -> Option<Millis> {
        match self {
            LatencySpec::Fixed(d) => Some(*d),
            _ => None,
        }
    }

    /// Whether this is the default, a fixed zero.
    pub fn is_zero(&self) -> bool {
        *self == LatencySpec::Fixed(Millis::ZERO)
    }

    /// The distribution's name (`fixed`, `uniform`, `lognormal`, `exponential`).
    pub fn kind(&self) -> &'static str {
        match self {
            LatencySpec::Fixed(_) => "fixed",
            LatencySpec::Uniform(_) => "uniform",
            LatencySpec::Lognormal(_) => "lognormal",
            LatencySpec::Exponential(_) => "exponential",
        }
    }
}

impl From<Millis> for LatencySpec {
    fn from(d: Millis) -> Self {
        LatencySpec::Fixed(d)
    }
}

/// `{ lognormal: { median, sigma, max } }`.
///
/// ```
/// use retrylab::scenario::{LognormalSpec, Millis};
///
/// let l = LognormalSpec { median: Millis::from_ms(20), sigma: 0.5, max: Some(Millis::from_secs(1)) };
/// assert_eq!(l.median.as_ms(), 20);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LognormalSpec {
    /// The median latency.
    pub median: Millis,
    /// The standard deviation of the underlying normal (shape).
    pub sigma: f64,
    /// Draws above this are clamped to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Millis>,
}

/// `{ exponential: { mean, max } }`.
///
/// ```
/// use retrylab::scenario::{ExponentialLatencySpec, Millis};
///
/// let e = ExponentialLatencySpec { mean: Millis::from_ms(10), max: None };
/// assert_eq!(e.mean.as_ms(), 10);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ExponentialLatencySpec {
    /// The mean latency.
    pub mean: Millis,
    /// Draws above this are clamped to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Millis>,
}

const TAGS: &[&str] = &["uniform", "lognormal", "exponential"];

impl Serialize for LatencySpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            LatencySpec::Fixed(d) => d.serialize(serializer),
            LatencySpec::Uniform(r) => one_entry(serializer, "uniform", r),
            LatencySpec::Lognormal(l) => one_entry(serializer, "lognormal", l),
            LatencySpec::Exponential(e) => one_entry(serializer, "exponential", e),
        }
    }
}

pub(crate) fn one_entry<S: Serializer, T: Serialize>(
    serializer: S,
    key: &str,
    value: &T,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(1))?;
    map.serialize_entry(key, value)?;
    map.end()
}

impl<'de> Deserialize<'de> for LatencySpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LatencySpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a latency: {EXPECTED_DURATION}, or `{{ uniform: [a, b] }}`, `{{ lognormal: {{ median, sigma, max }} }}`, `{{ exponential: {{ mean, max }} }}`"
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LatencySpec, E> {
                parse_bounded(v).map(LatencySpec::Fixed).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LatencySpec, E> {
                Millis::deserialize(de::value::U64Deserializer::<E>::new(v)).map(LatencySpec::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LatencySpec, E> {
                Millis::deserialize(de::value::I64Deserializer::<E>::new(v)).map(LatencySpec::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LatencySpec, E> {
                Millis::deserialize(de::value::F64Deserializer::<E>::new(v)).map(LatencySpec::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LatencySpec, A::Error> {
                one_key_map(map, TAGS, |tag, map| match tag {
                    "uniform" => map.next_value().map(LatencySpec::Uniform),
                    "lognormal" => map.next_value().map(LatencySpec::Lognormal),
                    _ => map.next_value().map(LatencySpec::Exponential),
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}
