//! `sns_delivery` with `endpoint_type: aws_managed` against an always-503 endpoint: 100,016
//! attempts over about 23 virtual days through the reference client, judged by
//! `conforms_to`. `cargo bench -p retrylab --bench sns` prints the figures.
//!
//! The run's wall limit is the most the format allows (1h), so that a run under
//! `valgrind --tool=callgrind`, some fifty times slower, makes all its attempts: with a
//! shorter one it stops early, fails, and its profile is mostly the failure's summary.

use std::time::Instant;

use retrylab::Scenario;

const YAML: &str = r#"
version: 1
name: sns aws_managed preset, always 503
endpoints:
  api: { script: [ { status: 503 } ] }
network: { latency: 1ms }
operation: { endpoint: api, method: POST, path: /notify, body: '{"m":1}' }
client: { sns_delivery: { endpoint_type: aws_managed } }
expect:
  outcome: failure
  attempts: 100016
  conforms_to: { sns_delivery: { endpoint_type: aws_managed } }
limits: { max_virtual_time: 30d, max_client_attempts: 200000, wall: 1h }
"#;

fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scenario = match Scenario::from_yaml_str(YAML, "sns-bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let started = Instant::now();
    let report = scenario.run_builtin();
    let wall = started.elapsed();
    let trace = report.trace();
    println!(
        "sns_delivery aws_managed: {} attempts, {:.2} virtual days, {:.3}s wall ({:.1} us/attempt); verdicts {}",
        trace.attempts.len(),
        trace.end_ms as f64 / 86_400_000.0,
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e6 / trace.attempts.len().max(1) as f64,
        if report.passed() {
            "all passed".to_owned()
        } else {
            report.summary()
        }
    );
}
