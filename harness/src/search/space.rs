//! The space of a search: what its cases may vary, and within which bounds.

use crate::scenario::{Millis, StepSpec};

/// What the cases of a search vary in the base scenario, and how far.
///
/// A case replaces the script of the operation's endpoint with 1 to `steps` generated steps
/// followed by the final step ([`Space::then`], `status: 200` by default, so that every call
/// can end), and may set the network's latency, schedule faults on that endpoint and pick the
/// run's seed. Each generated step is one of, from the simplest:
///
/// - a burst of a 5xx status ([`Space::statuses`]), `times` from 1 to [`Space::times`];
/// - a burst of 429 with a `Retry-After` of each form: none, seconds, an HTTP-date in each of
///   its three formats, text no client can read ([`Space::retry_after`]);
/// - a cut connection: `reset` or `close`, at once or after some bytes of a 200 response
///   ([`Space::cuts`]);
/// - a hang, which only a client with an attempt timeout survives ([`Space::hangs`], off by
///   default).
///
/// Each may wait a latency first (fixed, or drawn from a uniform, exponential or log-normal
/// distribution, up to [`Space::latency`]) and commit its effect on arrival or before its
/// response ([`Space::commits`]). Shrinking goes towards fewer steps, simpler kinds (in the
/// order above), smaller `times`, no latency, no commit, fewer, earlier and shorter faults,
/// and seed 0.
///
/// ```
/// use retrylab::scenario::Millis;
/// use retrylab::search::Space;
///
/// let space = Space::default().steps(3).times(4).hangs(true).faults(2, Millis::from_secs(5));
/// assert_eq!(space.max_steps(), 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[must_use = "a space does nothing until given to `SearchConfig::space`"]
pub struct Space {
    pub(crate) steps: usize,
    pub(crate) times: u32,
    pub(crate) statuses: Vec<u16>,
    pub(crate) retry_after: Option<u32>,
    pub(crate) cuts: bool,
    pub(crate) hangs: bool,
    pub(crate) latency: Option<Millis>,
    pub(crate) network_latency: Option<Millis>,
    pub(crate) commits: bool,
    pub(crate) faults: usize,
    pub(crate) fault_window: Millis,
    pub(crate) seeds: bool,
    pub(crate) then: StepSpec,
}

impl Default for Space {
    /// Up to 4 steps of bursts of 500, 502, 503 and 504 and of 429 (`Retry-After` up to 5
    /// s), cuts, latencies up to 1 s, commits, `times` up to 5, seeds; no hangs, no faults,
    /// a fixed network.
    fn default() -> Space {
        Space {
            steps: 4,
            times: 5,
            statuses: vec![500, 502, 503, 504],
            retry_after: Some(5),
            cuts: true,
            hangs: false,
            latency: Some(Millis::from_secs(1)),
            network_latency: None,
            commits: true,
            faults: 0,
            fault_window: Millis::from_secs(10),
            seeds: true,
            then: StepSpec::status(200),
        }
    }
}

impl Space {
    /// At most `n` generated steps before the final one; a search refuses 0
    /// ([`SearchError::Config`](super::SearchError::Config)).
    pub fn steps(mut self, n: usize) -> Space {
        self.steps = n;
        self
    }

    /// The most generated steps.
    pub fn max_steps(&self) -> usize {
        self.steps
    }

    /// `times` of a generated step from 1 to `n`; a search refuses 0.
    pub fn times(mut self, n: u32) -> Space {
        self.times = n;
        self
    }

    /// The 5xx statuses of bursts; a search refuses an empty list.
    pub fn statuses(mut self, statuses: impl IntoIterator<Item = u16>) -> Space {
        self.statuses = statuses.into_iter().collect();
        self
    }

    /// Why a search cannot draw from this space, if it cannot: each setting it refuses
    /// rather than reads as something else.
    pub(crate) fn refused(&self) -> Vec<&'static str> {
        let mut why = Vec::new();
        if self.steps == 0 {
            why.push("`Space::steps(0)`: at least one generated step");
        }
        if self.times == 0 {
            why.push("`Space::times(0)`: a step is answered at least once");
        }
        if self.statuses.is_empty() {
            why.push("`Space::statuses([])`: no status to draw bursts from");
        }
        why
    }

    /// 429 steps with `Retry-After` of up to `seconds` (`None`: no 429 steps).
    pub fn retry_after(mut self, seconds: Option<u32>) -> Space {
        self.retry_after = seconds;
        self
    }

    /// Whether steps may reset or close the connection.
    pub fn cuts(mut self, on: bool) -> Space {
        self.cuts = on;
        self
    }

    /// Whether steps may hang (read the request and never answer).
    pub fn hangs(mut self, on: bool) -> Space {
        self.hangs = on;
        self
    }

    /// Step latencies up to `max` (`None`: none).
    pub fn latency(mut self, max: Option<Millis>) -> Space {
        self.latency = max;
        self
    }

    /// The network's one-way latency, fixed or a distribution, up to `max` (`None`: the
    /// base scenario's).
    pub fn network_latency(mut self, max: Option<Millis>) -> Space {
        self.network_latency = max;
        self
    }

    /// Whether steps may commit their effect on arrival or before their response.
    pub fn commits(mut self, on: bool) -> Space {
        self.commits = on;
        self
    }

    /// Up to `n` partitions and crashes (each restarting) of the operation's endpoint, one
    /// after another, each starting at most `window` after the previous one ended and lasting
    /// at most `window`.
    pub fn faults(mut self, n: usize, window: Millis) -> Space {
        self.faults = n;
        self.fault_window = Millis(window.0.max(1));
        self
    }

    /// Whether the run's seed varies (else the base scenario's).
    pub fn seeds(mut self, on: bool) -> Space {
        self.seeds = on;
        self
    }

    /// The step after the generated ones, which the script repeats forever.
    pub fn then(mut self, step: StepSpec) -> Space {
        self.then = step;
        self
    }
}
