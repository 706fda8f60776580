//! How a rendering writes an instant or a duration: exactly, to the millisecond, for virtual
//! time; redacted for real time, which differs on every run.

use super::Trace;

/// What a redacted instant or duration reads as.
pub(crate) const REAL: &str = "[real]";

/// How a rendering shows instants and durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Instants {
    /// `1.234s`, to the millisecond: virtual time, the same on every run.
    Exact,
    /// [`REAL`]: real time, different on every run.
    Redacted,
}

impl Instants {
    /// [`Instants::Redacted`] for a trace whose header says `backend: real`.
    pub(crate) fn of(trace: &Trace) -> Instants {
        if trace.on_real_sockets() {
            Instants::Redacted
        } else {
            Instants::Exact
        }
    }

    /// `ms` as the timeline writes it: `1.234s`, or [`REAL`].
    pub(crate) fn show(self, ms: u64) -> String {
        match self {
            Instants::Exact => seconds(ms),
            Instants::Redacted => REAL.to_owned(),
        }
    }
}

/// `1234` ms as `1.234s`: the timeline's unit, exact to the millisecond.
pub fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}
