//! Whole-millisecond durations: `250ms`, `2s`, `1.5s`, `5m`, `1h`, `1d`.
//!
//! Virtual time advances in whole milliseconds (docs/architecture.md#attempts-time-and-ordering), so a scenario duration that
//! is not a whole number of milliseconds is an error rather than something silently rounded.
//! Parsing uses integer arithmetic only, so `0.1s` is exactly 100 ms.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// What a duration scalar must look like; quoted in errors.
pub(crate) const EXPECTED_DURATION: &str =
    "a whole-millisecond duration such as `250ms`, `2s`, `1.5s`, `5m`, `1h` or `1d`";

/// Units from the smallest to the largest, with their length in milliseconds.
const UNITS: [(&str, u64); 5] = [
    ("ms", 1),
    ("s", 1_000),
    ("m", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
];

/// A duration in whole milliseconds of virtual time.
///
/// Written in YAML as a number with a unit (`250ms`, `2s`, `1.5s`, `5m`, `1h`, `1d`) or as a
/// plain `0`. A value that is not a whole number of milliseconds (`1.5ms`, `0.0001s`) is an
/// error, and so is one longer than `internals::MAX_DURATION` (3650d) in a
/// scenario; parsing a `Millis` on its own accepts any `u64` of milliseconds. It serializes
/// back to its shortest exact form.
///
/// ```
/// use retrylab::scenario::Millis;
///
/// let d: Millis = "1.5s".parse().unwrap();
/// assert_eq!(d, Millis::from_ms(1500));
/// assert_eq!(d.to_string(), "1.5s");
/// assert_eq!(Millis::from_secs(120).to_string(), "2m");
/// assert_eq!(d.as_duration(), std::time::Duration::from_millis(1500));
/// assert!("1.5ms".parse::<Millis>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// Zero milliseconds.
    pub const ZERO: Millis = Millis(0);

    /// A duration of `ms` milliseconds.
    ///
    /// ```
    /// # use retrylab::scenario::Millis;
    /// assert_eq!(Millis::from_ms(250).to_string(), "250ms");
    /// ```
    pub const fn from_ms(ms: u64) -> Self {
        Millis(ms)
    }

    /// A duration of `secs` seconds (saturating at `u64::MAX` milliseconds).
    ///
    /// ```
    /// # use retrylab::scenario::Millis;
    /// assert_eq!(Millis::from_secs(2), Millis::from_ms(2000));
    /// ```
    pub const fn from_secs(secs: u64) -> Self {
        Millis(secs.saturating_mul(1_000))
    }

    /// The number of milliseconds.
    ///
    /// ```
    /// # use retrylab::scenario::Millis;
    /// assert_eq!(Millis::from_secs(1).as_ms(), 1000);
    /// ```
    pub const fn as_ms(&self) -> u64 {
        self.0
    }

    /// The same duration as a [`std::time::Duration`].
    ///
    /// ```
    /// # use retrylab::scenario::Millis;
    /// assert_eq!(Millis::from_ms(5).as_duration().as_millis(), 5);
    /// ```
    pub const fn as_duration(&self) -> Duration {
        Duration::from_millis(self.0)
    }

    /// Whether this is zero.
    ///
    /// ```
    /// # use retrylab::scenario::Millis;
    /// assert!(Millis::ZERO.is_zero());
    /// ```
    pub const fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

impl From<Millis> for Duration {
    fn from(m: Millis) -> Duration {
        m.as_duration()
    }
}

/// A `Duration` that is a whole number of milliseconds (virtual time has no finer grain).
///
/// ```
/// use std::time::Duration;
/// use retrylab::scenario::Millis;
///
/// assert_eq!(Millis::try_from(Duration::from_millis(250)).unwrap(), Millis::from_ms(250));
/// let err = Millis::try_from(Duration::from_micros(1500)).unwrap_err();
/// assert_eq!(err.to_string(), "1ms 500us is not a whole number of milliseconds");
/// ```
impl TryFrom<Duration> for Millis {
    type Error = DurationError;

    fn try_from(d: Duration) -> Result<Millis, DurationError> {
        if d.subsec_nanos() % 1_000_000 != 0 {
            return Err(DurationError::new(format!(
                "{} is not a whole number of milliseconds",
                humantime::format_duration(d)
            )));
        }
        u64::try_from(d.as_millis()).map(Millis).map_err(|_| {
            DurationError::new(format!("{} is too long", humantime::format_duration(d)))
        })
    }
}

/// Why a duration string was rejected.
///
/// ```
/// use retrylab::scenario::Millis;
/// let e = "5xs".parse::<Millis>().unwrap_err();
/// assert!(e.to_string().contains("unknown unit `xs`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DurationError {
    message: String,
}

impl DurationError {
    fn new(message: impl Into<String>) -> Self {
        DurationError {
            message: message.into(),
        }
    }
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DurationError {}

/// Parses an unsigned `<decimal><unit>` into milliseconds, exactly.
fn parse_unsigned(text: &str, original: &str) -> Result<u64, DurationError> {
    if text.is_empty() {
        return Err(DurationError::new(format!(
            "empty duration, expected {EXPECTED_DURATION}"
        )));
    }
    if text == "0" {
        return Ok(0);
    }
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_end);
    if unit.is_empty() {
        return Err(DurationError::new(format!(
            "duration `{original}` has no unit, expected {EXPECTED_DURATION} (only 0 may omit its unit)"
        )));
    }
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    let Some(&(_, unit_ms)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        if let Some(&(_, unit_ns)) = FINER_UNITS.iter().find(|(name, _)| *name == unit) {
            return Err(finer_than_ms(original, unit, whole, fraction, unit_ns));
        }
        return Err(DurationError::new(format!(
            "duration `{original}` has an unknown unit `{unit}`, expected {EXPECTED_DURATION}"
        )));
    };
    let malformed = || {
        DurationError::new(format!(
            "invalid duration `{original}`, expected {EXPECTED_DURATION}"
        ))
    };
    if whole.is_empty() || (number.contains('.') && fraction.is_empty()) || fraction.contains('.') {
        return Err(malformed());
    }
    // Exact integer arithmetic: value = (whole.fraction) * unit_ms, which must be whole.
    let digits = format!("{whole}{fraction}");
    if digits.len() > 30 {
        return Err(DurationError::new(format!(
            "duration `{original}` is too large"
        )));
    }
    let scaled: u128 = digits.parse().map_err(|_| malformed())?;
    let scale = 10u128.pow(fraction.len() as u32);
    let numerator = scaled
        .checked_mul(unit_ms as u128)
        .ok_or_else(|| DurationError::new(format!("duration `{original}` is too large")))?;
    if numerator % scale != 0 {
        return Err(DurationError::new(format!(
            "duration `{original}` is not a whole number of milliseconds: virtual time ticks in \
             whole milliseconds, and the nearest is `{}`",
            format_ms(nearest_ms(numerator.saturating_mul(1_000_000), scale))
        )));
    }
    u64::try_from(numerator / scale)
        .map_err(|_| DurationError::new(format!("duration `{original}` is too large")))
}

/// Units finer than a millisecond, with their nanoseconds: known, and refused, since
/// virtual time has no finer grain.
const FINER_UNITS: [(&str, u128); 4] = [
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ns", 1),
];

/// Why `original`, `whole.fraction` of a unit of `unit_ns` nanoseconds, is refused: the unit
/// is finer than virtual time, and the nearest whole millisecond is named.
fn finer_than_ms(
    original: &str,
    unit: &str,
    whole: &str,
    fraction: &str,
    unit_ns: u128,
) -> DurationError {
    let digits = format!("{whole}{fraction}");
    let nearest = match (digits.len() <= 30, digits.parse::<u128>()) {
        (true, Ok(scaled)) => {
            let scale = 10u128.pow(fraction.len() as u32);
            let ns = scaled.saturating_mul(unit_ns);
            let ms = format_ms(nearest_ms(ns, scale));
            if ns % scale.saturating_mul(1_000_000) == 0 {
                format!("; write `{ms}`")
            } else {
                format!("; the nearest is `{ms}`")
            }
        }
        _ => String::new(),
    };
    DurationError::new(format!(
        "duration `{original}` is in `{unit}`, a unit finer than a millisecond: durations are \
         whole milliseconds (virtual time ticks in whole milliseconds){nearest}"
    ))
}

/// `ns / scale` nanoseconds rounded to the nearest whole millisecond (a half rounds up), at
/// most `u64::MAX`.
fn nearest_ms(ns: u128, scale: u128) -> u64 {
    let per_ms = scale.saturating_mul(1_000_000);
    let ms = ns.saturating_add(per_ms / 2) / per_ms;
    u64::try_from(ms).unwrap_or(u64::MAX)
}

/// A duration as a scenario writes it: `text` parsed, and at most
/// `internals::MAX_DURATION`. Every duration read from a file goes through it
/// (plain, `none`-able, protobuf), so none is past the limit of the format.
pub(crate) fn parse_bounded(text: &str) -> Result<Millis, DurationError> {
    let d: Millis = text.parse()?;
    if d > super::bounds::MAX_DURATION {
        return Err(above_limit(text));
    }
    Ok(d)
}

/// Why `text`, a duration or offset longer than `internals::MAX_DURATION`, is
/// refused.
fn above_limit(text: &str) -> DurationError {
    DurationError::new(format!(
        "duration `{text}` is over the limit of the format, expected at most {} (about 10 \
         years; a run's clock ends about 30 years on)",
        super::bounds::MAX_DURATION
    ))
}

impl FromStr for Millis {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        if text.starts_with('-') {
            return Err(DurationError::new(format!(
                "duration `{s}` is negative, expected {EXPECTED_DURATION}"
            )));
        }
        parse_unsigned(text.strip_prefix('+').unwrap_or(text), s).map(Millis)
    }
}

/// The shortest exact spelling of `ms` milliseconds (`1500` is `1.5s`, `250` is `250ms`),
/// never with a leading `0.`.
fn format_ms(ms: u64) -> String {
    if ms == 0 {
        return "0s".to_string();
    }
    let mut best = format!("{ms}ms");
    // Whole numbers of a larger unit first: on a tie in length they win over decimals.
    for &(name, unit) in &UNITS[1..] {
        if ms % unit == 0 {
            let candidate = format!("{}{name}", ms / unit);
            if candidate.len() < best.len() {
                best = candidate;
            }
        }
    }
    for &(name, unit) in &UNITS[1..] {
        let unit = unit as u128;
        let value = ms as u128;
        if value % unit == 0 {
            continue;
        }
        // Up to 9 decimals covers every unit here (86_400_000 = 2^10 * 3^3 * 5^5 needs 3^3
        // to vanish, which never happens, so days and hours only give decimals for some values).
        for digits in 1..=9u32 {
            let scale = 10u128.pow(digits);
            if (value * scale) % unit == 0 {
                let whole = value / unit;
                if whole == 0 {
                    // `0.2s` is shorter than `200ms` but harder to read.
                    break;
                }
                let frac = (value % unit) * scale / unit;
                let candidate = format!("{whole}.{frac:0width$}{name}", width = digits as usize);
                if candidate.len() < best.len() {
                    best = candidate;
                }
                break;
            }
        }
    }
    best
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_ms(self.0))
    }
}

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

struct MillisVisitor;

impl Visitor<'_> for MillisVisitor {
    type Value = Millis;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED_DURATION)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Millis, E> {
        // serde-saphyr hands over a number that is not finite (`NaN`, `inf`, `1e400`) as
        // this text; the error is located, and parsing quotes the number as written.
        if matches!(v, ".nan" | ".inf" | "-.inf") {
            return Err(E::custom(format!(
                "duration `{v}` is not a finite number, expected {EXPECTED_DURATION}"
            )));
        }
        parse_bounded(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Millis, E> {
        if v == 0 {
            Ok(Millis::ZERO)
        } else {
            Err(E::custom(format!(
                "duration `{v}` has no unit, expected {EXPECTED_DURATION} (only 0 may omit its unit)"
            )))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Millis, E> {
        if v >= 0 {
            return self.visit_u64(v as u64);
        }
        Err(E::custom(format!(
            "duration `{v}` is negative, expected {EXPECTED_DURATION}"
        )))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Millis, E> {
        Err(E::custom(format!(
            "duration `{v}` has no unit, expected {EXPECTED_DURATION}"
        )))
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MillisVisitor)
    }
}

/// A signed offset from "now" on the virtual wall clock, such as `+30s` or `-5m`.
///
/// Used by `retry_after: { http_date: +30s }`; a negative offset gives a date in the past. In
/// a scenario it is at most `internals::MAX_DURATION` (3650d) either way.
///
/// ```
/// use retrylab::scenario::OffsetMillis;
///
/// let o: OffsetMillis = "+30s".parse().unwrap();
/// assert_eq!(o, OffsetMillis(30_000));
/// assert_eq!("-1.5s".parse::<OffsetMillis>().unwrap(), OffsetMillis(-1500));
/// assert_eq!(OffsetMillis(30_000).to_string(), "+30s");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OffsetMillis(pub i64);

impl FromStr for OffsetMillis {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let ms = parse_unsigned(rest, s)?;
        let ms = i64::try_from(ms)
            .map_err(|_| DurationError::new(format!("duration `{s}` is too large")))?;
        Ok(OffsetMillis(if negative { -ms } else { ms }))
    }
}

impl fmt::Display for OffsetMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "+" };
        write!(f, "{sign}{}", format_ms(self.0.unsigned_abs()))
    }
}

impl Serialize for OffsetMillis {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for OffsetMillis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = OffsetMillis;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an offset such as `+30s` or `-5m`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OffsetMillis, E> {
                let offset: OffsetMillis = v.parse().map_err(E::custom)?;
                if offset.0.unsigned_abs() > super::bounds::MAX_DURATION.as_ms() {
                    return Err(E::custom(above_limit(v)));
                }
                Ok(offset)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<OffsetMillis, E> {
                MillisVisitor.visit_u64(v).map(|m| OffsetMillis(m.0 as i64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<OffsetMillis, E> {
                if v == 0 {
                    Ok(OffsetMillis(0))
                } else {
                    Err(E::custom(format!(
                        "offset `{v}` has no unit, expected an offset such as `+30s` or `-5m`"
                    )))
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A duration or `none`, as in `idle_timeout: none | 30s` and `cap: none | 6h`.
///
/// ```
/// use retrylab::scenario::{DurationOrNone, Millis};
///
/// assert_eq!(DurationOrNone::default(), DurationOrNone::None);
/// assert_eq!(DurationOrNone::After(Millis::from_secs(30)).millis(), Some(Millis::from_secs(30)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DurationOrNone {
    /// No limit.
    #[default]
    None,
    /// A limit of this duration.
    After(Millis),
}

impl DurationOrNone {
    /// The duration, when there is one.
    pub fn millis(&self) -> Option<Millis> {
        match self {
            DurationOrNone::None => None,
            DurationOrNone::After(m) => Some(*m),
        }
    }

    /// Whether this is `none` (used to keep serialized scenarios short).
    pub fn is_none(&self) -> bool {
        matches!(self, DurationOrNone::None)
    }
}

impl Serialize for DurationOrNone {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DurationOrNone::None => serializer.serialize_str("none"),
            DurationOrNone::After(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for DurationOrNone {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationOrNone;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "`none` or {EXPECTED_DURATION}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationOrNone, E> {
                if v.trim() == "none" {
                    return Ok(DurationOrNone::None);
                }
                parse_bounded(v)
                    .map(DurationOrNone::After)
                    .map_err(|e| E::custom(format!("{e}, or `none`")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationOrNone, E> {
                MillisVisitor.visit_u64(v).map(DurationOrNone::After)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationOrNone, E> {
                MillisVisitor.visit_i64(v).map(DurationOrNone::After)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationOrNone, E> {
                MillisVisitor.visit_f64(v).map(DurationOrNone::After)
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests;
