//! Latency distributions: a step's latency drawn per request.
//!
//! This crate generates no random numbers: a distribution turns numbers uniform in `[0, 1)`
//! from the route's latency [`Draw`] into a latency, rounded to whole milliseconds once per
//! draw. The math uses `libm`, whose results do not depend on the platform, so a seed gives
//! the same latencies everywhere.

use std::time::Duration;

use super::draw::Draw;

/// A distribution a step's latency is drawn from, in milliseconds.
///
/// ```
/// use retrylab_endpoints::{Draw, LatencyDistribution};
/// use std::time::Duration;
///
/// struct Fixed(f64);
/// impl Draw for Fixed {
///     fn uniform(&mut self) -> f64 {
///         self.0
///     }
/// }
/// let uniform = LatencyDistribution::Uniform { low_ms: 10, high_ms: 19 };
/// assert_eq!(uniform.sample(&mut Fixed(0.5)), Duration::from_millis(15));
/// let capped = LatencyDistribution::Exponential { mean_ms: 100, max_ms: Some(50) };
/// assert_eq!(capped.sample(&mut Fixed(0.99)), Duration::from_millis(50));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum LatencyDistribution {
    /// Uniform between the two bounds, inclusive (one draw).
    Uniform {
        /// The shortest latency.
        low_ms: u64,
        /// The longest latency.
        high_ms: u64,
    },
    /// `median * exp(sigma * z)` with `z` standard normal (Box-Muller, two draws), clamped
    /// to `max`.
    Lognormal {
        /// The median latency.
        median_ms: u64,
        /// The shape: the standard deviation of the underlying normal.
        sigma: f64,
        /// Draws above this are clamped to it.
        max_ms: Option<u64>,
    },
    /// `-mean * ln(1 - u)` (inverse transform, one draw), clamped to `max`.
    Exponential {
        /// The mean latency.
        mean_ms: u64,
        /// Draws above this are clamped to it.
        max_ms: Option<u64>,
    },
}

/// Equal parameters are bit-equal: `sigma` is validated finite, never NaN.
impl Eq for LatencyDistribution {}

impl LatencyDistribution {
    /// One latency, from the draws of `draw`, rounded to whole milliseconds.
    pub fn sample(&self, draw: &mut dyn Draw) -> Duration {
        let ms = match *self {
            LatencyDistribution::Uniform { low_ms, high_ms } => {
                let (low, high) = (low_ms.min(high_ms), low_ms.max(high_ms));
                // Each of the `span` whole milliseconds gets an equal share of [0, 1).
                let span = (high - low).saturating_add(1) as f64;
                let offset = (draw.uniform() * span) as u64;
                low.saturating_add(offset).min(high)
            }
            LatencyDistribution::Lognormal {
                median_ms,
                sigma,
                max_ms,
            } => {
                // 1 - u lies in (0, 1], so the logarithm is finite.
                let u1 = 1.0 - draw.uniform();
                let u2 = draw.uniform();
                let z =
                    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2);
                clamp_round(median_ms as f64 * libm::exp(sigma * z), max_ms)
            }
            LatencyDistribution::Exponential { mean_ms, max_ms } => {
                let x = -(mean_ms as f64) * libm::log(1.0 - draw.uniform());
                clamp_round(x, max_ms)
            }
        };
        Duration::from_millis(ms)
    }
}

/// Rounds a drawn latency to whole milliseconds, clamped to `max` (and to what a `u64` of
/// milliseconds holds: a huge sigma must not overflow).
fn clamp_round(ms: f64, max_ms: Option<u64>) -> u64 {
    let max = max_ms.map_or(u64::MAX as f64, |m| m as f64);
    let ms = libm::round(ms);
    if ms.is_nan() || ms <= 0.0 {
        0
    } else if ms >= max {
        max_ms.unwrap_or(u64::MAX)
    } else {
        ms as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::script::draw::Seq;

    fn ms(d: Duration) -> u128 {
        d.as_millis()
    }

    #[test]
    fn uniform_covers_both_bounds() {
        let d = LatencyDistribution::Uniform {
            low_ms: 5,
            high_ms: 8,
        };
        let mut draws = Seq(vec![0.0, 0.2499, 0.25, 0.999_999]);
        let got: Vec<u128> = (0..4).map(|_| ms(d.sample(&mut draws))).collect();
        assert_eq!(got, [5, 5, 6, 8]);
    }

    #[test]
    fn lognormal_median_at_zero_and_clamped_at_max() {
        let d = LatencyDistribution::Lognormal {
            median_ms: 20,
            sigma: 2.0,
            max_ms: Some(1000),
        };
        // u1 = 1 - 0.0 = 1 gives z = 0: exactly the median.
        assert_eq!(ms(d.sample(&mut Seq(vec![0.0, 0.3]))), 20);
        // u1 tiny, cos(0) = 1: z is large, so the max.
        assert_eq!(ms(d.sample(&mut Seq(vec![0.999_999, 0.0]))), 1000);
    }

    #[test]
    fn exponential_inverse_transform_rounds_once() {
        let d = LatencyDistribution::Exponential {
            mean_ms: 100,
            max_ms: None,
        };
        // -100 * ln(0.5) = 69.31...
        assert_eq!(ms(d.sample(&mut Seq(vec![0.5]))), 69);
        assert_eq!(ms(d.sample(&mut Seq(vec![0.0]))), 0);
    }
}
