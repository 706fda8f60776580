//! The adaptive retry mode's client-side rate limiter: a send-token bucket whose rate follows
//! CUBIC (docs/retry-behaviours.md#2-aws-sdk-retry-modes; botocore `retries/adaptive.py`, `bucket.py`, `throttling.py`).
//!
//! Times are seconds since the run started (virtual ms / 1000), as `f64`, the way botocore
//! reads its clock; transcendental functions come from `libm`.

/// CUBIC's multiplicative decrease on a throttle.
pub(crate) const BETA: f64 = 0.7;
/// CUBIC's scale constant.
pub(crate) const SCALE_CONSTANT: f64 = 0.4;
/// The weight of the newest bucket in the measured send rate.
pub(crate) const SMOOTHING: f64 = 0.8;
/// The measured rate's bucket width, seconds.
pub(crate) const TIME_BUCKET_RANGE: f64 = 0.5;
/// The lowest fill rate, tokens per second.
pub(crate) const MIN_FILL_RATE: f64 = 0.5;
/// The lowest bucket capacity, tokens.
pub(crate) const MIN_CAPACITY: f64 = 1.0;
/// The new rate is capped at this multiple of the measured send rate.
pub(crate) const MAX_RATE_ADJUST_SCALE: f64 = 2.0;

/// CUBIC's rate after a throttle and after a success (botocore `CubicCalculator`).
///
/// ```
/// use retrylab::policy::aws::Cubic;
///
/// let mut cubic = Cubic::new(0.0);
/// // A throttle while sending 10 requests/s: the new rate is 7/s, and the curve's plateau
/// // (back at 10/s) lies K = cbrt(10 × 0.3 / 0.4) = cbrt(7.5) s later.
/// assert!((cubic.throttled(10.0, 2.0) - 7.0).abs() < 1e-12);
/// assert!((cubic.k() - 1.957_433_820_1).abs() < 1e-9);
/// assert!((cubic.success(2.0 + cubic.k()) - 10.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    last_max_rate: f64,
    k: f64,
    last_throttle: f64,
}

impl Cubic {
    /// The calculator at `start` seconds, with a last maximum rate of 0 (botocore's start).
    pub fn new(start: f64) -> Cubic {
        let mut c = Cubic {
            last_max_rate: 0.0,
            k: 0.0,
            last_throttle: start,
        };
        c.k = c.zero_point();
        c
    }

    /// `K = cbrt(last_max_rate × (1 - BETA) / SCALE_CONSTANT)`.
    fn zero_point(&self) -> f64 {
        libm::cbrt(self.last_max_rate * (1.0 - BETA) / SCALE_CONSTANT)
    }

    /// The current `K`, seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The rate at the last throttle.
    pub fn last_max_rate(&self) -> f64 {
        self.last_max_rate
    }

    /// A success at `t`: `SCALE_CONSTANT × (t - last_throttle - K)^3 + last_max_rate`.
    pub fn success(&self, t: f64) -> f64 {
        let dt = t - self.last_throttle - self.k;
        SCALE_CONSTANT * dt * dt * dt + self.last_max_rate
    }

    /// A throttle at `t` while sending at `rate_to_use`: remembers it as the last maximum
    /// and returns `rate_to_use × BETA`.
    pub fn throttled(&mut self, rate_to_use: f64, t: f64) -> f64 {
        self.last_max_rate = rate_to_use;
        self.k = self.zero_point();
        self.last_throttle = t;
        rate_to_use * BETA
    }
}

/// The measured send rate (botocore `RateClocker`): requests counted into
/// [`TIME_BUCKET_RANGE`] buckets, smoothed by [`SMOOTHING`] when a bucket closes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RateClocker {
    measured: f64,
    last_bucket: f64,
    count: u64,
}

impl RateClocker {
    fn new(start: f64) -> RateClocker {
        RateClocker {
            measured: 0.0,
            // botocore floors its construction time to the second, not to the bucket.
            last_bucket: libm::floor(start),
            count: 0,
        }
    }

    fn record(&mut self, t: f64) -> f64 {
        let scale = 1.0 / TIME_BUCKET_RANGE;
        let bucket = libm::floor(t * scale) / scale;
        self.count += 1;
        if bucket > self.last_bucket {
            let current = self.count as f64 / (bucket - self.last_bucket);
            self.measured = current * SMOOTHING + self.measured * (1.0 - SMOOTHING);
            self.count = 0;
            self.last_bucket = bucket;
        }
        self.measured
    }
}

/// The send-token bucket (botocore `TokenBucket`), one token per request.
///
/// Model: a reservation bucket. A request takes its token at the instant it starts, after
/// refilling to that instant; a client that starts before a token is there drives the
/// capacity below zero, and the debt delays later sends. For a client that waits for its
/// token this is exactly botocore's blocking `acquire` (it sleeps `(1 - capacity) /
/// fill_rate`, then takes the token).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SendBucket {
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last: f64,
}

impl SendBucket {
    /// botocore's start: `max_rate = 1`, empty, last refill at `start`.
    fn new(start: f64) -> SendBucket {
        SendBucket {
            fill_rate: 1.0,
            max_capacity: 1.0,
            capacity: 0.0,
            last: start,
        }
    }

    fn refill(&mut self, t: f64) {
        if t > self.last {
            let filled = self.capacity + (t - self.last) * self.fill_rate;
            self.capacity = filled.min(self.max_capacity);
            self.last = t;
        }
    }

    fn set_max_rate(&mut self, rate: f64, t: f64) {
        self.refill(t);
        self.fill_rate = rate.max(MIN_FILL_RATE);
        self.max_capacity = if rate >= 1.0 { rate } else { MIN_CAPACITY };
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// Seconds from `t` until a token is there.
    fn wait(&self, t: f64) -> f64 {
        let mut at = self.clone();
        at.refill(t);
        if at.capacity >= 1.0 {
            0.0
        } else {
            (1.0 - at.capacity) / at.fill_rate
        }
    }
}

/// The adaptive mode's limiter: off until the first throttling response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limiter {
    enabled: bool,
    cubic: Cubic,
    clocker: RateClocker,
    bucket: SendBucket,
}

impl Limiter {
    pub(crate) fn new() -> Limiter {
        Limiter {
            enabled: false,
            cubic: Cubic::new(0.0),
            clocker: RateClocker::new(0.0),
            bucket: SendBucket::new(0.0),
        }
    }

    /// A request starts at `t`: it takes a send token when the limiter is on.
    pub(crate) fn on_send(&mut self, t: f64) {
        if self.enabled {
            self.bucket.refill(t);
            self.bucket.capacity -= 1.0;
        }
    }

    /// A response (or error) at `t` (botocore `on_receiving_response`).
    pub(crate) fn on_response(&mut self, t: f64, throttled: bool) {
        let measured = self.clocker.record(t);
        let new_rate = if throttled {
            let rate_to_use = if self.enabled {
                measured.min(self.bucket.fill_rate)
            } else {
                measured
            };
            self.enabled = true;
            self.cubic.throttled(rate_to_use, t)
        } else {
            self.cubic.success(t)
        };
        self.bucket
            .set_max_rate(new_rate.min(MAX_RATE_ADJUST_SCALE * measured), t);
    }

    /// Seconds from `t` until the next request may be sent (0 while the limiter is off).
    pub(crate) fn wait(&self, t: f64) -> f64 {
        if self.enabled {
            self.bucket.wait(t)
        } else {
            0.0
        }
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn fill_rate(&self) -> f64 {
        self.bucket.fill_rate
    }

    pub(crate) fn measured_rate(&self) -> f64 {
        self.clocker.measured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn cubic_hand_computed() {
        // A throttle at t = 0 while sending 10/s: rate 7; K = cbrt(10 × 0.3 / 0.4) =
        // cbrt(7.5) = 1.957433820...
        let mut c = Cubic::new(0.0);
        assert!(close(c.throttled(10.0, 0.0), 7.0));
        assert!(close(c.k(), 1.957_433_820_1));
        // t = 0: 0.4 × (-K)^3 + 10 = 10 - 0.4 × 7.5 = 7.
        assert!(close(c.success(0.0), 7.0));
        // t = 1: 0.4 × (1 - 1.9574338)^3 + 10 = 10 - 0.4 × 0.8776600 = 9.6489360...
        assert!(close(c.success(1.0), 9.648_936_009_7), "{}", c.success(1.0));
        // t = 4: 0.4 × (2.0425662)^3 + 10 = 10 + 0.4 × 8.5217426 = 13.4086970...
        assert!(
            close(c.success(4.0), 13.408_697_022_2),
            "{}",
            c.success(4.0)
        );
        // A second throttle at t = 5 sending 4/s: 2.8; K = cbrt(4 × 0.3 / 0.4) = cbrt(3).
        assert!(close(c.throttled(4.0, 5.0), 2.8));
        assert!(close(c.k(), 1.442_249_570_3));
        assert!(close(c.success(5.0 + 1.442_249_570_307_408), 4.0));
    }

    #[test]
    fn rate_clocker_buckets() {
        let mut r = RateClocker::new(0.0);
        // Same bucket as the start: nothing measured yet.
        assert!(close(r.record(0.2), 0.0));
        // Bucket 0.5 closes with 2 requests over 0.5 s: 4/s × 0.8 = 3.2.
        assert!(close(r.record(0.6), 3.2));
        // Bucket 1.0: 1 request over 0.5 s: 2 × 0.8 + 3.2 × 0.2 = 2.24.
        assert!(close(r.record(1.1), 2.24));
        assert!(close(r.record(1.2), 2.24));
    }

    #[test]
    fn bucket_waits_for_a_token() {
        let mut b = SendBucket::new(0.0);
        assert!(close(b.wait(0.0), 1.0));
        assert!(close(b.wait(0.25), 0.75));
        b.set_max_rate(4.0, 0.5); // refilled to 0.5 at rate 1, then 4/s, capacity up to 4
        assert!(close(b.capacity, 0.5));
        assert!(close(b.wait(0.5), 0.125));
        b.set_max_rate(0.1, 1.0); // 0.5 + 2 = 2.5 capped at 1 token, fill 0.5/s
        assert!(close(b.capacity, 1.0));
        assert!(close(b.fill_rate, 0.5));
        b.capacity -= 1.0;
        assert!(close(b.wait(1.0), 2.0));
    }
}
