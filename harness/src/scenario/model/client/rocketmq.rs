//! `rocketmq_producer`: a `RocketMQ` producer's send retries.

use serde::{Deserialize, Serialize};

use super::defaults::*;
use super::generic::DEFAULT_MAX_ATTEMPTS;
use crate::policy::rocketmq::RocketmqConfig;
use crate::scenario::model::duration::Millis;

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

impl RocketmqParams {
    /// The `RocketMQ` producer policy of these parameters (`max_attempts` 3 when left out).
    ///
    /// ```
    /// use retrylab::scenario::RocketmqParams;
    /// use std::time::Duration;
    ///
    /// let config = RocketmqParams::default().config();
    /// assert_eq!((config.max_attempts, config.throttle_backoff(1)), (3, Duration::from_millis(20)));
    /// ```
    pub fn config(&self) -> RocketmqConfig {
        RocketmqConfig {
            initial_backoff: self.initial_backoff.as_duration(),
            multiplier: self.multiplier,
            max_backoff: self.max_backoff.as_duration(),
            throttle_codes: self.throttle_codes.clone(),
            max_attempts: self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
        }
    }

    /// The worst-case blocking time of one send, `max_attempts × attempt_timeout` plus the
    /// backoffs of a send throttled on every attempt; `None` without an `attempt_timeout`
    /// (a send may then block for ever). A scenario states it as
    /// `total_time: { at_most: ... }`.
    ///
    /// ```
    /// use retrylab::scenario::{Millis, RocketmqParams};
    ///
    /// let mut params = RocketmqParams::default();
    /// assert_eq!(params.worst_case_blocking_time(), None);
    /// params.attempt_timeout = Some(Millis::from_secs(2));
    /// assert_eq!(params.worst_case_blocking_time(), Some(Millis::from_ms(6060)));
    /// ```
    pub fn worst_case_blocking_time(&self) -> Option<Millis> {
        let timeout = self.attempt_timeout?.as_duration();
        let worst = self.config().worst_case_blocking_time(timeout);
        Some(Millis::from_ms(
            u64::try_from(worst.as_millis()).unwrap_or(u64::MAX),
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::BoundSpec;
    use crate::scenario::ClientSpec;
    use crate::scenario::Millis;
    use crate::scenario::Scenario;

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
