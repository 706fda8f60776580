//! The backoff phase's curves (docs/retry-behaviours.md#1-amazon-sns-delivery-policies).

/// How the backoff phase goes from `minDelayTarget` to `maxDelayTarget`.
///
/// For retry `i` = 1..N of the backoff phase (N its length; N = 1 gives `min`), with
/// `x = (i-1)/(N-1)`:
/// - `Linear` (published): `min + (max - min) × x` (20 s, 30 s, 40 s for min 20, max 40,
///   N = 3);
/// - `Arithmetic` (a model): `min + (max - min) × x²`;
/// - `Geometric` (a model): `min × (max / min)^x`;
/// - `Exponential` (a model): `min + (max - min) × (e^(i-1) - 1) / (e^(N-1) - 1)`.
///
/// Every curve starts at `min`, ends at `max` and is monotone. Values are computed in
/// nanoseconds (linear and arithmetic exactly in integers, rounded half up; the others with
/// `libm`), and rounded to ms only at the sleep.
///
/// ```
/// use retrylab::policy::sns::SnsBackoff;
/// use std::time::Duration;
///
/// let (min, max) = (Duration::from_secs(20), Duration::from_secs(40));
/// let delays: Vec<Duration> = (1..=3).map(|i| SnsBackoff::Linear.delay(min, max, i, 3)).collect();
/// assert_eq!(delays, [Duration::from_secs(20), Duration::from_secs(30), Duration::from_secs(40)]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SnsBackoff {
    /// Quadratic from min to max (a model).
    Arithmetic,
    /// Exponential from min to max (a model).
    Exponential,
    /// Geometric from min to max (a model).
    Geometric,
    /// Evenly spaced from min to max (published).
    #[default]
    Linear,
}

impl SnsBackoff {
    /// The delay of backoff retry `i` of `n` (1-based), between `min` and `max`.
    pub fn delay(
        self,
        min: std::time::Duration,
        max: std::time::Duration,
        i: u32,
        n: u32,
    ) -> std::time::Duration {
        let ns = self.delay_ns(
            crate::policy::units::duration_ns(min),
            crate::policy::units::duration_ns(max),
            i,
            n,
        );
        std::time::Duration::from_nanos(ns)
    }

    /// [`SnsBackoff::delay`] in nanoseconds.
    pub(crate) fn delay_ns(self, min: u64, max: u64, i: u32, n: u32) -> u64 {
        let max = max.max(min);
        if n <= 1 || i <= 1 {
            return min;
        }
        if i >= n {
            return max;
        }
        let span = u128::from(max - min);
        let (k, m) = (u128::from(i - 1), u128::from(n - 1));
        let raw = match self {
            SnsBackoff::Linear => u128::from(min) + div_round(span * k, m),
            SnsBackoff::Arithmetic => u128::from(min) + div_round(span * k * k, m * m),
            SnsBackoff::Geometric => {
                if min == 0 {
                    return 0;
                }
                let x = (i - 1) as f64 / (n - 1) as f64;
                let v = min as f64 * libm::pow(max as f64 / min as f64, x);
                libm::round(v).clamp(0.0, u64::MAX as f64) as u128
            }
            SnsBackoff::Exponential => {
                let ratio = libm::expm1(f64::from(i - 1)) / libm::expm1(f64::from(n - 1));
                let v = min as f64 + (max - min) as f64 * ratio;
                libm::round(v).clamp(0.0, u64::MAX as f64) as u128
            }
        };
        u64::try_from(raw).unwrap_or(u64::MAX).clamp(min, max)
    }

    /// The name AWS writes (`linear`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SnsBackoff::Arithmetic => "arithmetic",
            SnsBackoff::Exponential => "exponential",
            SnsBackoff::Geometric => "geometric",
            SnsBackoff::Linear => "linear",
        }
    }
}

/// `a / b` rounded half up.
fn div_round(a: u128, b: u128) -> u128 {
    (a + b / 2) / b
}
