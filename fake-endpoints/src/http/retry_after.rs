//! `Retry-After` values an endpoint can send, including the malformed ones
//! (docs/retry-behaviours.md#6-retry-after).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderValue;

use super::date::{Civil, LONG_DAYS, MONTHS};

/// 9999-12-31T23:59:59Z: the last instant an HTTP-date can spell with four year digits
/// (`httpdate` panics beyond it).
const MAX_HTTP_DATE_SECS: u64 = 253_402_300_799;

/// How an HTTP-date is spelled (RFC 9110 section 5.6.7 accepts all three).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HttpDateFormat {
    /// `Thu, 01 Jan 2026 00:00:32 GMT` (the preferred format).
    #[default]
    Imf,
    /// `Thursday, 01-Jan-26 00:00:32 GMT` (obsolete RFC 850).
    Rfc850,
    /// `Thu Jan  1 00:00:32 2026` (obsolete ANSI C `asctime()`).
    Asctime,
}

/// The value of a `Retry-After` header.
///
/// ```
/// use retrylab_endpoints::{secs, HttpDateFormat, RetryAfter};
///
/// let in_two = RetryAfter::from(2);
/// let negative = RetryAfter::seconds(-1);
/// let dated = RetryAfter::http_date(secs(30)).format(HttpDateFormat::Rfc850);
/// let garbage = RetryAfter::raw("soon");
/// # let _ = (in_two, negative, dated, garbage);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RetryAfter {
    /// Delay-seconds. Negative values are allowed on purpose: they test a client's robustness.
    Seconds(i64),
    /// An HTTP-date: the virtual wall clock when the head is sent, plus `after`, rounded up to
    /// the next whole second.
    HttpDate {
        /// How far in the future the date is.
        after: Duration,
        /// How the date is spelled.
        format: HttpDateFormat,
    },
    /// Sent verbatim (fractions, garbage, huge values). Bytes a header cannot carry (control
    /// characters) are replaced by `?`.
    Raw(String),
}

impl RetryAfter {
    /// `Retry-After: <seconds>`.
    pub fn seconds(seconds: i64) -> Self {
        Self::Seconds(seconds)
    }

    /// An IMF-fixdate `after` from the moment the head is sent; change the spelling with
    /// [`RetryAfter::format`].
    pub fn http_date(after: Duration) -> Self {
        Self::HttpDate {
            after,
            format: HttpDateFormat::Imf,
        }
    }

    /// The same HTTP-date in another format; values that are not dates are unchanged.
    pub fn format(self, format: HttpDateFormat) -> Self {
        match self {
            Self::HttpDate { after, .. } => Self::HttpDate { after, format },
            other => other,
        }
    }

    /// A verbatim value.
    pub fn raw(value: impl Into<String>) -> Self {
        Self::Raw(value.into())
    }

    /// The header value as sent when the virtual wall clock reads `now`.
    pub fn render(&self, now: SystemTime) -> HeaderValue {
        match self {
            Self::Seconds(s) => HeaderValue::from(*s),
            Self::HttpDate { after, format } => {
                let at = now.checked_add(*after).unwrap_or(now);
                text_value(&http_date(at, *format))
            }
            Self::Raw(raw) => text_value(raw),
        }
    }
}

impl From<i32> for RetryAfter {
    fn from(seconds: i32) -> Self {
        Self::Seconds(seconds.into())
    }
}

impl From<i64> for RetryAfter {
    fn from(seconds: i64) -> Self {
        Self::Seconds(seconds)
    }
}

impl From<u32> for RetryAfter {
    fn from(seconds: u32) -> Self {
        Self::Seconds(seconds.into())
    }
}

impl From<&str> for RetryAfter {
    fn from(raw: &str) -> Self {
        Self::Raw(raw.to_owned())
    }
}

/// A header value from text, replacing what a header cannot carry instead of failing: the
/// point of `raw` is to send odd values, and a scenario must not crash the endpoint.
fn text_value(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap_or_else(|_| {
        let cleaned: Vec<u8> = text
            .bytes()
            .map(|b| {
                if b == b'\t' || (b >= 0x20 && b != 0x7f) {
                    b
                } else {
                    b'?'
                }
            })
            .collect();
        HeaderValue::from_bytes(&cleaned).unwrap_or(HeaderValue::from_static(""))
    })
}

/// Formats `at`, rounded up to the next whole second (HTTP-dates have one-second resolution,
/// and rounding down would let a client retry before the instant the endpoint meant).
pub fn http_date(at: SystemTime, format: HttpDateFormat) -> String {
    let secs = ceil_unix_secs(at);
    match format {
        HttpDateFormat::Imf => httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs)),
        HttpDateFormat::Rfc850 => {
            // At most MAX_HTTP_DATE_SECS, so it fits.
            let c = Civil::from_unix(secs as i64);
            let mut out = String::with_capacity(40);
            // Writing into a String cannot fail.
            let _ = write!(
                out,
                "{}, {:02}-{}-{:02} {:02}:{:02}:{:02} GMT",
                LONG_DAYS[c.weekday],
                c.day,
                MONTHS[(c.month - 1) as usize],
                c.year % 100,
                c.hour,
                c.minute,
                c.second
            );
            out
        }
        HttpDateFormat::Asctime => {
            // At most MAX_HTTP_DATE_SECS, so it fits.
            let c = Civil::from_unix(secs as i64);
            let mut out = String::with_capacity(24);
            let _ = write!(
                out,
                "{} {} {:>2} {:02}:{:02}:{:02} {}",
                &LONG_DAYS[c.weekday][..3],
                MONTHS[(c.month - 1) as usize],
                c.day,
                c.hour,
                c.minute,
                c.second,
                c.year
            );
            out
        }
    }
}

/// Whole seconds since the Unix epoch, rounded up, clamped to what an HTTP-date can spell.
fn ceil_unix_secs(at: SystemTime) -> u64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() + u64::from(since.subsec_nanos() > 0);
    secs.min(MAX_HTTP_DATE_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::DEFAULT_EPOCH_UNIX_MS;

    fn epoch_plus(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(DEFAULT_EPOCH_UNIX_MS + ms)
    }

    #[test]
    fn http_date_rounds_up_in_three_formats() {
        let now = epoch_plus(1_200);
        let imf = RetryAfter::http_date(Duration::from_secs(30));
        assert_eq!(imf.render(now), "Thu, 01 Jan 2026 00:00:32 GMT");
        let rfc850 = imf.clone().format(HttpDateFormat::Rfc850);
        assert_eq!(rfc850.render(now), "Thursday, 01-Jan-26 00:00:32 GMT");
        let asctime = imf.format(HttpDateFormat::Asctime);
        assert_eq!(asctime.render(now), "Thu Jan  1 00:00:32 2026");
    }

    #[test]
    fn whole_seconds_are_not_rounded() {
        let at = epoch_plus(31_000);
        assert_eq!(
            http_date(at, HttpDateFormat::Imf),
            "Thu, 01 Jan 2026 00:00:31 GMT"
        );
        let nudged = at + Duration::from_nanos(1);
        assert_eq!(
            http_date(nudged, HttpDateFormat::Imf),
            "Thu, 01 Jan 2026 00:00:32 GMT"
        );
    }

    #[test]
    fn formats_agree_with_httpdate_across_years() {
        // Every 37 days and 1 hour 1 second, through leap years and centuries.
        let mut secs = 0u64;
        while secs < 4_200_000_000 {
            let at = UNIX_EPOCH + Duration::from_secs(secs);
            let imf = http_date(at, HttpDateFormat::Imf);
            for format in [HttpDateFormat::Rfc850, HttpDateFormat::Asctime] {
                let text = http_date(at, format);
                let year = Civil::from_unix(secs as i64).year;
                if format == HttpDateFormat::Rfc850 && !(1970..2070).contains(&year) {
                    // Two-digit years are read as 1970..=2069; compare only inside that window.
                    continue;
                }
                let parsed = httpdate::parse_http_date(&text).unwrap();
                assert_eq!(httpdate::fmt_http_date(parsed), imf, "{text}");
            }
            secs += 37 * 86_400 + 3_601;
        }
    }

    #[test]
    fn seconds_negative_zero_huge_and_raw() {
        let now = epoch_plus(0);
        assert_eq!(RetryAfter::seconds(-5).render(now), "-5");
        assert_eq!(RetryAfter::from(0).render(now), "0");
        assert_eq!(
            RetryAfter::seconds(i64::MAX).render(now),
            "9223372036854775807"
        );
        assert_eq!(RetryAfter::raw("1.5").render(now), "1.5");
        assert_eq!(RetryAfter::from("soon").render(now), "soon");
        assert_eq!(RetryAfter::raw("a\nb").render(now), "a?b");
    }

    #[test]
    fn far_future_dates_clamp_to_year_9999() {
        let ra = RetryAfter::http_date(Duration::from_secs(u64::MAX / 4));
        assert_eq!(ra.render(epoch_plus(0)), "Fri, 31 Dec 9999 23:59:59 GMT");
    }
}
