//! Which outcomes a policy retries: [`RetryOn`], a list of [`RetryOnItem`]s.
//!
//! The textual form is the one a scenario writes (`retry_on: [5xx, 429, transport, timeout]`),
//! so the scenario parser maps each YAML item with [`str::parse`] and reports the error text as
//! is.

use std::fmt;
use std::str::FromStr;

use super::attempt::Observed;

/// One entry of a `retry_on` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryOnItem {
    /// One status, written `429`.
    Status(u16),
    /// A status class by its first digit, written `5xx` (`Class(5)`).
    Class(u8),
    /// An inclusive status range, written `500-504`.
    Range(u16, u16),
    /// Every transport error, including a refused connect: written `transport`.
    Transport,
    /// The client's own timeouts (attempt timeout, abandoned connect): written `timeout`.
    Timeout,
}

impl RetryOnItem {
    /// Whether this item covers `outcome`.
    pub fn matches(&self, outcome: &Observed) -> bool {
        match (self, outcome) {
            (RetryOnItem::Status(s), Observed::Status(got)) => s == got,
            (RetryOnItem::Class(c), Observed::Status(got)) => got / 100 == u16::from(*c),
            (RetryOnItem::Range(lo, hi), Observed::Status(got)) => (*lo..=*hi).contains(got),
            (RetryOnItem::Transport, Observed::Transport(_) | Observed::Refused) => true,
            (RetryOnItem::Timeout, Observed::Timeout) => true,
            _ => false,
        }
    }
}

impl fmt::Display for RetryOnItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryOnItem::Status(s) => write!(f, "{s}"),
            RetryOnItem::Class(c) => write!(f, "{c}xx"),
            RetryOnItem::Range(lo, hi) => write!(f, "{lo}-{hi}"),
            RetryOnItem::Transport => f.write_str("transport"),
            RetryOnItem::Timeout => f.write_str("timeout"),
        }
    }
}

/// Why a `retry_on` item did not parse; its `Display` is the message a scenario error shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOnParseError {
    /// The item as written.
    pub item: String,
}

impl fmt::Display for RetryOnParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid retry_on item `{}`: expected a status (429), a class (5xx), a range \
             (500-504), `transport` or `timeout`",
            self.item
        )
    }
}

impl std::error::Error for RetryOnParseError {}

/// A status is three digits, 100..=599: anything else cannot come from an HTTP/1.1 server.
fn parse_status(s: &str) -> Option<u16> {
    if s.len() != 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u16>().ok().filter(|v| (100..=599).contains(v))
}

impl FromStr for RetryOnItem {
    type Err = RetryOnParseError;

    /// ```
    /// use retrylab::policy::RetryOnItem;
    ///
    /// assert_eq!("5xx".parse(), Ok(RetryOnItem::Class(5)));
    /// assert_eq!("500-504".parse(), Ok(RetryOnItem::Range(500, 504)));
    /// assert!("6xx".parse::<RetryOnItem>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<RetryOnItem, RetryOnParseError> {
        let t = s.trim();
        let err = || RetryOnParseError {
            item: s.to_string(),
        };
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "transport" => return Ok(RetryOnItem::Transport),
            "timeout" => return Ok(RetryOnItem::Timeout),
            _ => {}
        }
        if let Some(digit) = lower.strip_suffix("xx") {
            return match digit.as_bytes() {
                [d @ b'1'..=b'5'] => Ok(RetryOnItem::Class(d - b'0')),
                _ => Err(err()),
            };
        }
        if let Some((lo, hi)) = t.split_once('-') {
            let (lo, hi) = (parse_status(lo.trim()), parse_status(hi.trim()));
            return match (lo, hi) {
                (Some(lo), Some(hi)) if lo <= hi => Ok(RetryOnItem::Range(lo, hi)),
                _ => Err(err()),
            };
        }
        parse_status(t).map(RetryOnItem::Status).ok_or_else(err)
    }
}

/// The set of outcomes a policy retries. A 2xx is a success whatever the set says, and an
/// outcome outside the set stops the call as not retryable.
///
/// The default of the scenario format: `5xx, 429, transport, timeout` (so 4xx other than 429 are not
/// retried).
///
/// ```
/// use retrylab::policy::{Observed, RetryOn};
///
/// let on: RetryOn = "5xx, 429, transport".parse().unwrap();
/// assert!(on.matches(&Observed::Status(429)));
/// assert!(!on.matches(&Observed::Status(404)));
/// assert!(!on.matches(&Observed::Timeout));
/// assert_eq!(RetryOn::default().to_string(), "5xx, 429, transport, timeout");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOn {
    /// The items, in the order written (order does not change what matches).
    pub items: Vec<RetryOnItem>,
}

impl RetryOn {
    /// A set from items.
    pub fn from_items(items: impl IntoIterator<Item = RetryOnItem>) -> RetryOn {
        RetryOn {
            items: items.into_iter().collect(),
        }
    }

    /// The empty set: nothing is retried.
    pub fn none() -> RetryOn {
        RetryOn { items: Vec::new() }
    }

    /// Whether `outcome` is retryable under this set.
    pub fn matches(&self, outcome: &Observed) -> bool {
        self.items.iter().any(|item| item.matches(outcome))
    }
}

impl Default for RetryOn {
    fn default() -> RetryOn {
        RetryOn::from_items([
            RetryOnItem::Class(5),
            RetryOnItem::Status(429),
            RetryOnItem::Transport,
            RetryOnItem::Timeout,
        ])
    }
}

impl fmt::Display for RetryOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl FromStr for RetryOn {
    type Err = RetryOnParseError;

    /// A comma-separated list; the empty string is the empty set.
    fn from_str(s: &str) -> Result<RetryOn, RetryOnParseError> {
        if s.trim().is_empty() {
            return Ok(RetryOn::none());
        }
        s.split(',')
            .map(str::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(|items| RetryOn { items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn default_set() {
        let on = RetryOn::default();
        for s in [500, 502, 503, 504, 599, 429] {
            assert!(on.matches(&Observed::Status(s)), "{s}");
        }
        for s in [200, 301, 400, 401, 403, 404, 409, 422] {
            assert!(!on.matches(&Observed::Status(s)), "{s}");
        }
        assert!(on.matches(&Observed::Timeout));
        assert!(on.matches(&Observed::Refused));
        assert!(on.matches(&Observed::Transport(io::ErrorKind::ConnectionReset)));
    }

    #[test]
    fn parse_round_trip_and_errors() {
        let on: RetryOn = "4xx, 500-504 ,timeout".parse().unwrap();
        assert_eq!(on.to_string(), "4xx, 500-504, timeout");
        assert_eq!(on.to_string().parse::<RetryOn>().unwrap(), on);
        for bad in [
            "", " ", "abc", "5x", "0xx", "600", "99", "504-500", "4290", "-", "1e3",
        ] {
            if bad.trim().is_empty() {
                assert_eq!(bad.parse::<RetryOn>().unwrap(), RetryOn::none());
                continue;
            }
            let err = bad.parse::<RetryOnItem>().unwrap_err();
            assert!(err.to_string().contains("expected a status"), "{bad}");
        }
        assert_eq!("TIMEOUT".parse(), Ok(RetryOnItem::Timeout));
    }
}
