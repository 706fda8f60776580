//! Integer time arithmetic shared by the policies (docs/architecture.md#determinism: delays are computed in
//! integer nanoseconds and rounded once, to whole milliseconds, at the sleep).

use std::time::Duration;

/// Nanoseconds per millisecond.
pub(crate) const NS_PER_MS: u64 = 1_000_000;

/// A `Duration` as whole nanoseconds, saturating at `u64::MAX` (about 584 years), so that an
/// absurd configured delay behaves as "forever" instead of wrapping.
pub(crate) fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Rounds nanoseconds to the nearest whole millisecond, halves up.
///
/// This is the single rounding step of every delay. Rounding is monotone, so a sample inside
/// `[lo_ns, hi_ns]` rounds into `[round(lo_ns), round(hi_ns)]`: the envelope is the rounded
/// nanosecond window and `decide` always lands inside it.
pub(crate) fn ns_to_ms(ns: u64) -> u64 {
    ns / NS_PER_MS + u64::from(ns % NS_PER_MS >= NS_PER_MS / 2)
}

/// Formats whole milliseconds as seconds with three decimals (`1.200s`), the one duration
/// format of violation messages: exact to the millisecond, and sortable by eye.
pub fn fmt_ms(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_format() {
        assert_eq!(ns_to_ms(0), 0);
        assert_eq!(ns_to_ms(499_999), 0);
        assert_eq!(ns_to_ms(500_000), 1);
        assert_eq!(ns_to_ms(1_499_999), 1);
        assert_eq!(ns_to_ms(u64::MAX), u64::MAX / NS_PER_MS + 1);
        assert_eq!(fmt_ms(1200), "1.200s");
        assert_eq!(fmt_ms(5), "0.005s");
        assert_eq!(fmt_ms(62_000), "62.000s");
        assert_eq!(duration_ns(Duration::from_millis(3)), 3_000_000);
        assert_eq!(duration_ns(Duration::MAX), u64::MAX);
    }
}
