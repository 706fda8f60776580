//! The connect schedule: what happens to each connection attempt.

use serde::{Deserialize, Serialize};

use super::schedule_index;

/// What the network does with one connection attempt (a scenario's `connect: [{ action }]`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConnectAction {
    /// The connection is established.
    #[default]
    Accept,
    /// Refused: RST after one round trip.
    Refuse,
    /// The connect never completes.
    Blackhole,
}

/// One entry of a connect schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectStep {
    /// The action.
    pub action: ConnectAction,
    /// How many consecutive attempts get it (the last entry repeats forever).
    pub times: u32,
}

impl ConnectStep {
    /// Accept one attempt.
    pub fn accept() -> Self {
        Self::new(ConnectAction::Accept)
    }

    /// Refuse one attempt.
    pub fn refuse() -> Self {
        Self::new(ConnectAction::Refuse)
    }

    /// Black-hole one attempt.
    pub fn blackhole() -> Self {
        Self::new(ConnectAction::Blackhole)
    }

    /// `action`, once.
    pub fn new(action: ConnectAction) -> Self {
        Self { action, times: 1 }
    }

    /// Apply to `times` consecutive attempts.
    pub fn times(mut self, times: u32) -> Self {
        self.times = times;
        self
    }
}

/// A connect schedule being consumed: attempts take entries in arrival order, the last entry
/// repeats, an empty schedule accepts everything.
///
/// ```
/// use retrylab_endpoints::{ConnectAction, ConnectSchedule, ConnectStep};
///
/// let mut schedule = ConnectSchedule::new([ConnectStep::refuse().times(2), ConnectStep::accept()]);
/// let actions: Vec<_> = (0..4).map(|_| schedule.next()).collect();
/// assert_eq!(actions, [ConnectAction::Refuse, ConnectAction::Refuse, ConnectAction::Accept, ConnectAction::Accept]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ConnectSchedule {
    steps: Vec<ConnectStep>,
    attempts: u64,
}

impl ConnectSchedule {
    /// A schedule from its entries.
    pub fn new(steps: impl IntoIterator<Item = ConnectStep>) -> Self {
        Self {
            steps: steps.into_iter().collect(),
            attempts: 0,
        }
    }

    /// The action for the next attempt.
    #[allow(clippy::should_implement_trait)] // not an iterator: it never ends
    pub fn next(&mut self) -> ConnectAction {
        let n = self.attempts;
        self.attempts += 1;
        let index = schedule_index(self.steps.iter().map(|s| s.times), n);
        self.steps.get(index).map(|s| s.action).unwrap_or_default()
    }

    /// How many attempts have been decided.
    pub fn attempts(&self) -> u64 {
        self.attempts
    }

    /// Starts over: the next attempt takes the first entry again.
    ///
    /// ```
    /// use retrylab_endpoints::{ConnectAction, ConnectSchedule, ConnectStep};
    ///
    /// let mut schedule = ConnectSchedule::new([ConnectStep::refuse(), ConnectStep::accept()]);
    /// assert_eq!(schedule.next(), ConnectAction::Refuse);
    /// schedule.restart();
    /// assert_eq!((schedule.next(), schedule.attempts()), (ConnectAction::Refuse, 1));
    /// ```
    pub fn restart(&mut self) {
        self.attempts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_schedule_accepts() {
        let mut schedule = ConnectSchedule::default();
        assert_eq!(schedule.next(), ConnectAction::Accept);
        assert_eq!(schedule.next(), ConnectAction::Accept);
        assert_eq!(schedule.attempts(), 2);
    }

    #[test]
    fn last_entry_repeats() {
        let mut schedule = ConnectSchedule::new([ConnectStep::accept(), ConnectStep::blackhole()]);
        let actions: Vec<_> = (0..3).map(|_| schedule.next()).collect();
        assert_eq!(
            actions,
            [
                ConnectAction::Accept,
                ConnectAction::Blackhole,
                ConnectAction::Blackhole
            ]
        );
    }
}
