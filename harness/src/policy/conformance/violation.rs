//! What a [`Conformance`](super::Conformance) check finds: a call departing from its policy.

use std::fmt;

use crate::policy::StopReason;

/// What kind of rule a [`Violation`] broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// The next attempt started before the policy's window.
    TooEarly,
    /// The next attempt started after the policy's window.
    TooLate,
    /// The next attempt started before the floor a server header set (`Retry-After`).
    RetryAfterNotHonoured,
    /// The call stopped where the policy requires another attempt.
    StoppedEarly,
    /// An attempt was made where the policy requires the call to stop, for this reason.
    RetriedAfterStop(StopReason),
    /// Too many delays sat exactly on one bound of a uniform window.
    PinnedAtBound,
    /// The attempts are not numbered 1, 2, 3, ...: the timeline cannot be judged.
    Numbering,
    /// An attempt timed out sooner than the policy lets one run (gRPC's connect deadline,
    /// at least `MIN_CONNECT_TIMEOUT`).
    GaveUpEarly,
}

/// One way a call departed from its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The attempt the message is about (the later one for a gap).
    pub attempt: u32,
    /// The rule broken.
    pub kind: ViolationKind,
    /// A sentence naming the attempt, what happened and what was needed.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
