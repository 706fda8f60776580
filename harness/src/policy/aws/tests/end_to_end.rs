//! The reference client over the sim backend, from scenarios: the error code read from the
//! body, the decisions and the quota in the trace, and `conforms_to` judging from the trace.

/// The reference client over the sim backend: the error code comes from the body, the
/// decision and the quota reach the trace.
#[test]
fn reference_client_reads_error_codes_end_to_end() {
    let yaml = r#"
version: 1
name: aws throttle then success
endpoints:
  api:
    script:
      - { status: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}' }
      - { status: 503, headers: { x-amz-retry-after: "1500" } }
      - { status: 200 }
operation: { endpoint: api }
client:
  aws_standard_2_1: { jitter: none }
expect:
  outcome: success
  attempts: 3
  gaps: [ { within: [1s, 1s] }, { within: [1.5s, 1.5s] } ]
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "aws.yaml").unwrap();
    assert!(scenario.unsupported().is_empty());
    let report = scenario.run_builtin();
    let text = report.snapshot_text();
    assert!(report.passed(), "{}\n{text}", report.summary());
    // 2.1: the throttle costs 5, the 503 14; the success refunds 14.
    assert!(text.contains("[quota 495/500]"), "{text}");
    assert!(text.contains("[quota 481/500]"), "{text}");
    assert!(text.contains("=> stop: success [quota 495/500]"), "{text}");
    // `conforms_to` judges from the trace, which keeps neither error codes nor
    // `x-amz-retry-after`: statuses only, as here (503s under smithy-rs cost 10 each).
    let yaml = r#"
version: 1
name: aws 503s
endpoints:
  api:
    script:
      - { status: 503, times: 2 }
      - { status: 200 }
operation: { endpoint: api, calls: 2 }
client:
  aws_standard: { sdk: smithy_rs }
expect:
  outcomes: [success, success]
  conforms_to: { aws_standard: { sdk: smithy_rs } }
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "aws.yaml").unwrap();
    let report = scenario.run_builtin();
    let text = report.snapshot_text();
    assert!(report.passed(), "{}\n{text}", report.summary());
    assert!(text.contains("[quota 480/500]"), "{text}");
    // Call 0 refunds its last retry's 10; call 1 succeeds at once and adds 1.
    assert!(text.contains("=> stop: success [quota 490/500]"), "{text}");
    assert!(text.contains("=> stop: success [quota 491/500]"), "{text}");
}
