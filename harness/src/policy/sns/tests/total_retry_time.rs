//! SNS's 3600 s limit on the total retry time of a custom HTTP/S policy, checked on the
//! configuration and reported by scenario validation; the presets are exempt.

use super::S;
use crate::policy::sns::SnsConfig;

#[test]
fn total_retry_time_limit() {
    // 100 retries linear from 20 s to 60 s: 100 × 40 s = 4000 s.
    let long = SnsConfig {
        min_delay: S(20),
        max_delay: S(60),
        num_retries: 100,
        ..Default::default()
    };
    assert_eq!(long.total_retry_time(), S(4000));
    let e = long.validate_custom_http().unwrap_err();
    assert_eq!(
        e.to_string(),
        "healthyRetryPolicy: the total retry time is 4000.000s, above SNS's limit of 3600s for HTTP/S"
    );
    let at_limit = SnsConfig {
        min_delay: S(60),
        max_delay: S(60),
        num_retries: 60,
        ..Default::default()
    };
    assert!(at_limit.validate_custom_http().is_ok());
}

#[test]
fn scenario_validation_rejects_more_than_3600_s() {
    let yaml = "version: 1\nname: x\nendpoints:\n  api:\n    script: [ { status: 200 } ]\n\
                operation: { endpoint: api }\nclient:\n  sns_delivery:\n    delivery_policy:\n      \
                healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 60, numRetries: 100 }\n";
    let errors = crate::scenario::Scenario::from_yaml_str(yaml, "x.yaml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        errors,
        "x.yaml:10:7 client.sns_delivery.delivery_policy: the delivery policy's retries add up to \
         4000.000s (the sum of the delays of its 100 retries, before jitter), above SNS's limit \
         for HTTP/S endpoints, expected a total retry time of at most 3600s"
    );
    // The presets are exempt; a policy at the limit passes.
    let ok = yaml.replace(
        "maxDelayTarget: 60, numRetries: 100",
        "maxDelayTarget: 60, numRetries: 90",
    );
    assert!(crate::scenario::Scenario::from_yaml_str(&ok, "x.yaml").is_ok());
}
