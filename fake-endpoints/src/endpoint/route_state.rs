//! Each route as the endpoint runs it: its steps (a script's counters or a timeline), what
//! its random steps and sampled latencies draw, and its responses rendered in advance.

use std::sync::Arc;
use std::time::Duration;

use crate::http::response::SentResponse;
use crate::script::choice::{Half, resolve};
use crate::script::draw::Draw;
use crate::script::route::{Matcher, Route, Scope};
use crate::script::step::{Branch, Step};
use crate::script::timeline::Timeline;
use crate::script::{ScopeKey, Script};

/// A route of a running endpoint.
pub(super) struct RouteState {
    pub(super) matcher: Matcher,
    pub(super) scope: Scope,
    pub(super) steps: Steps,
    /// What the route's random steps draw.
    draw: Box<dyn Draw>,
    /// What the route's sampled latencies draw.
    latency_draw: Box<dyn Draw>,
    /// Each step's response rendered once, when it does not depend on the moment it is sent
    /// (no HTTP-date `Retry-After`): step tasks share it instead of rendering it again.
    rendered: Vec<Option<Arc<SentResponse>>>,
}

/// How a route chooses a request's step: by count or by time.
pub(super) enum Steps {
    Script(Script),
    Timeline(Timeline),
}

impl RouteState {
    pub(super) fn new(route: Route) -> Self {
        let steps = if route.timeline.is_empty() {
            Steps::Script(Script::new(route.script))
        } else {
            Steps::Timeline(Timeline::new(route.timeline))
        };
        let rendered = match &steps {
            Steps::Script(script) => script.steps().iter().map(|step| prerender(step)).collect(),
            Steps::Timeline(timeline) => timeline.steps().map(|step| prerender(step)).collect(),
        };
        RouteState {
            matcher: route.matcher,
            scope: route.scope,
            steps,
            draw: route
                .draws
                .map_or_else(|| Box::new(Half) as Box<dyn Draw>, |d| d.make()),
            latency_draw: route
                .latency_draws
                .map_or_else(|| Box::new(Half) as Box<dyn Draw>, |d| d.make()),
            rendered,
        }
    }

    /// The step answering a request of scope `key` arriving at `now`: its index (none for a
    /// timeline's gap), the step, and its response if rendered in advance.
    pub(super) fn choose(&mut self, key: &ScopeKey, now: Duration) -> Planned {
        let (index, step) = match &mut self.steps {
            Steps::Script(script) => {
                let (index, step) = script.next_shared(key);
                (Some(index), step)
            }
            Steps::Timeline(timeline) => {
                let (index, step) = timeline.at(now);
                (index, Arc::clone(step))
            }
        };
        let rendered = index.and_then(|i| self.rendered.get(i).cloned().flatten());
        // A random step's branch is drawn here, in arrival order, so the choices of a run
        // follow its requests; its response is rendered when it is sent.
        let (mut step, branches) = resolve(step, self.draw.as_mut());
        // A sampled latency is drawn here too, once per request in arrival order, after the
        // branch (whose own latency may be the sampled one).
        if let Some(distribution) = &step.latency_distribution {
            let latency = distribution.sample(self.latency_draw.as_mut());
            step = Arc::new(Step {
                latency,
                latency_distribution: None,
                ..Step::clone(&step)
            });
        }
        (index, step, rendered, branches)
    }
}

/// A chosen step: its index (if any), the step, its response if rendered in advance, and
/// the branches a random step took to it.
pub(super) type Planned = (
    Option<usize>,
    Arc<Step>,
    Option<Arc<SentResponse>>,
    Vec<Branch>,
);

/// A step's response rendered in advance, unless it depends on when it is sent (an HTTP-date
/// `Retry-After` is the virtual wall clock at that moment plus an offset).
fn prerender(step: &Step) -> Option<Arc<SentResponse>> {
    if step.chance.is_some() {
        // Which response it sends is drawn per request.
        return None;
    }
    step.respond.prerendered()
}
