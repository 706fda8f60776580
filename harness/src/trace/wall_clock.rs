//! The wall clock of a run on real sockets, as its trace header carries it.
//!
//! On the simulated path the wall clock is the scenario's `epoch` plus virtual time, so
//! judging reads it from the scenario. On real sockets it is the real clock, read once as
//! the run starts (`backend/real`): nothing but the trace knows that reading, so the header
//! carries it, for people (what every `Date` and HTTP-date `Retry-After` was written from)
//! and for the checks (which judge those dates against it).

use std::time::{Duration, UNIX_EPOCH};

use super::Trace;

/// The header key of a real run's wall clock at t=0.
pub(crate) const EPOCH_KEY: &str = "epoch";

/// What the value says after the instant itself.
const EPOCH_NOTE: &str =
    ", the real clock at t=0: each Date and HTTP-date Retry-After sent is written from it";

/// The header entry for a real run whose wall clock read `unix_ms` at t=0:
/// `2026-12-05T20:08:17.123Z, the real clock at t=0: ...`.
pub(crate) fn epoch_entry(unix_ms: u64) -> (String, String) {
    let at = UNIX_EPOCH + Duration::from_millis(unix_ms);
    (
        EPOCH_KEY.to_owned(),
        format!("{}{EPOCH_NOTE}", humantime::format_rfc3339_millis(at)),
    )
}

impl Trace {
    /// The real wall clock at t=0 of a run on real sockets, in milliseconds since the Unix
    /// epoch; `None` for a simulated run (its wall clock is the scenario's `epoch`) or a
    /// header that does not carry a readable one.
    pub(crate) fn real_epoch_unix_ms(&self) -> Option<u64> {
        if !self.on_real_sockets() {
            return None;
        }
        let (_, value) = self.header.iter().find(|(key, _)| key == EPOCH_KEY)?;
        let instant = value.split(',').next()?;
        let at = humantime::parse_rfc3339(instant).ok()?;
        u64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real_trace(header: Vec<(String, String)>) -> Trace {
        Trace {
            header,
            ..Trace::default()
        }
    }

    #[test]
    fn a_real_trace_gives_back_the_epoch_it_was_written_with() {
        let unix_ms = 1_796_500_097_123;
        let (key, value) = epoch_entry(unix_ms);
        assert_eq!(key, "epoch");
        assert!(
            value.starts_with("2026-12-05T19:48:17.123Z, the real clock at t=0"),
            "{value}"
        );
        let real = real_trace(vec![("backend".into(), "real".into()), (key, value)]);
        assert_eq!(real.real_epoch_unix_ms(), Some(unix_ms));
    }

    #[test]
    fn a_sim_trace_or_a_missing_entry_has_none() {
        let entry = epoch_entry(1_796_500_097_123);
        let sim = real_trace(vec![("backend".into(), "sim".into()), entry.clone()]);
        assert_eq!(sim.real_epoch_unix_ms(), None);
        let bare = real_trace(vec![("backend".into(), "real".into())]);
        assert_eq!(bare.real_epoch_unix_ms(), None);
        let garbled = real_trace(vec![
            ("backend".into(), "real".into()),
            ("epoch".into(), "yesterday".into()),
        ]);
        assert_eq!(garbled.real_epoch_unix_ms(), None);
    }
}
