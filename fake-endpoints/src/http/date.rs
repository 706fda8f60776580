//! The one HTTP-date calendar of retrylab: the three formats of RFC 9110 section 5.6.7 parsed
//! by hand, for the values `httpdate` refuses; IMF-fixdate for messages; and the broken-down
//! time the endpoints spell RFC 850 and asctime dates with.
//!
//! `httpdate` rejects two kinds of date that a `Retry-After` may still carry and that clients
//! handle: dates before 1970 (a date in the past means "retry now", so they must parse), and
//! dates whose weekday does not match (Go's `http.ParseTime` and Python's
//! `email.utils.parsedate` ignore the weekday; we do the same, but still require a weekday
//! name where the format has one).

/// Seconds per day.
const DAY_S: i64 = 86_400;

pub(crate) const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
pub(crate) const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Exactly `n` ASCII digits as a number.
fn digits(s: &str, n: usize) -> Option<u32> {
    if s.len() != n || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn month_number(s: &str) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| *m == s)
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// `hh:mm:ss`
fn time_of_day(s: &str) -> Option<(u32, u32, u32)> {
    let mut parts = s.split(':');
    let h = digits(parts.next()?, 2)?;
    let m = digits(parts.next()?, 2)?;
    let sec = digits(parts.next()?, 2)?;
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    Some((h, m, sec))
}

fn to_unix(year: i64, month: u32, day: u32, (h, m, s): (u32, u32, u32)) -> Option<i64> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day) * DAY_S + i64::from(h * 3600 + m * 60 + s))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(s: &str) -> Option<i64> {
    let (wday, rest) = s.split_once(", ")?;
    if !SHORT_DAYS.contains(&wday) {
        return None;
    }
    let f: Vec<&str> = rest.split(' ').collect();
    match f.as_slice() {
        [day, mon, year, time, "GMT"] => to_unix(
            i64::from(digits(year, 4)?),
            month_number(mon)?,
            digits(day, 2)?,
            time_of_day(time)?,
        ),
        _ => None,
    }
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year below 70 is 20xx, as in `httpdate`.
fn rfc850(s: &str) -> Option<i64> {
    let (wday, rest) = s.split_once(", ")?;
    if !LONG_DAYS.contains(&wday) {
        return None;
    }
    let f: Vec<&str> = rest.split(' ').collect();
    match f.as_slice() {
        [date, time, "GMT"] => {
            let d: Vec<&str> = date.split('-').collect();
            match d.as_slice() {
                [day, mon, yy] => {
                    let yy = digits(yy, 2)?;
                    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
                    to_unix(
                        i64::from(year),
                        month_number(mon)?,
                        digits(day, 2)?,
                        time_of_day(time)?,
                    )
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `Sun Nov  6 08:49:37 1994` (a one-digit day is padded with a space).
fn asctime(s: &str) -> Option<i64> {
    if s.len() != 24 || !s.is_ascii() {
        return None;
    }
    let (wday, mon, day, time, year) = (&s[0..3], &s[4..7], &s[8..10], &s[11..19], &s[20..24]);
    if !SHORT_DAYS.contains(&wday) || &s[3..4] != " " || &s[7..8] != " " || &s[10..11] != " " {
        return None;
    }
    if &s[19..20] != " " {
        return None;
    }
    let day = match day.strip_prefix(' ') {
        Some(one) => digits(one, 1)?,
        None => digits(day, 2)?,
    };
    to_unix(
        i64::from(digits(year, 4)?),
        month_number(mon)?,
        day,
        time_of_day(time)?,
    )
}

/// Parses an HTTP-date in any of the three formats into Unix seconds (negative before 1970).
/// Surrounding whitespace is ignored; the weekday name must be a valid one but need not match
/// the date.
///
/// ```
/// use retrylab_endpoints::date::parse_lenient;
///
/// assert_eq!(parse_lenient("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
/// assert_eq!(parse_lenient("Sunday, 06-Nov-94 08:49:37 GMT"), Some(784_111_777));
/// assert_eq!(parse_lenient("Sun Nov  6 08:49:37 1994"), Some(784_111_777));
/// assert_eq!(parse_lenient("Thu, 01 Jan 1969 00:00:00 GMT"), Some(-31_536_000)); // weekday not checked
/// assert_eq!(parse_lenient("yesterday"), None);
/// ```
pub fn parse_lenient(s: &str) -> Option<i64> {
    let s = s.trim();
    imf_fixdate(s).or_else(|| rfc850(s)).or_else(|| asctime(s))
}

/// Broken-down UTC time of Unix seconds.
pub(crate) struct Civil {
    pub(crate) year: i64,
    /// 1..=12
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
    /// 0 = Sunday
    pub(crate) weekday: usize,
}

impl Civil {
    /// The UTC date and time of `unix_s` (negative before 1970).
    pub(crate) fn from_unix(unix_s: i64) -> Civil {
        let days = unix_s.div_euclid(DAY_S);
        let secs = unix_s.rem_euclid(DAY_S);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            // 1970-01-01 was a Thursday (index 4 from Sunday).
            weekday: (days + 4).rem_euclid(7) as usize,
        }
    }
}

/// Formats Unix seconds as an IMF-fixdate (`Thu, 01 Jan 2026 00:00:00 GMT`). Years outside
/// 0..=9999 are printed with as many digits as they need: only messages use this.
///
/// ```
/// use retrylab_endpoints::date::format_imf_fixdate;
///
/// assert_eq!(format_imf_fixdate(1_767_225_600), "Thu, 01 Jan 2026 00:00:00 GMT");
/// ```
pub fn format_imf_fixdate(unix_s: i64) -> String {
    let c = Civil::from_unix(unix_s);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        SHORT_DAYS[c.weekday],
        c.day,
        MONTHS[(c.month - 1) as usize],
        c.year,
        c.hour,
        c.minute,
        c.second
    )
}

/// The `Date` header of a response whose head is handed over `at_ms` after the start of
/// `clock`: its wall clock then, in whole seconds (RFC 9110 section 6.6.1 wants the instant
/// the message was made, to the second, rounded down).
///
/// ```
/// use retrylab_endpoints::VirtualClock;
/// use retrylab_endpoints::date::date_header;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = VirtualClock::new().with_epoch_unix_ms(1_767_225_600_400);
/// assert_eq!(date_header(&clock, 599), "Thu, 01 Jan 2026 00:00:00 GMT");
/// assert_eq!(date_header(&clock, 600), "Thu, 01 Jan 2026 00:00:01 GMT");
/// # }
/// ```
pub fn date_header(clock: &crate::VirtualClock, at_ms: u64) -> http::HeaderValue {
    let unix_ms = clock.epoch_unix_ms.saturating_add(at_ms);
    let unix_s = i64::try_from(unix_ms / 1000).unwrap_or(i64::MAX);
    // Digits, letters, commas, colons and spaces only: always a valid header value.
    http::HeaderValue::from_str(&format_imf_fixdate(unix_s))
        .unwrap_or_else(|_| http::HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        // RFC 9110's example, 784111777.
        assert_eq!(
            parse_lenient("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_lenient("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_lenient("Sun Nov  6 08:49:37 1994"), Some(784_111_777));
        assert_eq!(
            parse_lenient("Thu, 01 Jan 2026 00:00:00 GMT"),
            Some(1_767_225_600)
        );
        // Before 1970 and a wrong weekday: httpdate refuses both.
        assert_eq!(parse_lenient("Wed, 31 Dec 1969 23:59:59 GMT"), Some(-1));
        assert_eq!(
            parse_lenient("Mon, 01 Jan 2026 00:00:00 GMT"),
            Some(1_767_225_600)
        );
        assert_eq!(
            parse_lenient("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(1_709_164_800)
        );
    }

    #[test]
    fn rejects() {
        for bad in [
            "",
            "2",
            "Xyz, 01 Jan 2026 00:00:00 GMT",
            "Thu, 01 Jan 2026 00:00:00 UTC",
            "Thu, 1 Jan 2026 00:00:00 GMT",
            "Thu, 30 Feb 2026 00:00:00 GMT",
            "Thu, 01 Jan 2026 24:00:00 GMT",
            "Thu, 01 Jan 2026 00:00:60 GMT",
            "thu, 01 jan 2026 00:00:00 GMT",
            "Thursday, 01-Jan-2026 00:00:00 GMT",
            "Thu Jan 1 00:00:00 2026",
        ] {
            assert_eq!(parse_lenient(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn format_round_trips() {
        for t in [
            0,
            -1,
            784_111_777,
            1_767_225_600,
            1_709_164_800,
            253_402_300_799,
        ] {
            let s = format_imf_fixdate(t);
            assert_eq!(parse_lenient(&s), Some(t), "{s}");
        }
        assert_eq!(
            format_imf_fixdate(1_767_225_600),
            "Thu, 01 Jan 2026 00:00:00 GMT"
        );
        assert_eq!(format_imf_fixdate(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
    }

    #[test]
    fn agrees_with_httpdate() {
        // Every 7919 minutes over 60 years: the hand parser and httpdate agree on every date
        // httpdate accepts.
        let mut t: i64 = 0;
        while t < 1_900_000_000 {
            let s = format_imf_fixdate(t);
            let lib = httpdate::parse_http_date(&s)
                .ok()
                .and_then(|st| st.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs() as i64);
            assert_eq!(lib, Some(t), "{s}");
            assert_eq!(parse_lenient(&s), Some(t), "{s}");
            t += 7919 * 60;
        }
    }
}
