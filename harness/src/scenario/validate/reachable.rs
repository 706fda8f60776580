//! Whether the operation's requests can ever succeed: the route they reach, and whether any
//! step it answers with may give a success, read from the scenario alone.

use retrylab_endpoints::{ConnectAction, Script, Step};

use crate::scenario::model::dedupe::DedupeAnswerSpec;
use crate::scenario::model::endpoint::{EndpointKind, EndpointSpec, RouteSpec};
use crate::scenario::model::latency::LatencySpec;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::step::{FailSpec, StepSpec};
use crate::scenario::yaml::locations::{index, join};

/// Why the built-in client can get no 2xx from the operation's endpoint within the first
/// `requests` requests of a script scope (any request, when `None`), or `None` when it
/// may get one or that cannot be told.
pub(super) fn never_succeeds(s: &Scenario, requests: Option<u32>) -> Option<String> {
    let name = &s.operation.endpoint;
    let endpoint = s.operation_endpoint()?;
    if endpoint.kind != EndpointKind::Http || endpoint.timeline.is_some() {
        return None;
    }
    if let Some(dedupe) = &endpoint.dedupe {
        // Its own answers could be the 2xx (replays repeat answers of steps).
        let refuses = |answer: &DedupeAnswerSpec| {
            answer
                .status()
                .is_some_and(|status| (300..=599).contains(&status))
        };
        if !refuses(&dedupe.in_flight) || !refuses(&dedupe.mismatch) {
            return None;
        }
    }
    if !endpoint.connect.is_empty()
        && endpoint
            .connect
            .iter()
            .all(|c| c.action != ConnectAction::Accept)
    {
        return Some(format!(
            "endpoint `{name}` never accepts a connection (its `connect:` schedule only \
             refuses or black-holes)"
        ));
    }
    let (path, steps) = match operation_route(s, endpoint)? {
        Route::Script(path, steps) => (path, steps),
        Route::NotFound(why) => return Some(why),
    };
    let reachable = match requests {
        // The step the last of the first `n` requests of a scope gets; all before it are
        // reachable too. The endpoint's own consumption rules say which one it is.
        Some(n) if n > 0 => {
            let times = steps.iter().map(|step| step.times.unwrap_or(1));
            let script = Script::new(times.map(|t| Step::status(200).times(t)));
            script.step_index(u64::from(n) - 1) + 1
        }
        _ => steps.len(),
    };
    // A replay answers at once with the response of the step that committed, however
    // long that step took: when the requests carry the dedupe key, a 2xx that came after
    // an attempt timeout still reaches a retry.
    let keyed = endpoint.dedupe.as_ref().is_some_and(|d| {
        let op = &s.operation;
        op.idempotency_key
            .as_ref()
            .is_some_and(|k| k.header.eq_ignore_ascii_case(&d.header))
            || op
                .headers
                .iter()
                .flat_map(|h| h.entries())
                .any(|(name, _)| name.eq_ignore_ascii_case(&d.header))
    });
    let timeout = s
        .client
        .attempt_timeout()
        .map(|t| t.as_ms())
        .filter(|_| !keyed);
    if steps[..reachable]
        .iter()
        .any(|step| may_succeed(step, timeout))
    {
        return None;
    }
    let answer = "answers with a 2xx before the client's attempt timeout";
    Some(match requests {
        Some(n) if reachable < steps.len() => format!(
            "the built-in client makes at most {n} attempts per call, so the first call's \
             requests reach only steps 1 to {reachable} of `{path}`, and none of them \
             {answer}"
        ),
        _ => format!("no step of `{path}` {answer}"),
    })
}

/// The script the operation's requests get, if that can be told for certain.
fn operation_route<'e>(s: &Scenario, endpoint: &'e EndpointSpec) -> Option<Route<'e>> {
    let name = &s.operation.endpoint;
    let base = join("endpoints", name);
    if let Some(steps) = &endpoint.script {
        return Some(Route::Script(join(&base, "script"), steps));
    }
    if endpoint.routes.is_empty() {
        // No script and no routes: every request gets 200, which contradicts no success.
        return None;
    }
    let op = &s.operation;
    // Routes match the path without its query.
    let path = op.path.split('?').next().unwrap_or_default();
    for (i, route) in endpoint.routes.iter().enumerate() {
        if !route_matches(s, route, path)? {
            continue;
        }
        let steps = route.script.as_ref()?;
        let script = join(&index(&join(&base, "routes"), i), "script");
        return Some(Route::Script(script, steps));
    }
    Some(Route::NotFound(format!(
        "no route of endpoint `{name}` matches `{} {path}`, so every request gets 404",
        op.method
    )))
}

/// Whether the operation's requests match `route`; `None` when that cannot be told (a
/// header the operation does not set may still come from the client or the harness).
fn route_matches(s: &Scenario, route: &RouteSpec, path: &str) -> Option<bool> {
    let op = &s.operation;
    let m = &route.r#match;
    if m.method.as_ref().is_some_and(|method| *method != op.method)
        || m.path.as_ref().is_some_and(|p| p != path)
    {
        return Some(false);
    }
    for (name, value) in m.headers.iter().flat_map(|h| h.entries()) {
        let sent = op
            .headers
            .iter()
            .flat_map(|h| h.get_all(name))
            .any(|v| v == value);
        if !sent {
            return None;
        }
    }
    Some(true)
}

/// What the operation's requests get at its endpoint.
enum Route<'e> {
    /// The steps of the script at this path.
    Script(String, &'e [StepSpec]),
    /// No route: 404, for this reason.
    NotFound(String),
}

/// Whether `step` may give the built-in client a 2xx within `timeout` ms: anything but a
/// status of 300 or more, a failed connection (`fail` without `after_bytes`; `hang` never
/// answers), a broker's `error_code` or a fixed latency past the timeout. A random step may.
fn may_succeed(step: &StepSpec, timeout: Option<u64>) -> bool {
    if step.p.is_some() {
        return true;
    }
    // A broker's error code is answered 429 or 500.
    if step.error_code.is_some() {
        return false;
    }
    // A step without `status` answers 200 (a cut response says what it cuts with `status`).
    if step.status.is_some_and(|status| status >= 300) {
        return false;
    }
    match step.fail {
        None
        | Some(FailSpec::Close {
            after_bytes: Some(_),
        })
        | Some(FailSpec::Reset {
            after_bytes: Some(_),
        })
        | Some(FailSpec::GoAway { code: None }) => {}
        Some(_) => return false,
    }
    // The head comes after the step's latency, so a latency past the timeout is a timeout.
    match (&step.latency, timeout) {
        (Some(LatencySpec::Fixed(latency)), Some(timeout)) => latency.as_ms() <= timeout,
        _ => true,
    }
}
