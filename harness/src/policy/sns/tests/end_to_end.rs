//! The reference client over the sim backend, from a scenario: linear 20 s, 30 s, 40 s gaps
//! and `conforms_to` passing.

#[test]
fn reference_client_end_to_end() {
    let yaml = r#"
version: 1
name: sns linear 20/30/40
endpoints:
  api:
    script:
      - { status: 503, times: 3 }
      - { status: 200 }
operation: { endpoint: api }
client:
  sns_delivery:
    jitter: 0
    delivery_policy:
      healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 40, numRetries: 3 }
expect:
  outcome: success
  attempts: 4
  gaps: [ { within: [20s, 20s] }, { within: [30s, 30s] }, { within: [40s, 40s] } ]
  conforms_to:
    sns_delivery:
      jitter: 0
      delivery_policy:
        healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 40, numRetries: 3 }
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "sns.yaml").unwrap();
    assert!(scenario.unsupported().is_empty());
    let report = scenario.run_builtin();
    assert!(
        report.passed(),
        "{}\n{}",
        report.summary(),
        report.snapshot_text()
    );
}
