//! Client policies, under `client:` and wherever a policy is named as an envelope
//! (`expect.conforms_to`, `search.invariants.conforms_to`); the limits are those of the
//! [published retry behaviours](../../../../docs/retry-behaviours.md).

use super::Validator;
use super::is_token;
use crate::scenario::model::bounds::{MAX_ATTEMPTS, MAX_CODES};
use crate::scenario::model::client::{
    ClientSpec, GrpcRetryParams, GrpcRetryPolicy, SnsEndpointType, SnsParams,
};
use crate::scenario::model::duration::Millis;
use crate::scenario::to_policy::PolicyError;
use crate::scenario::yaml::locations::{index, join};

/// SNS's limit on `numRetries` of an HTTP/S delivery policy.
const SNS_MAX_RETRIES: u32 = crate::policy::sns::MAX_NUM_RETRIES;

/// SNS's limit on `maxDelayTarget`, in seconds (whole seconds, as the policy writes it).
const SNS_MAX_DELAY_TARGET: u32 = crate::policy::sns::MAX_DELAY_TARGET.as_secs() as u32;

impl Validator<'_> {
    pub(super) fn policy(&mut self, path: &str, policy: &ClientSpec) {
        if let ClientSpec::Command(c) = policy {
            return self.command_client(path, c);
        }
        let p = join(path, policy.name());
        let before = self.errors.len();
        self.policy_rules(path, &p, policy);
        // The policy's own validation, which the run's `ClientSpec::policy` applies too.
        // The rules above say more, and where; it speaks only when they found nothing, so
        // a value is never reported twice. A custom client and a policy not built yet are
        // not errors here (the latter is reported as not supported yet).
        if self.errors.len() == before {
            if let Err(PolicyError::Invalid { key, message }) = policy.policy() {
                self.err(&join(&p, &key), message);
            }
        }
    }

    /// The rules of the scenario format for the policy at `path` (written at `p`).
    fn policy_rules(&mut self, path: &str, p: &str, policy: &ClientSpec) {
        if let Some(t) = policy.attempt_timeout() {
            self.positive(&join(p, "attempt_timeout"), t, "`attempt_timeout`");
        }
        match policy.max_attempts() {
            Some(0) => self.err_expected(
                &join(p, "max_attempts"),
                "`max_attempts: 0` is not allowed",
                "at least 1 (the first attempt counts)",
            ),
            Some(n) => self.at_most(
                &join(p, "max_attempts"),
                u64::from(n),
                MAX_ATTEMPTS,
                "attempts (as many as a run may make)",
            ),
            None => {}
        }
        match policy {
            ClientSpec::NoRetry => {}
            ClientSpec::Fixed(x) => self.codes(&join(p, "retry_on"), x.retry_on.len()),
            ClientSpec::Exponential(x) => {
                self.multiplier(&join(p, "multiplier"), x.multiplier);
                self.not_above(p, ("initial", x.initial), ("max_delay", x.max_delay));
                self.codes(&join(p, "retry_on"), x.retry_on.len());
            }
            ClientSpec::Linear(x) | ClientSpec::Fibonacci(x) => {
                self.not_above(p, ("initial", x.initial), ("max_delay", x.max_delay));
                self.codes(&join(p, "retry_on"), x.retry_on.len());
            }
            ClientSpec::AwsStandard(x)
            | ClientSpec::AwsStandard21(x)
            | ClientSpec::AwsAdaptive(x) => {
                self.positive(&join(p, "max_backoff"), x.max_backoff, "`max_backoff`");
            }
            ClientSpec::SnsDelivery(x) => self.sns(p, x),
            ClientSpec::GrpcRetry(x) => self.grpc_retry(p, x),
            ClientSpec::GrpcConnectionBackoff(x) => {
                self.multiplier(&join(p, "multiplier"), x.multiplier);
                self.positive(
                    &join(p, "initial_backoff"),
                    x.initial_backoff,
                    "`initial_backoff`",
                );
                self.not_above(
                    p,
                    ("initial_backoff", x.initial_backoff),
                    ("max_backoff", x.max_backoff),
                );
            }
            ClientSpec::RocketmqProducer(x) => {
                self.codes(&join(p, "throttle_codes"), x.throttle_codes.len());
                self.multiplier(&join(p, "multiplier"), x.multiplier);
                self.not_above(
                    p,
                    ("initial_backoff", x.initial_backoff),
                    ("max_backoff", x.max_backoff),
                );
            }
            ClientSpec::ServicenowExponential(x) => {
                self.not_above(p, ("base_delay", x.base_delay), ("max_delay", x.max_delay));
                self.servicenow_bounds(p, x.response_codes.len(), x.max_retries);
            }
            ClientSpec::ServicenowHeader(x) => {
                self.servicenow_bounds(p, x.response_codes.len(), x.max_retries);
                if !is_token(&x.header) {
                    self.err_expected(
                        &join(p, "header"),
                        format!("invalid header name `{}`", x.header),
                        "a header name such as `Retry-After`",
                    );
                }
            }
            // Validated on its own, above.
            ClientSpec::Command(_) => {}
            ClientSpec::Custom(name) => {
                if name.trim().is_empty() {
                    self.err_expected(
                        p,
                        "empty client name",
                        "the name of a client registered in Rust",
                    );
                }
                if path.ends_with("conforms_to") {
                    self.err_expected(
                        p,
                        "a custom client has no envelope to conform to",
                        "a built-in policy",
                    );
                }
            }
        }
    }

    /// A gRPC retry policy: its service config's retry policy and throttling within gRPC's
    /// own limits.
    fn grpc_retry(&mut self, p: &str, x: &GrpcRetryParams) {
        let sc = &x.service_config;
        let scp = join(p, "service_config");
        let mut policies: Vec<(String, &GrpcRetryPolicy)> = Vec::new();
        if let Some(r) = &sc.retry_policy {
            policies.push((join(&scp, "retryPolicy"), r));
        }
        for (i, m) in sc.method_config.iter().enumerate() {
            if let Some(r) = &m.retry_policy {
                policies.push((
                    join(&index(&join(&scp, "methodConfig"), i), "retryPolicy"),
                    r,
                ));
            }
        }
        match policies.len() {
            0 => self.err_expected(
                &scp,
                "the service config has no retry policy",
                "`retryPolicy` at the top level or in one `methodConfig` entry",
            ),
            1 => {}
            _ => self.err_expected(
                &policies[1].0,
                "a second retry policy: the scenario has one operation, so it is ambiguous",
                "exactly one `retryPolicy`",
            ),
        }
        for (rp, r) in &policies {
            self.grpc_retry_policy(rp, r);
        }
        if let Some(t) = &sc.retry_throttling {
            // The policy's own rule, located at its field.
            let throttling = crate::policy::grpc::RetryThrottling {
                max_tokens: t.max_tokens,
                token_ratio: t.token_ratio,
            };
            if let Err(e) = throttling.validate() {
                let tp = join(&scp, "retryThrottling");
                self.err(&join(&tp, e.field), format!("{} {}", e.field, e.message));
            }
        }
    }

    /// A list of statuses or conditions at `path`, of `len` entries, which a client consults
    /// per attempt.
    /// The bounds both `servicenow_*` strategies share: their response codes and retries.
    fn servicenow_bounds(&mut self, p: &str, response_codes: usize, max_retries: u32) {
        self.codes(&join(p, "response_codes"), response_codes);
        self.at_most(
            &join(p, "max_retries"),
            u64::from(max_retries),
            MAX_ATTEMPTS,
            "retries (as many attempts as a run may make)",
        );
    }

    fn codes(&mut self, path: &str, len: usize) {
        self.too_many(path, len, MAX_CODES, "entries", "in a list of codes");
    }

    fn multiplier(&mut self, path: &str, m: f64) {
        if m.is_nan() {
            self.err_expected(
                path,
                "a multiplier that is not a number",
                "a number of at least 1",
            );
        } else if m.is_infinite() {
            // `1e400` reads as infinity: the file wrote a number, too large for one.
            self.err_expected(
                path,
                "a multiplier too large to compute with (it reads as infinity)",
                "a finite number of at least 1",
            );
        } else if m < 1.0 {
            self.err_expected(
                path,
                format!("multiplier {m} would not grow the delay"),
                "a number of at least 1",
            );
        }
    }

    /// `lower` must not exceed `upper` (such as `initial <= max_delay`).
    fn not_above(&mut self, path: &str, lower: (&str, Millis), upper: (&str, Millis)) {
        if lower.1 > upper.1 {
            self.err_expected(
                &join(path, lower.0),
                format!(
                    "`{}` {} is above `{}` {}",
                    lower.0, lower.1, upper.0, upper.1
                ),
                format!("`{}` <= `{}`", lower.0, upper.0),
            );
        }
    }

    fn grpc_retry_policy(&mut self, path: &str, r: &GrpcRetryPolicy) {
        if r.max_attempts < 2 {
            self.err_expected(
                &join(path, "maxAttempts"),
                format!("maxAttempts {} leaves no retry", r.max_attempts),
                "at least 2 (gRPC rejects a policy below 2; values above 5 are treated as 5)",
            );
        }
        self.positive(
            &join(path, "initialBackoff"),
            r.initial_backoff.0,
            "`initialBackoff`",
        );
        self.positive(&join(path, "maxBackoff"), r.max_backoff.0, "`maxBackoff`");
        if !(r.backoff_multiplier.is_finite() && r.backoff_multiplier > 0.0) {
            self.err_expected(
                &join(path, "backoffMultiplier"),
                format!("backoffMultiplier {} is not positive", r.backoff_multiplier),
                "a number above 0",
            );
        }
        self.codes(
            &join(path, "retryableStatusCodes"),
            r.retryable_status_codes.len(),
        );
        if r.retryable_status_codes.is_empty() {
            self.err_expected(
                &join(path, "retryableStatusCodes"),
                "no retryable status codes",
                "at least one code such as `UNAVAILABLE`",
            );
        }
    }

    fn sns(&mut self, path: &str, x: &SnsParams) {
        let dp = join(path, "delivery_policy");
        let Some(policy) = &x.delivery_policy else {
            return;
        };
        if x.endpoint_type != SnsEndpointType::Http {
            self.err_key(
                &dp,
                "a `delivery_policy` applies to `endpoint_type: http` only; the other endpoint types use AWS's presets",
            );
            return;
        }
        if let Some(t) = &policy.throttle_policy {
            if t.max_receives_per_second < 1 {
                self.err_expected(
                    &join(&dp, "throttlePolicy.maxReceivesPerSecond"),
                    "maxReceivesPerSecond is 0",
                    "at least 1",
                );
            }
        }
        let Some(h) = &policy.healthy_retry_policy else {
            return;
        };
        let hp = join(&dp, "healthyRetryPolicy");
        if h.min_delay_target < 1 {
            self.err_expected(
                &join(&hp, "minDelayTarget"),
                "minDelayTarget is 0",
                "at least 1 second",
            );
        }
        if h.min_delay_target > h.max_delay_target {
            self.err_expected(
                &join(&hp, "minDelayTarget"),
                format!(
                    "minDelayTarget {} is above maxDelayTarget {}",
                    h.min_delay_target, h.max_delay_target
                ),
                "minDelayTarget <= maxDelayTarget",
            );
        }
        if h.max_delay_target > SNS_MAX_DELAY_TARGET {
            self.err_expected(
                &join(&hp, "maxDelayTarget"),
                format!("maxDelayTarget {} is above SNS's limit", h.max_delay_target),
                format!("at most {SNS_MAX_DELAY_TARGET} seconds"),
            );
        }
        if h.num_retries > SNS_MAX_RETRIES {
            self.err_expected(
                &join(&hp, "numRetries"),
                format!("numRetries {} is above SNS's limit", h.num_retries),
                format!("at most {SNS_MAX_RETRIES}"),
            );
        }
        let phases = u64::from(h.num_no_delay_retries)
            + u64::from(h.num_min_delay_retries)
            + u64::from(h.num_max_delay_retries);
        // SNS's 3600 s limit on the total retry time of a custom HTTP/S policy, judged only
        // when the count, the phases and the targets are within SNS's limits: otherwise the
        // total means nothing (and the errors above say why), and summing the delays of
        // 4 billion retries would take minutes and overflow.
        if h.num_retries <= SNS_MAX_RETRIES
            && h.max_delay_target <= SNS_MAX_DELAY_TARGET
            && phases <= u64::from(h.num_retries)
            && (1..=h.max_delay_target).contains(&h.min_delay_target)
        {
            let total = x.config().total_retry_time();
            if total > crate::policy::sns::MAX_TOTAL_RETRY_TIME {
                self.err_expected(
                    &dp,
                    format!(
                        "the delivery policy's retries add up to {} (the sum of the delays \
                         of its {} retries, before jitter), above SNS's limit for HTTP/S \
                         endpoints",
                        crate::policy::fmt_ms(u64::try_from(total.as_millis()).unwrap_or(u64::MAX)),
                        h.num_retries
                    ),
                    "a total retry time of at most 3600s",
                );
            }
        }
        if phases > u64::from(h.num_retries) {
            self.err_expected(
                &join(&hp, "numRetries"),
                format!(
                    "the phases add up to {phases} retries (numNoDelayRetries {} + numMinDelayRetries {} + numMaxDelayRetries {}) but numRetries is {}",
                    h.num_no_delay_retries, h.num_min_delay_retries, h.num_max_delay_retries, h.num_retries
                ),
                "numRetries >= the sum of the phase counts",
            );
        }
    }
}
