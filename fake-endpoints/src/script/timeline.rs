//! Timelines: which step answers a request, chosen by the virtual instant it arrives.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::step::Step;

/// A step and the window of time, from the start of the clock, in which it answers: the
/// half-open `[from, until)`, so a window ending at 30 s and one starting there share no
/// instant.
///
/// ```
/// use retrylab_endpoints::{secs, Step, Window};
///
/// let outage = Window::new(secs(0)..secs(30), Step::status(503));
/// assert!(outage.contains(secs(30) - std::time::Duration::from_millis(1)));
/// assert!(!outage.contains(secs(30)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first instant the step answers.
    pub from: Duration,
    /// The first instant it no longer answers.
    pub until: Duration,
    /// The step.
    pub step: Step,
}

impl Window {
    /// `step` during `during` (`from..until`).
    pub fn new(during: Range<Duration>, step: Step) -> Self {
        Self {
            from: during.start,
            until: during.end,
            step,
        }
    }

    /// Whether the window holds instant `at`: `from <= at < until`.
    pub fn contains(&self, at: Duration) -> bool {
        self.from <= at && at < self.until
    }
}

/// A route's windows, and the step answering instants that no window holds: a bare 200, as
/// an endpoint without a script answers, so an outage is written as the window it lasts.
///
/// ```
/// use retrylab_endpoints::{ms, secs, Step, Timeline, Window};
///
/// let timeline = Timeline::new([
///     Window::new(secs(0)..secs(30), Step::status(503)),
///     Window::new(secs(60)..secs(90), Step::status(429)),
/// ]);
/// let status = |at| timeline.at(at).1.respond.status.as_u16();
/// assert_eq!(status(ms(29_999)), 503);
/// assert_eq!(status(secs(30)), 200); // between windows
/// assert_eq!(status(secs(60)), 429);
/// assert_eq!(status(secs(90)), 200); // after the last one
/// assert_eq!(timeline.at(secs(61)).0, Some(1));
/// assert_eq!(timeline.at(secs(45)).0, None);
/// ```
#[derive(Clone, Debug)]
pub struct Timeline {
    windows: Vec<(Duration, Duration, Arc<Step>)>,
    gap: Arc<Step>,
}

impl Timeline {
    /// A timeline of `windows`; where windows overlap the first one given answers (the
    /// scenario layer refuses overlapping windows).
    pub fn new(windows: impl IntoIterator<Item = Window>) -> Self {
        Self {
            windows: windows
                .into_iter()
                .map(|w| (w.from, w.until, Arc::new(w.step)))
                .collect(),
            gap: Arc::new(Step::status(200)),
        }
    }

    /// The steps of the windows, in the order given.
    pub fn steps(&self) -> impl Iterator<Item = &Arc<Step>> {
        self.windows.iter().map(|(_, _, step)| step)
    }

    /// The step answering a request that arrives at `at`: the index of its window and its
    /// step, or `None` and a bare 200 when no window holds `at`.
    pub fn at(&self, at: Duration) -> (Option<usize>, &Arc<Step>) {
        // A timeline holds at most a few thousand windows; a scan keeps the first-given rule
        // for overlaps without an index.
        match self
            .windows
            .iter()
            .position(|(from, until, _)| *from <= at && at < *until)
        {
            Some(index) => (Some(index), &self.windows[index].2),
            None => (None, &self.gap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ms, secs};

    #[test]
    fn windows_are_half_open_and_gaps_answer_200() {
        let timeline = Timeline::new([
            Window::new(ms(1000)..ms(2000), Step::status(503)),
            Window::new(ms(2000)..ms(3000), Step::status(429)),
        ]);
        let seen: Vec<(Option<usize>, u16)> = [0, 999, 1000, 1999, 2000, 2999, 3000]
            .map(|t| {
                let (index, step) = timeline.at(ms(t));
                (index, step.respond.status.as_u16())
            })
            .into();
        assert_eq!(
            seen,
            [
                (None, 200),
                (None, 200),
                (Some(0), 503),
                (Some(0), 503),
                (Some(1), 429),
                (Some(1), 429),
                (None, 200)
            ]
        );
    }

    #[test]
    fn an_empty_window_holds_nothing_and_the_first_overlap_wins() {
        let timeline = Timeline::new([
            Window::new(secs(5)..secs(5), Step::status(500)),
            Window::new(secs(0)..secs(10), Step::status(503)),
            Window::new(secs(2)..secs(4), Step::status(429)),
        ]);
        assert_eq!(timeline.at(secs(5)).0, Some(1));
        assert_eq!(timeline.at(secs(3)).0, Some(1));
        assert_eq!(timeline.steps().count(), 3);
    }
}
