//! `rocketmq_producer`: a `RocketMQ` producer's send retries.

use serde::{Deserialize, Serialize};

use super::defaults::*;
use crate::scenario::duration::Millis;

/// `rocketmq_producer`.
///
/// ```
/// use retrylab::scenario::RocketmqParams;
/// assert_eq!(RocketmqParams::default().throttle_codes, [530, 42900, 215]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RocketmqParams {
    /// The base of the throttle backoff: retry `n` after a throttle waits
    /// `min(initial_backoff × multiplier^n, max_backoff)` (default 10ms, so 20ms for the
    /// first retry).
    #[serde(default = "ms_10", skip_serializing_if = "is_ms_10")]
    pub initial_backoff: Millis,
    /// Growth per retry, counted by the retry's number (default 2).
    #[serde(default = "two", skip_serializing_if = "is_two")]
    pub multiplier: f64,
    /// Cap (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub max_backoff: Millis,
    /// Error codes that mean "throttled" (default `[530, 42900, 215]`; at most 512).
    #[serde(
        default = "throttle_codes_default",
        skip_serializing_if = "is_throttle_codes_default"
    )]
    pub throttle_codes: Vec<i64>,
    /// Send attempts in all, the first included (default 3; at most 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for RocketmqParams {
    fn default() -> Self {
        RocketmqParams {
            initial_backoff: ms_10(),
            multiplier: two(),
            max_backoff: s_1(),
            throttle_codes: throttle_codes_default(),
            max_attempts: None,
            attempt_timeout: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{BoundSpec, ClientSpec, Millis, Scenario};

    /// The scenario that states the worst-case blocking time states the policy's value.
    #[test]
    fn the_worst_case_scenario_states_the_formula() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/rocketmq/worst-case-blocking-time.yaml"
        );
        let scenario = Scenario::load(std::path::Path::new(path)).unwrap();
        let ClientSpec::RocketmqProducer(params) = &scenario.client else {
            panic!("{:?}", scenario.client)
        };
        assert_eq!(
            params.worst_case_blocking_time(),
            Some(Millis::from_ms(3060))
        );
        assert_eq!(
            scenario.expect.total_time,
            params.worst_case_blocking_time().map(BoundSpec::AtMost)
        );
    }
}
