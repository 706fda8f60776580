//! The connect schedule: what happens to each connection attempt.

use serde::{Deserialize, Serialize};

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

impl ConnectAction {
    /// The action's name as scenarios write it.
    ///
    /// ```
    /// use retrylab_endpoints::ConnectAction;
    /// assert_eq!(ConnectAction::Blackhole.name(), "blackhole");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ConnectAction::Accept => "accept",
            ConnectAction::Refuse => "refuse",
            ConnectAction::Blackhole => "blackhole",
        }
    }
}

/// One entry of a connect schedule: for a number of attempts, or for every attempt until an
/// instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectStep {
    /// The action.
    pub action: ConnectAction,
    /// How many consecutive attempts get it (the last entry repeats forever).
    pub times: u32,
    /// When set, the entry holds for every attempt before this instant (ms since the run
    /// started) instead of for `times` attempts; then the next entry takes over, and after
    /// a last entry of this kind, every connection is accepted.
    pub until_ms: Option<u64>,
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
        Self {
            action,
            times: 1,
            until_ms: None,
        }
    }

    /// Apply to every attempt before the instant `ms` (since the run started), instead of
    /// to a number of attempts: a service down for the first seconds of a run.
    ///
    /// ```
    /// use retrylab_endpoints::{ConnectAction, ConnectSchedule, ConnectStep};
    ///
    /// let mut schedule = ConnectSchedule::new([ConnectStep::refuse().until_ms(2_000)]);
    /// assert_eq!(schedule.next_at(0), ConnectAction::Refuse);
    /// assert_eq!(schedule.next_at(1_999), ConnectAction::Refuse);
    /// assert_eq!(schedule.next_at(2_000), ConnectAction::Accept);
    /// ```
    pub fn until_ms(mut self, ms: u64) -> Self {
        self.until_ms = Some(ms);
        self
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
    /// The entry in force, and the attempts it has taken (for an entry of `times`).
    index: usize,
    taken: u32,
}

impl ConnectSchedule {
    /// A schedule from its entries.
    pub fn new(steps: impl IntoIterator<Item = ConnectStep>) -> Self {
        Self {
            steps: steps.into_iter().collect(),
            attempts: 0,
            index: 0,
            taken: 0,
        }
    }

    /// The action for the next attempt, at an instant no entry of the schedule waits for
    /// (a schedule of counts alone).
    #[allow(clippy::should_implement_trait)] // not an iterator: it never ends
    pub fn next(&mut self) -> ConnectAction {
        self.next_at(0)
    }

    /// The action for the next attempt, made at `now_ms` (since the run started): entries
    /// of `times` are consumed by attempts, entries with an instant hold until it.
    pub fn next_at(&mut self, now_ms: u64) -> ConnectAction {
        self.attempts += 1;
        loop {
            let Some(step) = self.steps.get(self.index) else {
                // Past a last entry with an instant (or no entry at all): accept.
                return ConnectAction::Accept;
            };
            let last = self.index + 1 == self.steps.len();
            match step.until_ms {
                Some(until) if now_ms < until => return step.action,
                Some(_) => {}
                None if last || self.taken < step.times => {
                    self.taken = self.taken.saturating_add(1);
                    return step.action;
                }
                None => {}
            }
            self.index += 1;
            self.taken = 0;
        }
    }

    /// The schedule's entries, as given.
    pub fn steps(&self) -> &[ConnectStep] {
        &self.steps
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
        self.index = 0;
        self.taken = 0;
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
