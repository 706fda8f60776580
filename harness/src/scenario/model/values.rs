//! Small value types shared by several sections: probabilities, counts, bounds, ranges and
//! HTTP status codes.
//!
//! Values that may be written as a scalar or as a mapping (`attempts: 4 | {min, max}`) have a
//! hand-written `Deserialize` that dispatches in one visitor: serde's `untagged` would buffer
//! the value and lose the source location of every error inside it.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};

use super::duration::Millis;

/// Why a value is out of its domain (the message a located scenario error carries).
///
/// ```
/// use retrylab::scenario::{DurationRange, Millis, Probability};
///
/// assert_eq!(Probability::new(1.5).unwrap_err().to_string(),
///     "1.5 is out of range, expected a number from 0 to 1");
/// assert!(DurationRange::new(Millis::from_secs(2), Millis::from_secs(1)).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A probability or fraction outside `[0, 1]`.
    #[error("{0} is out of range, expected a number from 0 to 1")]
    NotAProbability(f64),
    /// A range `[min, max]` with `min > max`.
    #[error("range starts at {min} after it ends at {max}, expected [min, max] with min <= max")]
    ReversedRange {
        /// The lower bound as written.
        min: Millis,
        /// The upper bound as written.
        max: Millis,
    },
}

/// A number in `[0, 1]`: a probability (`p: 0.3`, `fail_rate`) or a fraction (`jitter: 0.1`).
///
/// ```
/// use retrylab::scenario::Probability;
///
/// assert_eq!(Probability::new(0.25).unwrap().value(), 0.25);
/// assert!(Probability::new(1.5).is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Probability(f64);

impl Probability {
    /// `value` if it lies in `[0, 1]`.
    pub fn new(value: f64) -> Result<Self, ValueError> {
        if (0.0..=1.0).contains(&value) {
            Ok(Probability(value))
        } else {
            Err(ValueError::NotAProbability(value))
        }
    }

    /// The number.
    pub fn value(&self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Probability;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number from 0 to 1")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Probability, E> {
                Probability::new(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Probability, E> {
                Probability::new(v as f64).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Probability, E> {
                Probability::new(v as f64).map_err(E::custom)
            }
        }
        deserializer.deserialize_f64(V)
    }
}

/// A count: exactly `n`, or between optional bounds (`attempts: 4`, `attempts: {min: 2, max: 5}`).
///
/// ```
/// use retrylab::scenario::CountSpec;
///
/// assert!(CountSpec::Exactly(4).contains(4));
/// let between = CountSpec::between(2, 5);
/// assert!(between.contains(3) && !between.contains(6));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CountSpec {
    /// Exactly this many.
    Exactly(u64),
    /// At least `min` (default 0) and at most `max` (default unbounded).
    Between {
        /// Lower bound, inclusive.
        min: u64,
        /// Upper bound, inclusive.
        max: Option<u64>,
    },
}

impl CountSpec {
    /// Between `min` and `max`, inclusive.
    pub fn between(min: u64, max: u64) -> Self {
        CountSpec::Between {
            min,
            max: Some(max),
        }
    }

    /// At least `min`.
    pub fn at_least(min: u64) -> Self {
        CountSpec::Between { min, max: None }
    }

    /// Whether only 0 satisfies this count (`0`, or `{ max: 0 }`).
    pub fn requires_zero(&self) -> bool {
        matches!(
            *self,
            CountSpec::Exactly(0) | CountSpec::Between { max: Some(0), .. }
        )
    }

    /// Whether `n` satisfies this count.
    pub fn contains(&self, n: u64) -> bool {
        match *self {
            CountSpec::Exactly(x) => n == x,
            CountSpec::Between { min, max } => n >= min && max.is_none_or(|m| n <= m),
        }
    }
}

impl From<u64> for CountSpec {
    fn from(n: u64) -> Self {
        CountSpec::Exactly(n)
    }
}

impl Serialize for CountSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            CountSpec::Exactly(n) => serializer.serialize_u64(n),
            CountSpec::Between { min, max } => {
                let mut map = serializer.serialize_map(None)?;
                if min != 0 || max.is_none() {
                    map.serialize_entry("min", &min)?;
                }
                if let Some(max) = max {
                    map.serialize_entry("max", &max)?;
                }
                map.end()
            }
        }
    }
}

const COUNT_KEYS: &[&str] = &["min", "max"];

impl<'de> Deserialize<'de> for CountSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CountSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a count such as `4` or `{ min: 2, max: 5 }`")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CountSpec, E> {
                Ok(CountSpec::Exactly(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CountSpec, A::Error> {
                let (mut min, mut max) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "min" => min = Some(map.next_value::<u64>()?),
                        "max" => max = Some(map.next_value::<u64>()?),
                        other => return Err(de::Error::unknown_field(other, COUNT_KEYS)),
                    }
                }
                match (min, max) {
                    (None, None) => Err(de::Error::custom(
                        "empty count, expected `min`, `max` or both",
                    )),
                    (Some(lo), Some(hi)) if lo > hi => Err(de::Error::custom(format!(
                        "min {lo} is greater than max {hi}, expected min <= max"
                    ))),
                    (min, max) => Ok(CountSpec::Between {
                        min: min.unwrap_or(0),
                        max,
                    }),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// An inclusive range of durations, written `[min, max]`; `min <= max`.
///
/// ```
/// use retrylab::scenario::{DurationRange, Millis};
///
/// let r = DurationRange::new(Millis::ZERO, Millis::from_ms(200)).unwrap();
/// assert!(r.contains(Millis::from_ms(200)));
/// assert!(DurationRange::new(Millis::from_secs(2), Millis::ZERO).is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DurationRange {
    /// Lower bound, inclusive.
    pub min: Millis,
    /// Upper bound, inclusive.
    pub max: Millis,
}

impl DurationRange {
    /// `[min, max]`, if `min <= max`.
    pub fn new(min: Millis, max: Millis) -> Result<Self, ValueError> {
        if min > max {
            Err(ValueError::ReversedRange { min, max })
        } else {
            Ok(DurationRange { min, max })
        }
    }

    /// Whether `d` lies within the range.
    pub fn contains(&self, d: Millis) -> bool {
        self.min <= d && d <= self.max
    }
}

impl Serialize for DurationRange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(2))?;
        seq.serialize_element(&self.min)?;
        seq.serialize_element(&self.max)?;
        seq.end()
    }
}

impl<'de> Deserialize<'de> for DurationRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DurationRange;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of two durations `[min, max]`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DurationRange, A::Error> {
                let min = seq.next_element::<Millis>()?;
                let max = match min {
                    Some(_) => seq.next_element::<Millis>()?,
                    None => None,
                };
                let read = usize::from(min.is_some()) + usize::from(max.is_some());
                let items = count_items(&mut seq, read)?;
                match (min, max) {
                    (Some(min), Some(max)) if items == 2 => {
                        DurationRange::new(min, max).map_err(de::Error::custom)
                    }
                    _ => Err(de::Error::custom(format!(
                        "a range has {}, expected 2: `[min, max]`",
                        counted(items, "duration", "durations")
                    ))),
                }
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// A bound on a duration: `{ within: [a, b] }`, `{ at_least: a }` or `{ at_most: b }`
/// (all inclusive).
///
/// ```
/// use retrylab::scenario::{BoundSpec, Millis};
///
/// let b = BoundSpec::AtLeast(Millis::from_secs(2));
/// assert!(b.contains(Millis::from_secs(3)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum BoundSpec {
    /// Between the two, inclusive.
    Within(DurationRange),
    /// At least this long.
    AtLeast(Millis),
    /// At most this long.
    AtMost(Millis),
}

impl BoundSpec {
    /// `{ within: [min, max] }`; `None` when `min > max`.
    pub fn within(min: Millis, max: Millis) -> Option<Self> {
        DurationRange::new(min, max).ok().map(BoundSpec::Within)
    }

    /// Whether `d` satisfies the bound.
    pub fn contains(&self, d: Millis) -> bool {
        match self {
            BoundSpec::Within(r) => r.contains(d),
            BoundSpec::AtLeast(a) => d >= *a,
            BoundSpec::AtMost(b) => d <= *b,
        }
    }
}

/// Deserializers for HTTP status codes (100-599) kept as plain `u16` in the model.
pub(crate) mod status_code {
    use super::*;

    pub(crate) const EXPECTED: &str = "an HTTP status code from 100 to 599";

    pub(crate) fn check<E: de::Error>(v: u64) -> Result<u16, E> {
        match u16::try_from(v) {
            Ok(code) if (100..=599).contains(&code) => Ok(code),
            _ => Err(E::custom(format!(
                "status code {v} is out of range, expected {EXPECTED}"
            ))),
        }
    }

    struct Code;

    impl Visitor<'_> for Code {
        type Value = u16;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u16, E> {
            check(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u16, E> {
            Err(E::custom(format!(
                "status code {v} is out of range, expected {EXPECTED}"
            )))
        }
    }

    /// One status code.
    pub(crate) struct StatusCode(pub(crate) u16);

    impl<'de> Deserialize<'de> for StatusCode {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Code).map(StatusCode)
        }
    }

    pub(crate) fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
        Option::<StatusCode>::deserialize(d).map(|o| o.map(|c| c.0))
    }

    pub(crate) fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u16>, D::Error> {
        Vec::<StatusCode>::deserialize(d).map(|v| v.into_iter().map(|c| c.0).collect())
    }
}

/// Reads a single-key mapping `{ tag: value }` and hands the tag to `read`, which must read
/// exactly one value; then checks that no second key follows.
pub(crate) fn one_key_map<'de, A, T>(
    mut map: A,
    tags: &'static [&'static str],
    read: impl FnOnce(&str, &mut A) -> Result<T, A::Error>,
) -> Result<T, A::Error>
where
    A: MapAccess<'de>,
{
    let Some(tag) = map.next_key::<String>()? else {
        return Err(de::Error::custom(format!(
            "empty mapping, expected one of {}",
            quoted_list(tags)
        )));
    };
    if !tags.contains(&tag.as_str()) {
        return Err(de::Error::unknown_variant(&tag, tags));
    }
    let value = read(&tag, &mut map)?;
    if let Some(extra) = map.next_key::<String>()? {
        return Err(de::Error::custom(format!(
            "`{extra}` cannot follow `{tag}`, expected a mapping with a single key"
        )));
    }
    Ok(value)
}

/// How many items `seq` holds in all: the `read` ones already taken, and the rest, which
/// are skipped, so that a message can say how many there are.
pub(crate) fn count_items<'de, A: SeqAccess<'de>>(
    seq: &mut A,
    read: usize,
) -> Result<usize, A::Error> {
    let mut items = read;
    while seq.next_element::<de::IgnoredAny>()?.is_some() {
        items += 1;
    }
    Ok(items)
}

/// `no items`, `1 item`, `3 items`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    match n {
        0 => format!("no {many}"),
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// `` `a`, `b`, `c` ``.
pub(crate) fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
