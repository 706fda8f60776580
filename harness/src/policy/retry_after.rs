//! `Retry-After` (RFC 9110 section 10.2.3): parsing, and the floor it puts under the next
//! attempt when a policy honours it.
//!
//! Model choices, each one a place where clients differ (docs/retry-behaviours.md#6-retry-after):
//! - delay-seconds is one or more ASCII digits and nothing else after trimming surrounding
//!   whitespace; a value too large for `u64` saturates (it is still a valid, huge delay);
//!   a sign, a fraction or an exponent makes the value invalid;
//! - an HTTP-date may use any of the three formats; `httpdate` parses it where it can, and a
//!   hand parser takes the dates it refuses (before 1970, or a weekday that does not match);
//!   a date in the past means "no wait";
//! - several `Retry-After` field lines that agree are one value; lines that disagree make the
//!   value invalid (the field is a singleton, and combining them with commas, as RFC 9110
//!   section 5.3 allows a recipient to, gives a value no grammar accepts);
//! - an invalid value imposes nothing: policies behave as if it were absent (go-retryablehttp's
//!   behaviour; a scenario that wants urllib3's "give up" says so with
//!   `retry_after: { invalid: give_up }`, a check outside the policy).

use std::fmt;
use std::time::UNIX_EPOCH;

use retrylab_endpoints::date;

/// A parsed `Retry-After` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryAfterValue {
    /// delay-seconds, measured from the response head.
    Seconds(u64),
    /// An HTTP-date, in Unix seconds (negative before 1970), compared with the virtual wall
    /// clock.
    Date(i64),
    /// Anything else, as received (lossily decoded when it was not UTF-8).
    Invalid(String),
}

impl RetryAfterValue {
    /// Parses one field value.
    ///
    /// ```
    /// use retrylab::policy::RetryAfterValue;
    ///
    /// assert_eq!(RetryAfterValue::parse(" 120 "), RetryAfterValue::Seconds(120));
    /// assert_eq!(
    ///     RetryAfterValue::parse("Thu, 01 Jan 2026 00:00:02 GMT"),
    ///     RetryAfterValue::Date(1_767_225_602)
    /// );
    /// assert!(matches!(RetryAfterValue::parse("1.5"), RetryAfterValue::Invalid(_)));
    /// assert!(matches!(RetryAfterValue::parse("-1"), RetryAfterValue::Invalid(_)));
    /// ```
    pub fn parse(raw: &str) -> RetryAfterValue {
        let t = raw.trim_matches(|c| c == ' ' || c == '\t');
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            // Only digits: the sole failure left is overflow, and a huge delay is still a delay.
            return RetryAfterValue::Seconds(t.parse().unwrap_or(u64::MAX));
        }
        let by_lib = httpdate::parse_http_date(t)
            .ok()
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_secs()).ok());
        match by_lib.or_else(|| date::parse_lenient(t)) {
            Some(unix_s) => RetryAfterValue::Date(unix_s),
            None => RetryAfterValue::Invalid(raw.to_string()),
        }
    }

    /// The value of a response's `Retry-After` field lines, in arrival order: `None` without
    /// any; lines that disagree are [`RetryAfterValue::Invalid`] holding them joined by `, `.
    pub fn from_field_values<'a>(
        values: impl IntoIterator<Item = &'a str>,
    ) -> Option<RetryAfterValue> {
        let raws: Vec<&str> = values.into_iter().collect();
        let first = RetryAfterValue::parse(raws.first()?);
        if raws[1..]
            .iter()
            .all(|raw| RetryAfterValue::parse(raw) == first)
        {
            Some(first)
        } else {
            Some(RetryAfterValue::Invalid(raws.join(", ")))
        }
    }

    /// The `Retry-After` of a header map (see [`RetryAfterValue::from_field_values`]).
    pub fn from_headers(headers: &http::HeaderMap) -> Option<RetryAfterValue> {
        let raws: Vec<String> = headers
            .get_all(http::header::RETRY_AFTER)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        RetryAfterValue::from_field_values(raws.iter().map(String::as_str))
    }

    /// The text a trace records for a response's `Retry-After` field lines: the first line
    /// when every line parses to the same value (so a check re-parsing it sees what a policy
    /// sees), else all of them joined by `, ` (invalid, as for a policy); `None` without any.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue, header::RETRY_AFTER};
    /// use retrylab::policy::RetryAfterValue;
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.append(RETRY_AFTER, HeaderValue::from_static("2"));
    /// headers.append(RETRY_AFTER, HeaderValue::from_static("02"));
    /// assert_eq!(RetryAfterValue::recorded_text(&headers).as_deref(), Some("2"));
    /// headers.append(RETRY_AFTER, HeaderValue::from_static("5"));
    /// assert_eq!(RetryAfterValue::recorded_text(&headers).as_deref(), Some("2, 02, 5"));
    /// ```
    pub fn recorded_text(headers: &http::HeaderMap) -> Option<String> {
        RetryAfterValue::recorded_text_of(headers.get_all(http::header::RETRY_AFTER))
    }

    /// [`RetryAfterValue::recorded_text`] of field lines given one by one (as an endpoint's
    /// ledger keeps them).
    ///
    /// ```
    /// use http::HeaderValue;
    /// use retrylab::policy::RetryAfterValue;
    ///
    /// let lines = [HeaderValue::from_static("2"), HeaderValue::from_static("5")];
    /// assert_eq!(RetryAfterValue::recorded_text_of(&lines).as_deref(), Some("2, 5"));
    /// assert_eq!(RetryAfterValue::recorded_text_of(&[]), None);
    /// ```
    pub fn recorded_text_of<'a>(
        lines: impl IntoIterator<Item = &'a http::HeaderValue>,
    ) -> Option<String> {
        let raws: Vec<String> = lines
            .into_iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let first = raws.first()?.clone();
        match RetryAfterValue::from_field_values(raws.iter().map(String::as_str))? {
            RetryAfterValue::Invalid(joined) => Some(joined),
            _ => Some(first),
        }
    }

    /// False for [`RetryAfterValue::Invalid`].
    pub fn is_valid(&self) -> bool {
        !matches!(self, RetryAfterValue::Invalid(_))
    }
}

impl fmt::Display for RetryAfterValue {
    /// The value as a header would carry it: seconds, an IMF-fixdate, or the raw text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryAfterValue::Seconds(s) => write!(f, "{s}"),
            RetryAfterValue::Date(unix_s) => f.write_str(&date::format_imf_fixdate(*unix_s)),
            RetryAfterValue::Invalid(raw) => f.write_str(raw),
        }
    }
}

/// Whether a policy honours `Retry-After` (scenario key `retry_after: honour | ignore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryAfterRule {
    /// The next attempt starts no earlier than the `Retry-After` says; the delay is the
    /// larger of the backoff and the `Retry-After`.
    #[default]
    Honour,
    /// The header is not looked at.
    Ignore,
}

/// A floor under the next attempt's start, set by a server header.
///
/// Carried by [`super::Envelope::Retry`] so that a violation can name the header and measure
/// from the instant the header refers to, not from the policy's own anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotBefore {
    /// The header that set it, e.g. `Retry-After`.
    pub header: &'static str,
    /// Its value as shown in messages.
    pub value: String,
    /// The earliest virtual instant (ms) at which the next attempt may start.
    pub at_ms: u64,
}

impl NotBefore {
    /// How far after `anchor_ms` the floor lies (0 when it lies before).
    pub fn after(&self, anchor_ms: u64) -> u64 {
        self.at_ms.saturating_sub(anchor_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::attempt::{AttemptView, DEFAULT_EPOCH_UNIX_MS, Observed, retry_after_floor};

    /// The default epoch in Unix seconds, as an HTTP-date carries it.
    const EPOCH_S: i64 = (DEFAULT_EPOCH_UNIX_MS / 1000) as i64;

    #[test]
    fn delay_seconds() {
        assert_eq!(RetryAfterValue::parse("0"), RetryAfterValue::Seconds(0));
        assert_eq!(RetryAfterValue::parse("007"), RetryAfterValue::Seconds(7));
        assert_eq!(RetryAfterValue::parse("\t2 "), RetryAfterValue::Seconds(2));
        assert_eq!(
            RetryAfterValue::parse("99999999999999999999999"),
            RetryAfterValue::Seconds(u64::MAX)
        );
    }

    #[test]
    fn invalid_values() {
        for raw in [
            "",
            " ",
            "-1",
            "-0",
            "+5",
            "1.5",
            "2.0",
            "1e3",
            "0x10",
            "soon",
            "2 s",
            "2,3",
            "Thu, 01 Jan 2026 00:00:02 UTC",
            "2026-01-01T00:00:02Z",
        ] {
            assert_eq!(
                RetryAfterValue::parse(raw),
                RetryAfterValue::Invalid(raw.to_string()),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn dates_in_three_formats() {
        let t = 1_767_225_602; // 2026-01-01T00:00:02Z, a Thursday
        for raw in [
            "Thu, 01 Jan 2026 00:00:02 GMT",
            "Thursday, 01-Jan-26 00:00:02 GMT",
            "Thu Jan  1 00:00:02 2026",
            // wrong weekday: httpdate refuses it, the hand parser takes it
            "Fri, 01 Jan 2026 00:00:02 GMT",
        ] {
            assert_eq!(
                RetryAfterValue::parse(raw),
                RetryAfterValue::Date(t),
                "{raw}"
            );
        }
        assert_eq!(
            RetryAfterValue::parse("Sun, 06 Nov 1960 08:49:37 GMT"),
            RetryAfterValue::Date(-288_803_423)
        );
        assert_eq!(
            RetryAfterValue::Date(t).to_string(),
            "Thu, 01 Jan 2026 00:00:02 GMT"
        );
    }

    #[test]
    fn duplicates() {
        assert_eq!(RetryAfterValue::from_field_values([]), None);
        assert_eq!(
            RetryAfterValue::from_field_values(["2", " 2"]),
            Some(RetryAfterValue::Seconds(2))
        );
        assert_eq!(
            RetryAfterValue::from_field_values(["2", "3"]),
            Some(RetryAfterValue::Invalid("2, 3".to_string()))
        );
        let mut map = http::HeaderMap::new();
        map.append(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("5"),
        );
        assert_eq!(
            RetryAfterValue::from_headers(&map),
            Some(RetryAfterValue::Seconds(5))
        );
        map.append(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_bytes(b"\xff").unwrap(),
        );
        assert!(matches!(
            RetryAfterValue::from_headers(&map),
            Some(RetryAfterValue::Invalid(_))
        ));
    }

    #[test]
    fn floors() {
        // head at 110 ms, wall clock there = epoch + 110 ms.
        let base = AttemptView::new(1, Observed::Status(429), 100, Some(110), 115);
        let secs = base.clone().with_retry_after(RetryAfterValue::Seconds(2));
        assert_eq!(retry_after_floor(&secs).map(|f| f.at_ms), Some(2110));
        // A date 2 s after the epoch: the wall clock reaches it 1890 ms after the head.
        let date = base
            .clone()
            .with_retry_after(RetryAfterValue::Date(EPOCH_S + 2));
        assert_eq!(retry_after_floor(&date).map(|f| f.at_ms), Some(2000));
        let past = base
            .clone()
            .with_retry_after(RetryAfterValue::Date(EPOCH_S - 60));
        assert_eq!(retry_after_floor(&past).map(|f| f.at_ms), Some(110));
        let bad = base.with_retry_after(RetryAfterValue::Invalid("x".into()));
        assert_eq!(retry_after_floor(&bad), None);
    }
}
