//! Jitter: how a policy turns its schedule's base delay into the delay it sleeps.

use crate::rng::Stream;

/// The jitter of a generic policy (scenario key `jitter`).
///
/// Every variant is applied to the base delay *after* the cap (`max_delay`), so a full
/// jitter never sleeps longer than the cap: this is the AWS Architecture Blog's "Exponential
/// Backoff and Jitter" formulation, and the order botocore and smithy-rs use.
/// Samples are drawn in integer nanoseconds with [`Stream::uniform_u64`] and rounded once to
/// the nearest millisecond.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// The base delay itself.
    None,
    /// Uniform in `[0, base]`.
    #[default]
    Full,
    /// `base - floor(base / 2) + uniform[0, floor(base / 2)]`, i.e. uniform in
    /// `[ceil(base / 2), base]` (the blog's `base/2 + random(0, base/2)`).
    Equal,
    /// `min(max_delay, uniform[initial, 3 × previous delay])`, the previous delay being the
    /// client's observed previous delay (`initial` before the first retry). It ignores the
    /// schedule's base: the blog's "Decorrelated Jitter", whose factor 3 is fixed.
    Decorrelated,
}

/// Everything a jitter may look at, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JitterInput {
    /// The schedule's delay for this retry, already capped.
    pub base_ns: u64,
    /// The schedule's first delay (decorrelated's lower bound).
    pub initial_ns: u64,
    /// The cap (decorrelated applies it after drawing).
    pub cap_ns: u64,
    /// The client's previous delay, `None` before the first retry.
    pub prev_ns: Option<u64>,
}

impl JitterInput {
    /// Decorrelated's draw range, before the cap.
    fn decorrelated_range(&self) -> (u64, u64) {
        let prev = self.prev_ns.unwrap_or(self.initial_ns);
        (self.initial_ns, prev.saturating_mul(3).max(self.initial_ns))
    }
}

impl Jitter {
    /// The inclusive range of delays (ns) this jitter can produce.
    pub(crate) fn window_ns(self, input: &JitterInput) -> (u64, u64) {
        let base = input.base_ns;
        match self {
            Jitter::None => (base, base),
            Jitter::Full => (0, base),
            Jitter::Equal => (base - base / 2, base),
            Jitter::Decorrelated => {
                let (lo, hi) = input.decorrelated_range();
                (lo.min(input.cap_ns), hi.min(input.cap_ns))
            }
        }
    }

    /// One delay (ns), drawn from `rng` (no draw for [`Jitter::None`]).
    pub(crate) fn sample_ns(self, input: &JitterInput, rng: &mut Stream) -> u64 {
        let base = input.base_ns;
        match self {
            Jitter::None => base,
            Jitter::Full => rng.uniform_u64(0, base),
            Jitter::Equal => base - base / 2 + rng.uniform_u64(0, base / 2),
            Jitter::Decorrelated => {
                let (lo, hi) = input.decorrelated_range();
                rng.uniform_u64(lo, hi).min(input.cap_ns)
            }
        }
    }

    /// True when a delay is uniform over the whole window, so that landing on one of its
    /// bounds again and again is evidence of a different client (see the conformance
    /// module). Decorrelated is not: its cap is an atom.
    pub(crate) fn is_uniform(self) -> bool {
        matches!(self, Jitter::Full | Jitter::Equal)
    }
}
