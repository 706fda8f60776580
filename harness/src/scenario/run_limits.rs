//! The limits a run of a scenario has: what `limits:` sets, and for the rest defaults drawn
//! from the worst case of the scenario's policy (docs/scenario-format.md#limits). Above the
//! policies, since the worst case is walked on the policy itself.

use super::model::bounds::{MAX_ATTEMPTS, MAX_DURATION, MAX_WALL};
use super::model::client::ClientSpec;
use super::model::duration::Millis;
use super::model::latency::LatencySpec;
use super::model::limits::RunLimits;
use super::model::scenario::Scenario;
use super::model::turmoil::BackendKind;

/// `limits.max_client_attempts` when the scenario sets none and the client's attempts per
/// call are unknown (a `custom:` client): this many, or [`ATTEMPTS_PER_UNKNOWN_CALL`] per
/// call when that is more.
const DEFAULT_ATTEMPTS: u64 = 10_000;

/// The attempts per call that the default `limits.max_client_attempts` allows a client
/// whose attempts per call are unknown.
const ATTEMPTS_PER_UNKNOWN_CALL: u64 = 10;

/// `limits.max_virtual_time` when the scenario sets none and the client's worst case is
/// unknown or unbounded.
const DEFAULT_MAX_VIRTUAL_TIME: Millis = Millis::from_ms(24 * 3_600_000);

/// The most `limits.max_virtual_time` defaults to on `backend: turmoil`.
const TURMOIL_MAX_VIRTUAL_TIME: Millis = Millis::from_ms(10 * 60_000);

/// `limits.wall` when the scenario sets none, for a run of up to 12,000 calls.
const DEFAULT_WALL: Millis = Millis::from_ms(60_000);

/// Real time the default `limits.wall` allows each call of a larger run (all its clients'):
/// a fleet of 20,000 clients at one instant takes some 5 s of CPU in a debug build, and on
/// a loaded two-core machine a run gets a fraction of a core, so 60 s stopped healthy fleets
/// as if they hung.
const DEFAULT_WALL_PER_CALL_MS: u64 = 5;

impl Scenario {
    /// The limits a run of this scenario has: each one `limits:` sets, and for the others
    /// their defaults (docs/scenario-format.md#limits). The worst case of one call of the
    /// policy is the longest delays it allows plus `max_attempts` x `attempt_timeout`, and
    /// its attempt count. When it is known, the run has twice that time and twice those
    /// attempts, times `operation.calls`. Otherwise (no `attempt_timeout`, a custom client)
    /// it has 1 day (at most 10 minutes on `backend: turmoil`), and 10,000 attempts or 10 per
    /// call, whichever is more (and at least twice the policy's count per call, times the
    /// calls, when that count is known). A fleet's time starts after the latest instant
    /// `operation.start` can draw, whatever the client.
    /// Defaults never pass the format's limits: 1,000,000 attempts and 3650 days.
    pub fn run_limits(&self) -> RunLimits {
        let calls = self.calls_per_client();
        let limits = &self.limits;
        let max_virtual_time = limits.max_virtual_time.unwrap_or_else(|| {
            // A fleet's clients run side by side: the last one starts at most at the
            // largest start `operation.start` draws, and then makes its calls.
            // The room for the calls themselves comes after that, whatever the client.
            let last_start = self.operation.start.as_ref().map_or(0, latest_start_ms);
            let calls_ms = worst_call_ms(&self.client).map_or(DEFAULT_MAX_VIRTUAL_TIME, |ms| {
                Millis::from_ms(ms.saturating_mul(2).saturating_mul(calls))
            });
            // turmoil steps every host each millisecond, idle or not: a virtual hour costs
            // seconds of wall time there, so its default stops sooner.
            let calls_ms = if self.backend == BackendKind::Turmoil {
                calls_ms.min(TURMOIL_MAX_VIRTUAL_TIME)
            } else {
                calls_ms
            };
            Millis::from_ms(
                calls_ms
                    .as_ms()
                    .saturating_add(last_start)
                    .min(MAX_DURATION.as_ms()),
            )
        });
        RunLimits {
            max_virtual_time,
            max_client_attempts: limits
                .max_client_attempts
                .unwrap_or_else(|| self.default_max_client_attempts()),
            wall: limits.wall.unwrap_or_else(|| {
                let calls = calls.saturating_mul(u64::from(self.operation.clients.max(1)));
                Millis::from_ms(
                    calls
                        .saturating_mul(DEFAULT_WALL_PER_CALL_MS)
                        .clamp(DEFAULT_WALL.as_ms(), MAX_WALL.as_ms()),
                )
            }),
        }
    }

    /// `limits.max_client_attempts` when the scenario sets none.
    pub(crate) fn default_max_client_attempts(&self) -> u64 {
        // Attempts are counted over the whole fleet.
        let calls = self
            .calls_per_client()
            .saturating_mul(u64::from(self.operation.clients.max(1)));
        let per_call = attempts_per_call(&self.client);
        let twice_the_policy = per_call.map(|m| m.saturating_mul(2).saturating_mul(calls));
        let attempts = match twice_the_policy {
            // The policy's worst case is known, time included (its count, and a timeout
            // for each attempt, as `worst_call_ms` needs): the run is the built-in client's,
            // or one held to its envelope.
            Some(attempts) if self.client.attempt_timeout().is_some() => attempts,
            // Otherwise the client may be a Rust one (the default `no_retry` is also what a
            // scenario meant for one gets): room for 10 attempts per call, and never less
            // than the named policy needs.
            _ => DEFAULT_ATTEMPTS
                .max(ATTEMPTS_PER_UNKNOWN_CALL.saturating_mul(calls))
                .max(twice_the_policy.unwrap_or(0)),
        };
        attempts.min(MAX_ATTEMPTS)
    }

    /// The calls each client makes (`operation.calls`, at least one).
    fn calls_per_client(&self) -> u64 {
        u64::from(self.operation.calls.max(1))
    }
}

/// The latest instant (ms) a client of a fleet starts at under `start`: its fixed value, the
/// upper bound of a uniform one, or the `max` of another (0 when it has none: then the run
/// gets no room for it, and its limit says so when it is reached).
fn latest_start_ms(start: &LatencySpec) -> u64 {
    match start {
        LatencySpec::Fixed(d) => d.as_ms(),
        LatencySpec::Uniform(r) => r.max.as_ms(),
        LatencySpec::Lognormal(l) => l.max.map_or(0, |m| m.as_ms()),
        LatencySpec::Exponential(e) => e.max.map_or(0, |m| m.as_ms()),
    }
}

/// The most attempts one call of the built-in client makes (one for `no_retry`), or `None`
/// for a client whose count is unknown (a custom client, a policy not built yet).
pub(crate) fn attempts_per_call(client: &ClientSpec) -> Option<u64> {
    let policy = client.policy().ok()?;
    policy.max_attempts().map(u64::from)
}

/// The longest one call of the built-in client can take, in ms: the sum of the longest delays
/// its policy allows plus `max_attempts` x `attempt_timeout`; or `None` when unknown or
/// unbounded (a custom client, no attempt timeout, no attempt count).
///
/// It walks the attempts one by one, since a policy's longest delay may depend on the
/// attempts before; the walk stops at [`MAX_ATTEMPTS`] attempts and once the worst case
/// passes [`MAX_DURATION`], which no default exceeds, so an attempt count that validation
/// refuses costs no more than one it accepts.
pub(crate) fn worst_call_ms(client: &ClientSpec) -> Option<u64> {
    use crate::policy::{AttemptView, CallHistory, ClientHistory, Envelope, Observed};
    // Its every delay is the server's to set: no bound follows from the client alone.
    if matches!(client, ClientSpec::ServicenowHeader(_)) {
        return None;
    }
    // The statuses a policy may back off after: the usual throttles, and the codes a
    // `ServiceNow` client is told to retry.
    let mut statuses = vec![429, 503];
    if let ClientSpec::ServicenowExponential(p) = client {
        statuses.extend(p.response_codes.iter().copied());
    }
    let timeout = client.attempt_timeout()?.as_ms();
    let policy = client.policy().ok()?;
    let attempts = u64::from(policy.max_attempts()?).min(MAX_ATTEMPTS);
    let client_history = ClientHistory::default();
    let mut previous: Vec<AttemptView> = Vec::new();
    let mut at = 0u64;
    let mut total = attempts.saturating_mul(timeout);
    for n in 1..attempts {
        if total >= MAX_DURATION.as_ms() {
            break;
        }
        // Every attempt takes the longest it can, its timeout, and ends in whichever failure
        // the policy waits longest after: a timeout, or a status arriving as the timeout
        // runs out (`ServiceNow` retries only its response codes; a `RocketMQ` producer
        // backs off only after a throttle). `n` is below `MAX_ATTEMPTS`, so it fits an
        // attempt number.
        at = at.saturating_add(timeout);
        let number = u32::try_from(n).unwrap_or(u32::MAX);
        let start = at.saturating_sub(timeout);
        let longest = std::iter::once(Observed::Timeout)
            .chain(statuses.iter().map(|&s| Observed::Status(s)))
            .filter_map(|outcome| {
                let head = matches!(outcome, Observed::Status(_)).then_some(at);
                let view = AttemptView::new(number, outcome, start, head, at);
                let history = CallHistory::new(&previous, &client_history);
                match policy.envelope(&view, &history) {
                    Envelope::Retry { max_ms, .. } => Some((max_ms, view)),
                    Envelope::MustStop(_) => None,
                }
            })
            .max_by_key(|(max_ms, _)| *max_ms);
        let Some((max_ms, view)) = longest else {
            break;
        };
        total = total.saturating_add(max_ms);
        at = at.saturating_add(max_ms);
        previous.push(view);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(operation: &str, client: &str) -> Scenario {
        let src = format!(
            "version: 1\nname: t\nendpoints: {{ api: {{}} }}\noperation: {{ endpoint: api{operation} }}\n{client}"
        );
        Scenario::from_yaml_str(&src, "t.yaml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn client(yaml: &str) -> ClientSpec {
        scenario("", &format!("client: {yaml}\n")).client
    }

    #[test]
    fn worst_case_of_an_exponential_client() {
        // 4 attempts of at most 2s, and at most 100 + 200 + 400 ms between them.
        let spec = client(
            "{ exponential: { initial: 100ms, max_delay: 20s, jitter: full, max_attempts: 4, attempt_timeout: 2s } }",
        );
        assert_eq!(worst_call_ms(&spec), Some(8_700));
        assert_eq!(attempts_per_call(&spec), Some(4));
    }

    #[test]
    fn worst_case_of_policies_that_wait_only_after_some_statuses() {
        // ServiceNow retries its response codes only, not timeouts: 4 attempts of at most
        // 1s, and at most 1 + 3 + 7 s between them.
        let spec = client("{ servicenow_exponential: { attempt_timeout: 1s } }");
        assert_eq!(worst_call_ms(&spec), Some(15_000));
        // A RocketMQ producer backs off after throttles only: 3 x 1s + 20ms + 40ms.
        let spec = client("{ rocketmq_producer: { attempt_timeout: 1s } }");
        assert_eq!(worst_call_ms(&spec), Some(3_060));
        // Retrying a 500 only: 4 attempts of 1s, and 2 + 6 + 14 s between them.
        let spec = client(
            "{ servicenow_exponential: { attempt_timeout: 1s, base_delay: 2s, response_codes: [500] } }",
        );
        assert_eq!(worst_call_ms(&spec), Some(26_000));
        // The header sets every delay: nothing bounds a call from the client alone.
        let spec = client("{ servicenow_header: { attempt_timeout: 1s } }");
        assert_eq!(worst_call_ms(&spec), None);
    }

    #[test]
    fn no_attempt_timeout_is_unbounded() {
        let spec = client("{ exponential: { initial: 100ms, max_attempts: 4 } }");
        assert_eq!(worst_call_ms(&spec), None);
        assert_eq!(worst_call_ms(&ClientSpec::Custom("mine".into())), None);
        assert_eq!(attempts_per_call(&ClientSpec::Custom("mine".into())), None);
    }

    /// Once the worst case passes what any default may be, the walk stops: a client of the
    /// most attempts a run may make, each of the longest timeout, costs a few steps.
    #[test]
    fn the_worst_case_walk_stops_at_the_longest_default() {
        let spec = client(&format!(
            "{{ fixed: {{ delay: 3650d, max_attempts: {MAX_ATTEMPTS}, attempt_timeout: 3650d }} }}"
        ));
        let worst = worst_call_ms(&spec).unwrap_or_default();
        assert!(worst >= MAX_DURATION.as_ms(), "{worst}");
    }

    /// A count that validation refuses, on a policy built in code: the walk stops at the
    /// most attempts a run may make (it grew memory by gigabytes, attempt by attempt, for
    /// `u32::MAX` of them).
    #[test]
    fn the_worst_case_walk_stops_at_the_most_attempts_a_run_makes() {
        let spec = ClientSpec::Fixed(
            crate::scenario::FixedParams::default()
                .max_attempts(u32::MAX)
                .attempt_timeout(Millis::from_ms(1)),
        );
        // 1,000,000 timeouts of 1 ms and 999,999 delays of 1 s.
        assert_eq!(worst_call_ms(&spec), Some(1_000_000 + 999_999 * 1000));
    }

    #[test]
    fn default_attempts_scale_with_the_calls() {
        // 20,000 calls without `client:` (a Rust client, or `no_retry`) got 10,000 attempts:
        // now 10 per call.
        let s = scenario(", calls: 20000", "");
        assert_eq!(s.run_limits().max_client_attempts, 200_000);
        // A known worst case: twice the policy's attempts per call.
        let known = "client: { fixed: { max_attempts: 5, attempt_timeout: 1s } }\n";
        let s = scenario(", calls: 3", known);
        assert_eq!(s.run_limits().max_client_attempts, 30);
        // A known count but no timeout: 10,000, or more when the policy needs it.
        let s = scenario(", calls: 3", "client: { fixed: { max_attempts: 5 } }\n");
        assert_eq!(s.run_limits().max_client_attempts, 10_000);
        let s = scenario(", calls: 100", "client: { fixed: { max_attempts: 100 } }\n");
        assert_eq!(s.run_limits().max_client_attempts, 20_000);
        // A custom client: 10,000, or 10 per call when that is more.
        let s = scenario(", calls: 3", "client: { custom: mine }\n");
        assert_eq!(s.run_limits().max_client_attempts, 10_000);
        let s = scenario(", calls: 5000", "client: { custom: mine }\n");
        assert_eq!(s.run_limits().max_client_attempts, 50_000);
        // Never past the format's limit.
        let s = scenario(", calls: 100000", "client: { custom: mine }\n");
        assert_eq!(s.run_limits().max_client_attempts, MAX_ATTEMPTS);
        let s = scenario(
            ", calls: 100000",
            "client: { fixed: { max_attempts: 6, attempt_timeout: 1s } }\n",
        );
        assert_eq!(s.run_limits().max_client_attempts, MAX_ATTEMPTS);
    }

    #[test]
    fn the_default_virtual_time_never_passes_the_longest_duration() {
        let s = scenario(
            ", calls: 1000",
            "client: { fixed: { delay: 3650d, max_attempts: 3, attempt_timeout: 3650d } }\n",
        );
        assert_eq!(s.run_limits().max_virtual_time, MAX_DURATION);
        let s = scenario("", "");
        assert_eq!(s.run_limits().max_virtual_time, DEFAULT_MAX_VIRTUAL_TIME);
        assert_eq!(s.run_limits().wall, DEFAULT_WALL);
    }
}
