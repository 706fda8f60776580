//! `epoch:`, the virtual wall clock at the start of a run, read once: validation and the
//! run's plan both call [`Scenario::epoch_unix_ms`], so a date that loads is the date that
//! runs ([scenario format](../../../../docs/scenario-format.md#top-level)).

use std::time::{SystemTime, UNIX_EPOCH};

use super::scenario::Scenario;
use crate::scenario::yaml::error::ScenarioError;

/// What the text of an `epoch:` is wrong by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EpochError {
    /// Neither an RFC 3339 date-time nor an HTTP-date.
    Invalid,
    /// A date before 1970-01-01T00:00:00Z, which the wall clock (Unix milliseconds) cannot hold.
    BeforeUnixEpoch,
    /// Fractional seconds finer than a millisecond that are not zero.
    FinerThanMillisecond,
}

impl Scenario {
    /// The virtual wall clock at the start of a run, in Unix milliseconds:
    /// 2026-01-01T00:00:00Z without an `epoch:`, else that date converted to UTC, or the
    /// located reason it cannot be one.
    ///
    /// An RFC 3339 offset is converted (`+02:00` is two hours before the same time in
    /// UTC), `t`, `z` and a space separator are read as RFC 3339 allows, and a leap second
    /// (`:60`) is read as the second before it, as the Unix clock has none.
    pub(crate) fn epoch_unix_ms(&self) -> Result<u64, Box<ScenarioError>> {
        let Some(text) = &self.epoch else {
            return Ok(retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS);
        };
        unix_ms(text).map_err(|error| {
            let (message, expected) = match error {
                EpochError::Invalid => (
                    format!("invalid date `{text}`"),
                    "an RFC 3339 date such as `2026-01-01T00:00:00Z` or an IMF date such as `Thu, 01 Jan 2026 00:00:00 GMT`",
                ),
                EpochError::BeforeUnixEpoch => (
                    format!("`{text}` is before 1970-01-01T00:00:00Z"),
                    "a date from 1970 on (the virtual wall clock counts milliseconds since the Unix epoch)",
                ),
                EpochError::FinerThanMillisecond => (
                    format!("`{text}` is not a whole millisecond"),
                    "at most three fractional digits (virtual time counts whole milliseconds)",
                ),
            };
            Box::new(self.error_at("epoch", message).with_expected(expected))
        })
    }
}

/// `text` as Unix milliseconds: an RFC 3339 date-time, else an HTTP-date.
fn unix_ms(text: &str) -> Result<u64, EpochError> {
    let ms = match rfc3339_ms(text) {
        Some(parsed) => parsed?,
        None => http_date_ms(text)?,
    };
    u64::try_from(ms).map_err(|_| EpochError::BeforeUnixEpoch)
}

/// Seconds in 2000 years of the Gregorian calendar, which repeats every 400 years
/// (146,097 days): a date moved 2000 years on has the same month lengths and leap days.
const TWO_THOUSAND_YEARS_S: i64 = 5 * 146_097 * 86_400;

/// An RFC 3339 `date-time` (section 5.6), `YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|±HH:MM)`,
/// as Unix milliseconds (negative before 1970); `None` when `s` is not one.
///
/// [`humantime::parse_rfc3339`] checks the date and the time (field ranges, month lengths,
/// leap years, leap seconds) but reads only UTC written with `T` and `Z`, from 1970 on. So
/// the separator, the fraction and the offset are read here, and the local date-time is
/// handed to it in that spelling, a year before 1970 moved 2000 years on and back. An
/// offset's hour and minute have the ranges of a time's (`time-hour` and `time-minute` in
/// the RFC's grammar), so humantime checks them as a time.
fn rfc3339_ms(s: &str) -> Option<Result<i64, EpochError>> {
    let (date, separator, time, rest) =
        (s.get(..10)?, s.get(10..11)?, s.get(11..19)?, s.get(19..)?);
    if !matches!(separator, "T" | "t" | " ") {
        return None;
    }
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return None;
            }
            fraction.split_at(digits)
        }
        None => ("", rest),
    };
    let offset_s = match zone {
        "Z" | "z" => 0,
        offset => {
            let (sign, hh_mm) = match offset.split_at_checked(1)? {
                ("+", hh_mm) => (1, hh_mm),
                ("-", hh_mm) => (-1, hh_mm),
                _ => return None,
            };
            if hh_mm.len() != 5 {
                return None;
            }
            sign * utc_s(&format!("1970-01-01T{hh_mm}:00Z"))?
        }
    };
    let local_s = local_s(date, time)?;
    let (ms_digits, finer) = fraction.split_at(fraction.len().min(3));
    if finer.bytes().any(|b| b != b'0') {
        return Some(Err(EpochError::FinerThanMillisecond));
    }
    // "5" is 500 ms, "05" 50 ms: pad to three digits. Only ASCII digits get here.
    let ms = format!("{ms_digits:0<3}").parse::<i64>().ok()?;
    Some(Ok((local_s - offset_s) * 1000 + ms))
}

/// Unix seconds of a local `YYYY-MM-DD` and `HH:MM:SS` read as UTC.
fn local_s(date: &str, time: &str) -> Option<i64> {
    let year = date
        .get(..4)
        .filter(|y| y.bytes().all(|b| b.is_ascii_digit()))?
        .parse::<i64>()
        .ok()?;
    let month_day = date.get(4..)?;
    if year < 1970 {
        let moved = utc_s(&format!("{}{month_day}T{time}Z", year + 2000))?;
        Some(moved - TWO_THOUSAND_YEARS_S)
    } else {
        utc_s(&format!("{date}T{time}Z"))
    }
}

/// Unix seconds of `s`, an RFC 3339 UTC date-time from 1970 on.
fn utc_s(s: &str) -> Option<i64> {
    let since = humantime::parse_rfc3339(s)
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?;
    i64::try_from(since.as_secs()).ok()
}

/// An HTTP-date (IMF-fixdate, RFC 850 or asctime, weekday checked) as Unix milliseconds.
fn http_date_ms(s: &str) -> Result<i64, EpochError> {
    match httpdate::parse_http_date(s) {
        Ok(at) => system_ms(at).ok_or(EpochError::Invalid),
        // `httpdate` refuses dates before 1970; the lenient calendar reads them, so that such
        // a date is named for what it is rather than called invalid.
        Err(_) => match retrylab_endpoints::date::parse_lenient(s) {
            Some(secs) if secs < 0 => Err(EpochError::BeforeUnixEpoch),
            _ => Err(EpochError::Invalid),
        },
    }
}

fn system_ms(at: SystemTime) -> Option<i64> {
    i64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::{EpochError, unix_ms};

    const Y2026: u64 = retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS;
    const HOUR: u64 = 3_600_000;

    #[test]
    fn offsets_and_spellings_convert_to_utc() {
        for (text, ms) in [
            ("2026-01-01T00:00:00Z", Y2026),
            ("2026-01-01T00:00:00+00:00", Y2026),
            ("2026-01-01T00:00:00-00:00", Y2026),
            ("2026-01-01t00:00:00z", Y2026),
            ("2026-01-01 00:00:00Z", Y2026),
            ("2026-01-01T02:00:00+02:00", Y2026),
            ("2026-01-01T00:00:00+02:00", Y2026 - 2 * HOUR),
            ("2025-12-31T19:00:00-05:00", Y2026),
            ("2026-01-01T05:30:00.250+05:30", Y2026 + 250),
            ("2026-01-01T00:00:00.5Z", Y2026 + 500),
            ("2026-01-01T00:00:00.050Z", Y2026 + 50),
            ("2026-01-01T00:00:00.123000000Z", Y2026 + 123),
            ("1970-01-01T00:00:00Z", 0),
            // 1969 locally, 1970 in UTC.
            ("1969-12-31T23:00:00-01:00", 0),
            ("2024-02-29T23:59:60Z", 1_709_251_199_000),
            ("9999-12-31T23:59:59Z", 253_402_300_799_000),
            ("Thu, 01 Jan 2026 00:00:00 GMT", Y2026),
            ("Thursday, 01-Jan-26 00:00:00 GMT", Y2026),
            ("Thu Jan  1 00:00:00 2026", Y2026),
        ] {
            assert_eq!(unix_ms(text), Ok(ms), "{text}");
        }
    }

    #[test]
    fn dates_before_1970_are_named() {
        for text in [
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:30:00+01:00",
            "1600-02-29T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "Wed, 01 Jan 1969 00:00:00 GMT",
        ] {
            assert_eq!(unix_ms(text), Err(EpochError::BeforeUnixEpoch), "{text}");
        }
    }

    #[test]
    fn sub_millisecond_fractions_are_refused() {
        for text in [
            "2026-01-01T00:00:00.0001Z",
            "2026-01-01T00:00:00.123456789012+23:59",
        ] {
            assert_eq!(
                unix_ms(text),
                Err(EpochError::FinerThanMillisecond),
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_dates_are_invalid() {
        for text in [
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.5",
            "2026-01-01T00:00:00+5:30",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+00:60",
            "2026-01-01T00:00:00*02:00",
            "2026-01-01",
            "2026-01-01T00:00:00Zjunk",
            "2026-01-01T00:00:00ZZ",
            "+999-01-01T00:00:00Z",
            "２０２６-01-01T00:00:00Z",
            "Fri, 01 Jan 2026 00:00:00 GMT",
            "tomorrow",
            "",
        ] {
            assert_eq!(unix_ms(text), Err(EpochError::Invalid), "{text}");
        }
    }
}
