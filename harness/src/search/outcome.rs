//! What a search came to.

use super::failure::Failure;

/// What a search (or one shard of it) came to: how many cases it tried and the failure it
/// found, if any.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub(crate) tried: u32,
    pub(crate) failure: Option<Failure>,
}

impl Outcome {
    /// Cases tried, not counting shrinking.
    pub fn cases_tried(&self) -> u32 {
        self.tried
    }

    /// The smallest failing case, if a case failed.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Whether every case held.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}
