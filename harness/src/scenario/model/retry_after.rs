//! `retry_after:` of a step: the `Retry-After` header it sends, in seconds, as an HTTP-date
//! or verbatim.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::duration::OffsetMillis;
use super::latency::one_entry;

/// The `Retry-After` header a step sends: `2` (delay-seconds; negative values are allowed to
/// test robustness), `{ http_date: +30s, format: imf | rfc850 | asctime }` (an HTTP-date
/// relative to the virtual wall clock, rounded up to the next whole second), or
/// `{ raw: "..." }` (any text, sent verbatim).
///
/// ```
/// use retrylab::scenario::{DateFormat, OffsetMillis, RetryAfterSpec};
///
/// let in_30s = RetryAfterSpec::HttpDate { offset: OffsetMillis(30_000), format: DateFormat::Imf };
/// assert_eq!(RetryAfterSpec::raw("soon"), RetryAfterSpec::Raw("soon".into()));
/// # let _ = in_30s;
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryAfterSpec {
    /// `Retry-After: <n>`.
    Seconds(i64),
    /// `Retry-After: <HTTP-date>`, `offset` from the virtual wall clock when sent.
    HttpDate {
        /// Offset from the virtual wall clock.
        offset: OffsetMillis,
        /// The date format.
        format: DateFormat,
    },
    /// `Retry-After: <raw>` verbatim.
    Raw(String),
}

impl RetryAfterSpec {
    /// `{ raw: text }`.
    pub fn raw(text: impl Into<String>) -> Self {
        RetryAfterSpec::Raw(text.into())
    }
}

/// HTTP-date formats (RFC 9110, section 5.6.7).
///
/// ```
/// use retrylab::scenario::DateFormat;
/// assert_eq!(DateFormat::default(), DateFormat::Imf);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DateFormat {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    #[default]
    Imf,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    Rfc850,
    /// `Sun Nov  6 08:49:37 1994`.
    Asctime,
}

const RETRY_AFTER_KEYS: &[&str] = &["http_date", "format", "raw"];

/// 2^63, where the seconds `retry_after` holds (an `i64`) stop.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The message for delay-seconds beyond an `i64`: `number` is what the message calls the
/// value, `raw` the text to suggest sending verbatim instead.
fn seconds_out_of_range(number: &str, negative: bool, raw: &str) -> String {
    // The format's limit, not the type's: a value this far out is past both, and the
    // message reads as the one for a value past the limit alone.
    let limit = super::bounds::MAX_RETRY_AFTER_SECONDS;
    let beyond = if negative {
        "too far below zero"
    } else {
        "too large"
    };
    format!(
        "Retry-After {number}is {beyond}, expected at most {limit} seconds either way (3650 \
         days; send it verbatim with `{{ raw: \"{raw}\" }}`)"
    )
}

impl Serialize for RetryAfterSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RetryAfterSpec::Seconds(n) => serializer.serialize_i64(*n),
            RetryAfterSpec::HttpDate { offset, format } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("http_date", offset)?;
                if *format != DateFormat::Imf {
                    map.serialize_entry("format", format)?;
                }
                map.end()
            }
            RetryAfterSpec::Raw(raw) => one_entry(serializer, "raw", raw),
        }
    }
}

impl<'de> Deserialize<'de> for RetryAfterSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RetryAfterSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "whole seconds such as `2`, `{ http_date: +30s }` or `{ raw: \"...\" }`",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RetryAfterSpec, E> {
                i64::try_from(v).map(RetryAfterSpec::Seconds).map_err(|_| {
                    E::custom(seconds_out_of_range(
                        &format!("`{v}` "),
                        false,
                        &v.to_string(),
                    ))
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RetryAfterSpec, E> {
                Ok(RetryAfterSpec::Seconds(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RetryAfterSpec, E> {
                // Integers beyond 64 bits reach here as floats: 20 digits are not a fraction.
                // Their float value is not what the file says, so the message does not quote it.
                if v.fract() == 0.0 && !(-TWO_POW_63..TWO_POW_63).contains(&v) {
                    return Err(E::custom(seconds_out_of_range("", v < 0.0, "...")));
                }
                if v.fract() == 0.0 {
                    // `2.0` and `1e3` both arrive here as whole floats.
                    return Err(E::custom(format!(
                        "Retry-After written with a decimal point or an exponent, expected \
                         whole seconds such as `{v:.0}`"
                    )));
                }
                Err(E::custom(format!(
                    "fractional Retry-After `{v}`, expected whole seconds (send fractions with `{{ raw: \"{v}\" }}`)"
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RetryAfterSpec, A::Error> {
                let (mut date, mut format, mut raw) = (None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "http_date" => date = Some(map.next_value::<OffsetMillis>()?),
                        "format" => format = Some(map.next_value::<DateFormat>()?),
                        "raw" => raw = Some(map.next_value::<String>()?),
                        other => return Err(de::Error::unknown_field(other, RETRY_AFTER_KEYS)),
                    }
                }
                match (date, format, raw) {
                    (Some(offset), format, None) => Ok(RetryAfterSpec::HttpDate {
                        offset,
                        format: format.unwrap_or_default(),
                    }),
                    (None, None, Some(raw)) => Ok(RetryAfterSpec::Raw(raw)),
                    (None, Some(_), _) => Err(de::Error::custom(
                        "`format` needs `http_date`, expected `{ http_date: +30s, format: rfc850 }`",
                    )),
                    (Some(_), _, Some(_)) => Err(de::Error::custom(
                        "`http_date` and `raw` cannot be combined, expected one of them",
                    )),
                    (None, None, None) => Err(de::Error::custom(
                        "empty Retry-After, expected `{ http_date: +30s }` or `{ raw: \"...\" }`",
                    )),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}
