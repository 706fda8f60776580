//! Dead steps: script steps that no request consumed in a run, reported as warnings after
//! it (wiremock's `expect(n)`, turned into a question the scenario's author should answer).
//!
//! Each endpoint's ledger records, for every request, the route that matched and the step
//! it consumed. A step is dead when no request of the run consumed it, in any scope: with a
//! scoped script (`scope: connection | client | key`) every scope starts from the first
//! step, so a step counts as consumed if one scope reached it. A request answered by dedupe
//! (a replay or a rejection) consumes no step.
//!
//! Only never-consumed steps are reported. The last step repeats forever, so it is consumed
//! once it answers one request; a step with `times: 3` that answered once is partly consumed,
//! and that is not reported on its own: in the scope where it answered fewer times than
//! written, the steps after it were never reached either, so whenever such a scope was the
//! only one to reach that far, the next step is reported as dead. A route that no request
//! consumed a step of is reported once, at its script, rather than step by step.
//!
//! A timeline's window is dead the same way, when no request arrived in it. A random step's
//! branch (`then` or `else`) is dead when the step answered requests and none of its draws
//! took that branch: the seed never exercised what the branch was written for (a flaky
//! endpoint whose failures never came), and another seed, or more requests, would.
//!
//! A run that did not complete (a limit stopped it, the client panicked) says nothing about
//! what its script was for, so nothing is reported then.

use retrylab_endpoints::{Branch, LedgerSnapshot};

use crate::report::RunEnd;
use crate::scenario::{EndpointKind, Scenario, StepSpec, TimelineStep};

/// A located warning (`file:line:col path: message`) for every dead step of the run.
pub(crate) fn warnings(
    scenario: &Scenario,
    end: &RunEnd,
    ledgers: &[(String, LedgerSnapshot)],
) -> Vec<String> {
    if *end != RunEnd::Completed {
        return Vec::new();
    }
    let mut out = Vec::new();
    // The endpoints that ran, each with what it recorded.
    for (name, ledger) in ledgers {
        let Some(endpoint) = scenario.endpoints.get(name) else {
            continue;
        };
        // A dead-letter store has no script of the scenario's. A rate limiter's script runs
        // as an `http` endpoint's does, for the requests that got a token, and a broker's for
        // the requests that were sends.
        if !matches!(
            endpoint.kind,
            EndpointKind::Http | EndpointKind::RateLimiter | EndpointKind::Broker
        ) {
            continue;
        }
        // The plan builds a bare `script:` or `timeline:` as route 0, and `routes:` in order.
        let bare = Steps::of(endpoint.script.as_deref(), endpoint.timeline.as_deref());
        let scripts: Vec<RouteScript<'_>> = match bare {
            Some(steps) => vec![RouteScript {
                route: 0,
                path: format!("endpoints.{name}.{}", steps.key()),
                at: format!("endpoint `{name}`"),
                steps,
            }],
            None => endpoint
                .routes
                .iter()
                .enumerate()
                .filter_map(|(route, spec)| {
                    let steps = Steps::of(spec.script.as_deref(), spec.timeline.as_deref())?;
                    Some(RouteScript {
                        route,
                        path: format!("endpoints.{name}.routes[{route}].{}", steps.key()),
                        at: format!("endpoint `{name}`, route {}", route + 1),
                        steps,
                    })
                })
                .collect(),
        };
        for script in scripts {
            out.extend(script.dead_steps(scenario, ledger));
        }
    }
    out
}

/// A route's steps, chosen by count or by time.
#[derive(Clone, Copy)]
enum Steps<'a> {
    Script(&'a [StepSpec]),
    Timeline(&'a [TimelineStep]),
}

impl<'a> Steps<'a> {
    /// The route's steps: its script, else its timeline (validation allows one of them).
    fn of(script: Option<&'a [StepSpec]>, timeline: Option<&'a [TimelineStep]>) -> Option<Self> {
        script
            .map(Steps::Script)
            .or_else(|| timeline.map(Steps::Timeline))
    }

    /// The key the steps are written under.
    fn key(self) -> &'static str {
        match self {
            Steps::Script(_) => "script",
            Steps::Timeline(_) => "timeline",
        }
    }

    fn len(self) -> usize {
        match self {
            Steps::Script(steps) => steps.len(),
            Steps::Timeline(windows) => windows.len(),
        }
    }

    /// Step `i`'s fields, for its random branches.
    fn step(self, i: usize) -> StepSpec {
        match self {
            Steps::Script(steps) => steps[i].clone(),
            Steps::Timeline(windows) => windows[i].as_step(),
        }
    }
}

/// One route's script or timeline, and how warnings name it.
struct RouteScript<'a> {
    /// The route's index in the endpoint's ledger.
    route: usize,
    /// The steps' field path, such as `endpoints.api.routes[1].script`.
    path: String,
    /// How warnings name the route: endpoint `api`, or endpoint `api`, route 2.
    at: String,
    steps: Steps<'a>,
}

impl RouteScript<'_> {
    fn dead_steps(&self, scenario: &Scenario, ledger: &LedgerSnapshot) -> Vec<String> {
        let n = self.steps.len();
        // Per step, the branches each of its requests took (empty for a plain step).
        let mut taken: Vec<Vec<&[Branch]>> = vec![Vec::new(); n];
        for request in &ledger.requests {
            if let (Some(route), Some(step)) = (request.route, request.step) {
                // The plan gives the endpoint exactly these steps (validation rejects an empty
                // script), so an index past them cannot come; it is skipped, never indexed.
                if route == self.route && step < n {
                    taken[step].push(&request.branches);
                }
            }
        }
        let at = &self.at;
        let (unit, verb, units) = match self.steps {
            Steps::Script(_) => ("step", "consumed", "steps of this script"),
            Steps::Timeline(_) => ("window", "arrived in", "windows of this timeline"),
        };
        if n > 1 && taken.iter().all(Vec::is_empty) {
            let message = format!("no request {verb} any of the {n} {units} ({at})");
            return vec![scenario.error_at(&self.path, message).to_string()];
        }
        let mut out = Vec::new();
        for (i, requests) in taken.iter().enumerate() {
            let path = format!("{}[{i}]", self.path);
            if requests.is_empty() {
                let message = format!(
                    "no request {verb} this {unit} ({at}, {unit} {} of {n})",
                    i + 1
                );
                out.push(scenario.error_at(&path, message).to_string());
                continue;
            }
            dead_branches(
                scenario,
                &self.steps.step(i),
                &path,
                &[],
                requests,
                &mut out,
            );
        }
        out
    }
}

/// Warnings for the branches of the random step `step` (at `path`, reached by `prefix`)
/// that none of `requests` took, when some of them reached it; and so on down the branches
/// that were taken.
fn dead_branches(
    scenario: &Scenario,
    step: &StepSpec,
    path: &str,
    prefix: &[Branch],
    requests: &[&[Branch]],
    out: &mut Vec<String>,
) {
    let (Some(p), Some(then), Some(otherwise)) = (step.p, &step.then, &step.r#else) else {
        return;
    };
    let reached = requests
        .iter()
        .filter(|taken| taken.starts_with(prefix))
        .count();
    for (branch, key, next) in [
        (Branch::Then, "then", then),
        (Branch::Else, "else", otherwise),
    ] {
        let mut deeper = prefix.to_vec();
        deeper.push(branch);
        let branch_path = format!("{path}.{key}");
        if requests.iter().any(|taken| taken.starts_with(&deeper)) {
            dead_branches(scenario, next, &branch_path, &deeper, requests, out);
        } else if reached > 0 {
            let message = format!(
                "no draw took this branch (p {}, {reached} draw{}): this seed never exercised it",
                p.value(),
                if reached == 1 { "" } else { "s" }
            );
            out.push(scenario.error_at(&branch_path, message).to_string());
        }
    }
}
