//! Header lists: a mapping, or a list of pairs when a name repeats.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};

use super::values::{count_items, counted};

/// HTTP headers, in order.
///
/// Written as a mapping (`{ Retry-After: "2", Content-Type: text/plain }`) or, when a name
/// repeats, as a list of pairs (`[[Retry-After, "2"], [Retry-After, "5"]]`; a list item may
/// also be a one-key mapping `- Retry-After: "2"`). The written form is kept so a scenario
/// serializes back the way it was written. A list holds at most 64 entries, of 64 KiB of names
/// and values in all (`internals::MAX_HEADERS`,
/// `internals::MAX_HEADER_BYTES`).
///
/// ```
/// use retrylab::scenario::HeadersSpec;
///
/// let h = HeadersSpec::pairs([("Retry-After", "2"), ("Retry-After", "5")]);
/// assert_eq!(h.get_all("retry-after").collect::<Vec<_>>(), ["2", "5"]);
/// assert_eq!(HeadersSpec::map([("X-A", "1")]).len(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeadersSpec {
    /// Written as a mapping: names are distinct.
    Map(Vec<(String, String)>),
    /// Written as a list of `[name, value]` pairs: names may repeat.
    Pairs(Vec<(String, String)>),
}

impl Default for HeadersSpec {
    fn default() -> Self {
        HeadersSpec::Map(Vec::new())
    }
}

impl HeadersSpec {
    /// Headers written as a mapping.
    pub fn map<N: Into<String>, V: Into<String>>(
        entries: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        HeadersSpec::Map(
            entries
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }

    /// Headers written as a list of pairs.
    pub fn pairs<N: Into<String>, V: Into<String>>(
        entries: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        HeadersSpec::Pairs(
            entries
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }

    /// The `(name, value)` entries in order.
    pub fn entries(&self) -> &[(String, String)] {
        match self {
            HeadersSpec::Map(e) | HeadersSpec::Pairs(e) => e,
        }
    }

    /// Every value of `name` (compared without regard to case), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries()
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// Adds one entry, keeping the written form unless the name already exists, in which case
    /// the headers become a list of pairs (a mapping cannot repeat a key).
    ///
    /// ```
    /// use retrylab::scenario::HeadersSpec;
    ///
    /// let mut h = HeadersSpec::map([("X-A", "1")]);
    /// h.push("x-a", "2");
    /// assert!(matches!(h, HeadersSpec::Pairs(_)));
    /// ```
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let repeated = self
            .entries()
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(&name));
        let to_pairs = repeated || matches!(self, HeadersSpec::Pairs(_));
        let mut entries = match std::mem::take(self) {
            HeadersSpec::Map(e) | HeadersSpec::Pairs(e) => e,
        };
        entries.push((name, value.into()));
        *self = if to_pairs {
            HeadersSpec::Pairs(entries)
        } else {
            HeadersSpec::Map(entries)
        };
    }
}

impl Serialize for HeadersSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            HeadersSpec::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (n, v) in entries {
                    map.serialize_entry(n, v)?;
                }
                map.end()
            }
            HeadersSpec::Pairs(entries) => {
                let mut seq = serializer.serialize_seq(Some(entries.len()))?;
                for (n, v) in entries {
                    seq.serialize_element(&[n, v])?;
                }
                seq.end()
            }
        }
    }
}

const EXPECTED: &str =
    "headers as a mapping `{ Name: value }` or a list of pairs `[[Name, value]]`";

impl<'de> Deserialize<'de> for HeadersSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HeadersSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HeadersSpec, A::Error> {
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    let value = map.next_value::<String>()?;
                    entries.push((name, value));
                }
                Ok(HeadersSpec::Map(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HeadersSpec, A::Error> {
                let mut entries = Vec::new();
                while let Some(Pair(n, v)) = seq.next_element::<Pair>()? {
                    entries.push((n, v));
                }
                Ok(HeadersSpec::Pairs(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One `[name, value]` pair, or a one-key mapping `{ name: value }`.
struct Pair(String, String);

impl<'de> Deserialize<'de> for Pair {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pair;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a header pair `[Name, value]` or `{ Name: value }`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pair, A::Error> {
                let name = seq.next_element::<String>()?;
                let value = match name {
                    Some(_) => seq.next_element::<String>()?,
                    None => None,
                };
                let read = usize::from(name.is_some()) + usize::from(value.is_some());
                let items = count_items(&mut seq, read)?;
                match (name, value) {
                    (Some(name), Some(value)) if items == 2 => Ok(Pair(name, value)),
                    _ => Err(de::Error::custom(format!(
                        "a header pair has {}, expected 2: `[Name, value]`",
                        counted(items, "item", "items")
                    ))),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pair, A::Error> {
                let Some(name) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "empty header pair, expected `{ Name: value }`",
                    ));
                };
                let value = map.next_value::<String>()?;
                let mut keys = 1usize;
                while map.next_key::<de::IgnoredAny>()?.is_some() {
                    map.next_value::<de::IgnoredAny>()?;
                    keys += 1;
                }
                if keys > 1 {
                    return Err(de::Error::custom(format!(
                        "a header pair has {keys} keys, expected one: `{{ Name: value }}` (write one list item per header)"
                    )));
                }
                Ok(Pair(name, value))
            }
        }
        deserializer.deserialize_any(V)
    }
}
