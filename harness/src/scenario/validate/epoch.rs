//! `epoch:`, the virtual wall clock at the start of the run: an RFC 3339 date-time or an
//! IMF-fixdate ([scenario format](../../../../docs/scenario-format.md#top-level)).

use super::Validator;

impl Validator<'_> {
    pub(super) fn epoch(&mut self) {
        let s = self.s;
        if let Some(epoch) = &s.epoch {
            if !valid_rfc3339(epoch) && httpdate::parse_http_date(epoch).is_err() {
                self.err_expected(
                    "epoch",
                    format!("invalid date `{epoch}`"),
                    "an RFC 3339 date such as `2026-01-01T00:00:00Z` or an IMF date such as `Thu, 01 Jan 2026 00:00:00 GMT`",
                );
            }
        }
    }
}

/// An RFC 3339 `date-time` (section 5.6): `YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|±HH:MM)`.
///
/// [`humantime::parse_rfc3339`] checks the date and the time: field ranges, month lengths,
/// leap years, leap seconds. It reads only UTC written with `T` and `Z`, and only years from
/// 1970, so the separator, the fraction and the offset are read here and the local date-time
/// is handed to it in that spelling. An offset's hour and minute have the ranges of a time's
/// (`time-hour` and `time-minute` in the RFC's grammar), so humantime checks them as a time.
fn valid_rfc3339(s: &str) -> bool {
    let (Some(date), Some(separator), Some(time), Some(rest)) =
        (s.get(..10), s.get(10..11), s.get(11..19), s.get(19..))
    else {
        return false;
    };
    if !matches!(separator, "T" | "t" | " ") {
        return false;
    }
    let zone = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            &fraction[digits..]
        }
        None => rest,
    };
    let zone_valid = match zone {
        "Z" | "z" => true,
        offset => offset
            .strip_prefix(['+', '-'])
            .is_some_and(|hh_mm| hh_mm.len() == 5 && utc(&format!("1970-01-01T{hh_mm}:00Z"))),
    };
    zone_valid && utc(&format!("{}T{time}Z", from_1970(date)))
}

/// `YYYY-MM-DD` with a year before 1970 moved 2000 years on: the Gregorian calendar repeats
/// every 400 years, so the month lengths are the same.
fn from_1970(date: &str) -> String {
    let year = date
        .get(..4)
        .filter(|y| y.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|y| y.parse::<u32>().ok());
    match (year, date.get(4..)) {
        (Some(year), Some(month_day)) if year < 1970 => format!("{}{month_day}", year + 2000),
        _ => date.to_string(),
    }
}

fn utc(s: &str) -> bool {
    humantime::parse_rfc3339(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::valid_rfc3339;

    #[test]
    fn rfc3339() {
        for ok in [
            "2026-01-01T00:00:00Z",
            "2024-02-29T23:59:60.123+05:30",
            "2026-12-31t10:00:00-00:00",
            "2026-01-01 00:00:00z",
            "2026-01-01T00:00:00.123456789012+23:59",
            "1600-02-29T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:60Z",
        ] {
            assert!(valid_rfc3339(ok), "{ok}");
        }
        for bad in [
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
            "2026-01-01",
            "2026-01-01T00:00:00Zjunk",
            "2026-01-01T00:00:00ZZ",
            "+999-01-01T00:00:00Z",
            "２０２６-01-01T00:00:00Z",
        ] {
            assert!(!valid_rfc3339(bad), "{bad}");
        }
    }
}
