//! `ServiceNow`'s outbound REST retry policies: `servicenow_exponential`, `servicenow_header`.

use serde::{Deserialize, Serialize};

use super::defaults::*;
use crate::policy::servicenow::{DelayUnit, ServicenowExponentialConfig, ServicenowHeaderConfig};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::values::status_code;

/// `servicenow_exponential`.
///
/// ```
/// use retrylab::scenario::{Millis, ServicenowExponentialParams};
/// assert_eq!(ServicenowExponentialParams::default().base_delay, Millis::from_secs(1));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServicenowExponentialParams {
    /// Retries after the first attempt (default 3; at most 1,000,000).
    #[serde(default = "three", skip_serializing_if = "is_three")]
    pub max_retries: u32,
    /// Statuses that are retried (default `[429]`; at most 512).
    #[serde(
        default = "codes_429",
        deserialize_with = "status_code::list",
        skip_serializing_if = "is_codes_429"
    )]
    pub response_codes: Vec<u16>,
    /// Base delay (default 1s).
    #[serde(default = "s_1", skip_serializing_if = "is_s_1")]
    pub base_delay: Millis,
    /// Cap before the additional window (default 60s).
    #[serde(default = "s_60", skip_serializing_if = "is_s_60")]
    pub max_delay: Millis,
    /// Upper bound of the uniform delay added to each (default 0).
    #[serde(default = "ms_0", skip_serializing_if = "is_ms_0")]
    pub additional_delay_window: Millis,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for ServicenowExponentialParams {
    fn default() -> Self {
        ServicenowExponentialParams {
            max_retries: three(),
            response_codes: codes_429(),
            base_delay: s_1(),
            max_delay: s_60(),
            additional_delay_window: ms_0(),
            attempt_timeout: None,
        }
    }
}

/// `servicenow_header`.
///
/// ```
/// use retrylab::scenario::{HeaderUnit, ServicenowHeaderParams};
/// let p = ServicenowHeaderParams::default();
/// assert_eq!((p.header.as_str(), p.unit), ("Retry-After", HeaderUnit::Seconds));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServicenowHeaderParams {
    /// Retries after the first attempt (default 3; at most 1,000,000).
    #[serde(default = "three", skip_serializing_if = "is_three")]
    pub max_retries: u32,
    /// Statuses that are retried (default `[429]`; at most 512).
    #[serde(
        default = "codes_429",
        deserialize_with = "status_code::list",
        skip_serializing_if = "is_codes_429"
    )]
    pub response_codes: Vec<u16>,
    /// The header holding the delay (default `Retry-After`).
    #[serde(
        default = "retry_after_header",
        skip_serializing_if = "is_retry_after_header"
    )]
    pub header: String,
    /// The header's unit (default `seconds`).
    #[serde(default, skip_serializing_if = "HeaderUnit::is_seconds")]
    pub unit: HeaderUnit,
    /// Upper bound of the uniform delay added to each (default 0).
    #[serde(default = "ms_0", skip_serializing_if = "is_ms_0")]
    pub additional_delay_window: Millis,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for ServicenowHeaderParams {
    fn default() -> Self {
        ServicenowHeaderParams {
            max_retries: three(),
            response_codes: codes_429(),
            header: retry_after_header(),
            unit: HeaderUnit::Seconds,
            additional_delay_window: ms_0(),
            attempt_timeout: None,
        }
    }
}

/// The unit of a delay read from a header.
///
/// ```
/// use retrylab::scenario::HeaderUnit;
/// assert_eq!(HeaderUnit::default(), HeaderUnit::Seconds);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HeaderUnit {
    /// Seconds (x1000 ms).
    #[default]
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

impl HeaderUnit {
    fn is_seconds(&self) -> bool {
        *self == HeaderUnit::Seconds
    }
}

impl ServicenowExponentialParams {
    /// The `ServiceNow` exponential policy of these parameters.
    ///
    /// ```
    /// use retrylab::scenario::{Millis, ServicenowExponentialParams};
    /// use std::time::Duration;
    ///
    /// let mut params = ServicenowExponentialParams::default();
    /// params.base_delay = Millis::from_ms(400);
    /// assert_eq!(params.config().backoff_bound(3), Duration::from_millis(2800));
    /// ```
    pub fn config(&self) -> ServicenowExponentialConfig {
        ServicenowExponentialConfig {
            max_retries: self.max_retries,
            response_codes: self.response_codes.clone(),
            base_delay: self.base_delay.as_duration(),
            max_delay: self.max_delay.as_duration(),
            additional_delay_window: self.additional_delay_window.as_duration(),
        }
    }
}

impl ServicenowHeaderParams {
    /// The `ServiceNow` response-header policy of these parameters.
    ///
    /// ```
    /// use retrylab::policy::servicenow::DelayUnit;
    /// use retrylab::scenario::{HeaderUnit, ServicenowHeaderParams};
    ///
    /// let mut params = ServicenowHeaderParams::default();
    /// params.unit = HeaderUnit::Milliseconds;
    /// assert_eq!(params.config().unit, DelayUnit::Milliseconds);
    /// ```
    pub fn config(&self) -> ServicenowHeaderConfig {
        ServicenowHeaderConfig {
            max_retries: self.max_retries,
            response_codes: self.response_codes.clone(),
            header: self.header.clone(),
            unit: match self.unit {
                HeaderUnit::Seconds => DelayUnit::Seconds,
                HeaderUnit::Milliseconds => DelayUnit::Milliseconds,
            },
            additional_delay_window: self.additional_delay_window.as_duration(),
        }
    }
}
