//! Scenarios of the library run as several calls that each meet the endpoints' scripts from
//! the start, so that their delays can be compared across calls (`expect.jitter`).

use retrylab::Scenario;
use retrylab::scenario::ScriptScope;

/// `scenario` with `calls` calls, each meeting every script from its first step: a fresh
/// idempotency key per call (`Idempotency-Key`, unless the scenario names its own) and
/// `scope: key` on every script.
///
/// ```
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("503 twice, then 200")
///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
///     .operation(get("api", "/"))
///     .client(fixed(ms(10)).max_attempts(3))
///     .build()
///     .unwrap();
/// let report = retrylab_tests::repeat::from_the_start(scenario, 2).run_builtin();
/// assert_eq!(report.trace().attempts.len(), 6);
/// ```
pub fn from_the_start(mut scenario: Scenario, calls: u32) -> Scenario {
    if scenario.operation.idempotency_key.is_none() {
        scenario.operation = scenario.operation.idempotency_key("Idempotency-Key");
    }
    scenario.operation.calls = calls;
    for endpoint in scenario.endpoints.values_mut() {
        endpoint.scope = ScriptScope::Key;
        for route in &mut endpoint.routes {
            route.scope = ScriptScope::Key;
        }
    }
    scenario
}
