//! The AWS SDK retry modes: `aws_standard`, `aws_standard_2_1`, `aws_adaptive`.

use serde::{Deserialize, Serialize};

use super::defaults::*;
use crate::policy::aws::{AwsConfig, AwsMode};
use crate::scenario::model::duration::Millis;

/// `aws_standard`, `aws_standard_2_1`, `aws_adaptive`.
///
/// ```
/// use retrylab::scenario::{AwsJitter, AwsParams, AwsSdk};
///
/// let p = AwsParams::default();
/// assert_eq!((p.initial_tokens, p.jitter, p.sdk), (500, AwsJitter::Random, AwsSdk::Botocore));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AwsParams {
    /// Attempts in all, the first included (default 3; 2.1's `DynamoDB` rule: 4; at most
    /// 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub max_attempts: Option<u32>,
    /// Retry quota bucket size (default 500); 0 is an empty quota that never fills, so no
    /// retry is ever paid for.
    #[serde(default = "tokens_500", skip_serializing_if = "is_tokens_500")]
    pub initial_tokens: u32,
    /// `MAX_BACKOFF` (default 20s).
    #[serde(default = "s_20", skip_serializing_if = "is_s_20")]
    pub max_backoff: Millis,
    /// `random` (default) or `none` (fixes b = 1, as the SDK test suites do).
    #[serde(default, skip_serializing_if = "is_aws_jitter_random")]
    pub jitter: AwsJitter,
    /// The service, for 2.1's per-service rules (`dynamodb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Whether the operation long-polls (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub long_polling: bool,
    /// Which SDK's reading to follow (default `botocore`): `botocore` and `smithy_rs` read
    /// the specification's 2.0 and 2.1; `botocore_1_44` is botocore 1.44.18's default, 2.1
    /// with a bare 429 retried as a throttle, whichever standard mode names it.
    #[serde(default, skip_serializing_if = "is_aws_sdk_botocore")]
    pub sdk: AwsSdk,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout: Option<Millis>,
}

impl Default for AwsParams {
    fn default() -> Self {
        AwsParams {
            max_attempts: None,
            initial_tokens: tokens_500(),
            max_backoff: s_20(),
            jitter: AwsJitter::Random,
            service: None,
            long_polling: false,
            sdk: AwsSdk::Botocore,
            attempt_timeout: None,
        }
    }
}

/// AWS backoff jitter.
///
/// ```
/// use retrylab::scenario::AwsJitter;
/// assert_eq!(AwsJitter::default(), AwsJitter::Random);
/// ```
pub use crate::policy::aws::AwsJitter;

/// Which SDK's reading of the retry behaviour to follow.
///
/// ```
/// use retrylab::scenario::AwsSdk;
/// assert_eq!(AwsSdk::default(), AwsSdk::Botocore);
/// ```
pub use crate::policy::aws::AwsSdk;

fn is_aws_jitter_random(j: &AwsJitter) -> bool {
    *j == AwsJitter::Random
}

fn is_aws_sdk_botocore(s: &AwsSdk) -> bool {
    *s == AwsSdk::Botocore
}

impl AwsParams {
    /// The AWS SDK policy of these parameters in `mode`, not yet validated.
    ///
    /// ```
    /// use retrylab::policy::aws::AwsMode;
    /// use retrylab::scenario::AwsParams;
    ///
    /// let config = AwsParams::default().config(AwsMode::Standard);
    /// // Left out, `max_attempts` is the SDK's own default for the mode.
    /// assert_eq!((config.max_attempts, config.initial_tokens), (None, 500));
    /// ```
    pub fn config(&self, mode: AwsMode) -> AwsConfig {
        AwsConfig {
            mode,
            max_attempts: self.max_attempts,
            initial_tokens: self.initial_tokens,
            max_backoff: self.max_backoff.as_duration(),
            jitter: self.jitter,
            service: self.service.clone(),
            long_polling: self.long_polling,
            sdk: self.sdk,
        }
    }
}
