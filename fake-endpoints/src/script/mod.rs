//! Scripts: what a route does for each request, and which step answers it.
//!
//! A route (`route`) matches requests and holds its steps (`step`), answered in order by a
//! script (this file: which step answers the n-th request of a scope) or by the instant a
//! request arrives (`timeline`). A random step takes a branch (`choice`) by the route's draws
//! (`draw`), a latency can be drawn too (`latency`), and a body can be spread over time
//! (`trickle`). Beside the routes: the connect
//! schedule (`connect`), the gate in front of the scripts (`gate`), and what a crash does to
//! the scripts (`crash`).

pub(crate) mod choice;
pub(crate) mod connect;
pub(crate) mod crash;
pub(crate) mod draw;
pub(crate) mod gate;
pub(crate) mod h2;
pub(crate) mod latency;
pub(crate) mod route;
pub(crate) mod step;
pub(crate) mod timeline;
pub(crate) mod trickle;

use std::collections::BTreeMap;
use std::sync::Arc;

use http::HeaderValue;

use step::Step;

/// The counter a request consumes, derived from the route's [`Scope`](crate::Scope).
/// A request missing the client or key header counts under `None`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScopeKey {
    /// The route's single counter.
    Endpoint,
    /// A connection's counter.
    Connection(u64),
    /// A client's counter (value of `x-retrylab-client`).
    Client(Option<HeaderValue>),
    /// An idempotency key's counter.
    Key(Option<HeaderValue>),
}

/// A route's steps and one counter per scope key. Step `i` answers `times` consecutive
/// requests; the last step answers every request after that.
///
/// ```
/// use retrylab_endpoints::{Script, ScopeKey, Step};
///
/// let mut script = Script::new([Step::status(503).times(2), Step::status(200)]);
/// let statuses: Vec<u16> = (0..4)
///     .map(|_| script.next(&ScopeKey::Endpoint).1.respond.status.as_u16())
///     .collect();
/// assert_eq!(statuses, [503, 503, 200, 200]);
/// // Another scope starts from the first step.
/// assert_eq!(script.next(&ScopeKey::Connection(7)).0, 0);
/// ```
#[derive(Clone, Debug)]
pub struct Script {
    steps: Vec<Arc<Step>>,
    counters: BTreeMap<ScopeKey, u64>,
}

impl Script {
    /// A script from its steps. An empty script answers every request with a bare 200, so that
    /// consumption never fails (the scenario layer warns about empty scripts).
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        let mut steps: Vec<Arc<Step>> = steps.into_iter().map(Arc::new).collect();
        if steps.is_empty() {
            steps.push(Arc::new(Step::status(200)));
        }
        Self {
            steps,
            counters: BTreeMap::new(),
        }
    }

    /// The steps.
    pub fn steps(&self) -> &[Arc<Step>] {
        &self.steps
    }

    /// The index of the step answering the `n`-th (0-based) request of a scope.
    pub fn step_index(&self, n: u64) -> usize {
        schedule_index(self.steps.iter().map(|s| s.times), n)
    }

    /// Consume one request of scope `key`: the index and the step that answers it.
    #[allow(clippy::should_implement_trait)] // not an iterator: takes a key, never ends
    pub fn next(&mut self, key: &ScopeKey) -> (usize, &Step) {
        let index = self.consume(key);
        (index, &self.steps[index])
    }

    /// As [`Script::next`], sharing the step so it can outlive the borrow of the script.
    pub(crate) fn next_shared(&mut self, key: &ScopeKey) -> (usize, Arc<Step>) {
        let index = self.consume(key);
        (index, Arc::clone(&self.steps[index]))
    }

    /// How many requests of scope `key` have been consumed.
    pub fn consumed(&self, key: &ScopeKey) -> u64 {
        self.counters.get(key).copied().unwrap_or(0)
    }

    /// Starts over: every scope's next request takes the first step again (an endpoint
    /// restarted with its scripts reset).
    ///
    /// ```
    /// use retrylab_endpoints::{ScopeKey, Script, Step};
    ///
    /// let mut script = Script::new([Step::status(503), Step::status(200)]);
    /// assert_eq!(script.next(&ScopeKey::Endpoint).0, 0);
    /// assert_eq!(script.next(&ScopeKey::Endpoint).0, 1);
    /// script.restart();
    /// assert_eq!(script.next(&ScopeKey::Endpoint).0, 0);
    /// ```
    pub fn restart(&mut self) {
        self.counters.clear();
    }

    fn consume(&mut self, key: &ScopeKey) -> usize {
        // Look up before inserting so the common case (a known key) does not clone it.
        let n = match self.counters.get_mut(key) {
            Some(count) => {
                let n = *count;
                *count += 1;
                n
            }
            None => {
                self.counters.insert(key.clone(), 1);
                0
            }
        };
        self.step_index(n)
    }
}

/// The index of the entry answering the `n`-th (0-based) use of a schedule whose entries last
/// `times` uses each; past the end, the last entry. `0` for an empty schedule.
pub(crate) fn schedule_index(times: impl Iterator<Item = u32>, n: u64) -> usize {
    let mut remaining = n;
    let mut last = 0;
    for (index, times) in times.enumerate() {
        let times = u64::from(times);
        if remaining < times {
            return index;
        }
        remaining -= times;
        last = index;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses(script: &mut Script, key: &ScopeKey, n: usize) -> Vec<u16> {
        (0..n)
            .map(|_| script.next(key).1.respond.status.as_u16())
            .collect()
    }

    #[test]
    fn times_then_last_repeats() {
        let mut script = Script::new([
            Step::status(429),
            Step::status(503).times(2),
            Step::status(200),
        ]);
        assert_eq!(
            statuses(&mut script, &ScopeKey::Endpoint, 6),
            [429, 503, 503, 200, 200, 200]
        );
        assert_eq!(script.consumed(&ScopeKey::Endpoint), 6);
    }

    #[test]
    fn times_on_last_step_is_ignored_and_zero_skips() {
        let mut script = Script::new([Step::status(500).times(0), Step::status(200).times(1)]);
        assert_eq!(
            statuses(&mut script, &ScopeKey::Endpoint, 3),
            [200, 200, 200]
        );
        let mut only_zero = Script::new([Step::status(204).times(0)]);
        assert_eq!(statuses(&mut only_zero, &ScopeKey::Endpoint, 2), [204, 204]);
    }

    #[test]
    fn each_scope_key_has_its_own_counter() {
        let mut script = Script::new([Step::status(503), Step::status(200)]);
        let a = ScopeKey::Client(Some(HeaderValue::from_static("a")));
        let b = ScopeKey::Client(Some(HeaderValue::from_static("b")));
        let none = ScopeKey::Client(None);
        assert_eq!(statuses(&mut script, &a, 2), [503, 200]);
        assert_eq!(statuses(&mut script, &b, 1), [503]);
        assert_eq!(statuses(&mut script, &none, 2), [503, 200]);
        assert_eq!(statuses(&mut script, &ScopeKey::Connection(1), 1), [503]);
        assert_eq!(statuses(&mut script, &ScopeKey::Connection(2), 1), [503]);
        let key = ScopeKey::Key(Some(HeaderValue::from_static("k1")));
        assert_eq!(statuses(&mut script, &key, 3), [503, 200, 200]);
        assert_eq!(statuses(&mut script, &b, 1), [200]);
    }

    #[test]
    fn empty_script_answers_200() {
        let mut script = Script::new([]);
        assert_eq!(statuses(&mut script, &ScopeKey::Endpoint, 2), [200, 200]);
    }

    #[test]
    fn schedule_index_of_empty_is_zero() {
        assert_eq!(schedule_index(std::iter::empty(), 5), 0);
        assert_eq!(schedule_index([2, 3].into_iter(), 4), 1);
        assert_eq!(schedule_index([2, 3].into_iter(), 5), 1);
    }
}
