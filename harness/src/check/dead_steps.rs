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
//! A run that did not complete (a limit stopped it, the client panicked) says nothing about
//! what its script was for, so nothing is reported then.

use retrylab_endpoints::LedgerSnapshot;

use crate::report::RunEnd;
use crate::scenario::{EndpointKind, Scenario, StepSpec};

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
        // A dead-letter store has no script of the scenario's; the planned kinds do not run.
        if endpoint.kind != EndpointKind::Http {
            continue;
        }
        // The plan builds a bare `script:` as route 0, and `routes:` in order.
        let scripts: Vec<RouteScript<'_>> = match &endpoint.script {
            Some(steps) => vec![RouteScript {
                route: 0,
                path: format!("endpoints.{name}.script"),
                at: format!("endpoint `{name}`"),
                steps,
            }],
            None => endpoint
                .routes
                .iter()
                .enumerate()
                .filter_map(|(route, spec)| {
                    Some(RouteScript {
                        route,
                        path: format!("endpoints.{name}.routes[{route}].script"),
                        at: format!("endpoint `{name}`, route {}", route + 1),
                        steps: spec.script.as_deref()?,
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

/// One route's script, and how warnings name it.
struct RouteScript<'a> {
    /// The route's index in the endpoint's ledger.
    route: usize,
    /// The script's field path, such as `endpoints.api.routes[1].script`.
    path: String,
    /// How warnings name the script: endpoint `api`, or endpoint `api`, route 2.
    at: String,
    steps: &'a [StepSpec],
}

impl RouteScript<'_> {
    fn dead_steps(&self, scenario: &Scenario, ledger: &LedgerSnapshot) -> Vec<String> {
        let n = self.steps.len();
        let mut consumed = vec![false; n];
        for request in &ledger.requests {
            if let (Some(route), Some(step)) = (request.route, request.step) {
                // The plan gives the endpoint exactly these steps (validation rejects an empty
                // script), so an index past them cannot come; it is skipped, never indexed.
                if route == self.route && step < n {
                    consumed[step] = true;
                }
            }
        }
        let at = &self.at;
        if n > 1 && consumed.iter().all(|c| !c) {
            let message = format!("no request consumed any of the {n} steps of this script ({at})");
            return vec![scenario.error_at(&self.path, message).to_string()];
        }
        consumed
            .iter()
            .enumerate()
            .filter(|(_, c)| !**c)
            .map(|(i, _)| {
                let message = format!(
                    "no request consumed this step ({at}, step {} of {n})",
                    i + 1
                );
                scenario
                    .error_at(&format!("{}[{i}]", self.path), message)
                    .to_string()
            })
            .collect()
    }
}
