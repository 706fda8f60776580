//! The arithmetic every backoff shares, in integer nanoseconds: the capped exponential
//! `min(initial × multiplier^k, max)` and a symmetric spread around a delay.

/// `min(initial_ns × multiplier^k, cap_ns)`, with `libm::pow` and one rounding to the
/// nanosecond. A NaN or infinite growth is treated as "at the cap", a negative one as 0, so
/// no configuration panics.
pub(crate) fn capped_ns(initial_ns: u64, multiplier: f64, k: u32, cap_ns: u64) -> u64 {
    let raw = initial_ns as f64 * libm::pow(multiplier, f64::from(k));
    if raw.is_nan() || raw >= cap_ns as f64 {
        cap_ns
    } else if raw <= 0.0 {
        0
    } else {
        (libm::round(raw) as u64).min(cap_ns)
    }
}

/// `[b × (1 - spread), b × (1 + spread)]` in nanoseconds, each bound rounded once; `spread`
/// is clamped into [0, 1].
pub(crate) fn spread_ns(b: u64, spread: f64) -> (u64, u64) {
    let spread = if spread.is_nan() {
        0.0
    } else {
        spread.clamp(0.0, 1.0)
    };
    let d = libm::round(b as f64 * spread).clamp(0.0, b as f64) as u64;
    (b - d, b.saturating_add(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_capped_and_never_panics() {
        assert_eq!(
            capped_ns(1_000_000_000, 1.6, 0, 120_000_000_000),
            1_000_000_000
        );
        assert_eq!(
            capped_ns(1_000_000_000, 1.6, 2, 120_000_000_000),
            2_560_000_000
        );
        assert_eq!(
            capped_ns(1_000_000_000, 1.6, 20, 120_000_000_000),
            120_000_000_000
        );
        assert_eq!(capped_ns(1, f64::NAN, 3, 7), 7);
        assert_eq!(capped_ns(1, -2.0, 1, 7), 0);
        assert_eq!(spread_ns(1_000, 0.2), (800, 1_200));
        assert_eq!(spread_ns(1_000, f64::NAN), (1_000, 1_000));
    }
}
