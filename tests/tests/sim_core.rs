//! The simulation core through the public API: exact timelines, transport faults, commits
//! detached from connections, dedupe, limits and determinism.

use std::time::Duration;

use http_body_util::BodyExt;
use retrylab::scenario::Scenario;
use retrylab::trace::{AttemptOutcome, ConnEventKind, Side};
use retrylab::{Env, RunEnd};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "test.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// A user's hand-written retry loop: retries 5xx and transport errors after `pause`, reads
/// every body, gives each attempt `timeout` when set.
async fn retry_loop(env: Env, pause: Duration, timeout: Option<Duration>) -> Result<u16, String> {
    let client = env.http_client();
    for _ in 0..10 {
        let attempt = async {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| format!("{e:?}"))?;
            let status = response.status().as_u16();
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("{e:?}"))?;
            Ok::<_, String>(status)
        };
        let result = match timeout {
            Some(t) => tokio::time::timeout(t, attempt)
                .await
                .unwrap_or_else(|_| Err("timeout".into())),
            None => attempt.await,
        };
        if let Ok(status) = result {
            if status < 500 {
                return Ok(status);
            }
        }
        tokio::time::sleep(pause).await;
    }
    Err("gave up".into())
}

const BURST: &str = r#"
version: 1
name: burst
endpoints:
  api:
    script:
      - { status: 503, times: 2 }
      - { status: 200 }
network: { latency: 250ms }
operation: { endpoint: api, method: POST, path: /orders }
"#;

#[test]
fn pooled_connection_gaps_are_exact() {
    let report = scenario(BURST).run(|env| retry_loop(env, Duration::from_secs(2), None));
    assert_eq!(
        report.trace().timeline(),
        "t=0.000s  #1  POST /orders  -> 503  conn 1 new\n\
         t=3.000s  #2  POST /orders  -> 503  conn 1 reused  gap 2.000s\n\
         t=5.500s  #3  POST /orders  -> 200  conn 1 reused  gap 2.000s\n"
    );
    report.assert();
}

#[test]
fn new_connection_per_attempt_gaps_are_exact() {
    let yaml = BURST.replace(
        "    script:",
        "    keep_alive: { max_requests: 1 }\n    script:",
    );
    let report = scenario(&yaml).run(|env| retry_loop(env, Duration::from_secs(2), None));
    assert_eq!(
        report.trace().timeline(),
        "t=0.000s  #1  POST /orders  -> 503  conn 1 new\n\
         t=3.000s  #2  POST /orders  -> 503  conn 2 new  gap 2.000s\n\
         t=6.000s  #3  POST /orders  -> 200  conn 3 new  gap 2.000s\n"
    );
    // The server closes each connection after its one response (keep-alive close).
    let fins = report
        .trace()
        .connections
        .iter()
        .filter(|e| e.kind == ConnEventKind::Fin(Side::Server))
        .count();
    assert_eq!(fins, 3);
}

#[test]
fn commit_survives_client_timeout() {
    let yaml = r#"
version: 1
name: commit then timeout
endpoints:
  api:
    script:
      - { status: 200, latency: 2s, commit: before_response }
network: { latency: 250ms }
operation: { endpoint: api, method: POST, path: /orders }
drain: 5s
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
        match tokio::time::timeout(
            Duration::from_secs(1),
            client.request(env.operation().request()),
        )
        .await
        {
            Ok(_) => Ok("answered"),
            Err(_) => Err("timed out"),
        }
    });
    let trace = report.trace();
    assert_eq!(trace.attempts[0].outcome, AttemptOutcome::Abandoned);
    assert_eq!(trace.attempts[0].end_ms, Some(1000));
    // The request arrived at 0.750s (connect 0.5s, then one way); the step commits 2s later,
    // although the client hung up at 1s.
    assert_eq!(trace.effects.len(), 1, "{:?}", trace.effects);
    assert_eq!(trace.effects[0].at_ms, 2750);
    assert_eq!(trace.effects[0].call_id, Some(0));
}

#[test]
fn reset_mid_body_reaches_the_client() {
    let yaml = r#"
version: 1
name: reset mid body
endpoints:
  api:
    script:
      # The 39-byte head, then 3 body bytes, then RST.
      - { status: 200, body: "hello world", fail: { reset: { after_bytes: 42 } } }
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| async move {
        let response = env
            .http_client()
            .request(env.operation().request())
            .await
            .map_err(|e| format!("head: {e:?}"))?;
        let error = response
            .into_body()
            .collect()
            .await
            .err()
            .ok_or("no error")?;
        let io = std::error::Error::source(&error)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(|e| e.kind());
        Ok::<_, String>(io)
    });
    let call = &report.trace().calls[0];
    assert_eq!(
        call.result,
        retrylab::trace::CallResult::Success("Some(ConnectionReset)".into())
    );
    let attempt = &report.trace().attempts[0];
    assert_eq!(attempt.outcome, AttemptOutcome::Status(200));
    assert_eq!(attempt.end, retrylab::trace::EndKind::Error);
}

#[test]
fn refused_then_accepted() {
    let yaml = r#"
version: 1
name: refused
endpoints:
  api:
    connect: [ { action: refuse, times: 1 }, { action: accept } ]
    script: [ { status: 200 } ]
network: { latency: 100ms }
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| retry_loop(env, Duration::from_secs(1), None));
    assert_eq!(
        report.trace().timeline(),
        "t=0.000s  #1  GET /  -> refused  conn 1 new\n\
         t=1.200s  #2  GET /  -> 200  conn 2 new  gap 1.000s\n"
    );
}

#[test]
fn black_hole_connect_is_abandoned() {
    let yaml = r#"
version: 1
name: black hole
endpoints:
  api:
    connect: [ { action: blackhole, times: 1 }, { action: accept } ]
    script: [ { status: 200 } ]
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| {
        retry_loop(
            env,
            Duration::from_millis(500),
            Some(Duration::from_secs(5)),
        )
    });
    let trace = report.trace();
    assert_eq!(trace.attempts[0].outcome, AttemptOutcome::ConnectAbandoned);
    assert_eq!(trace.attempts[0].end_ms, Some(5000));
    assert_eq!(trace.attempts[1].outcome, AttemptOutcome::Status(200));
    assert_eq!(trace.attempts[1].start_ms, 5500);
}

#[test]
fn hang_keeps_the_connection_open() {
    let yaml = r#"
version: 1
name: hang
endpoints:
  api:
    script: [ { fail: hang }, { status: 200 } ]
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| {
        retry_loop(
            env,
            Duration::from_millis(100),
            Some(Duration::from_secs(3)),
        )
    });
    let trace = report.trace();
    assert_eq!(trace.attempts[0].outcome, AttemptOutcome::Abandoned);
    assert_eq!(trace.attempts[0].end_ms, Some(3000));
    // hyper-util cannot reuse a connection with a request in flight: the retry opens another.
    assert_eq!(trace.attempts[1].conn_id, Some(2));
    assert_eq!(trace.attempts[1].outcome, AttemptOutcome::Status(200));
}

#[test]
fn partition_holds_segments_until_it_heals() {
    let yaml = r#"
version: 1
name: partition
endpoints:
  api:
    script: [ { status: 200 } ]
network:
  latency: 10ms
  faults: [ { at: 1s, partition: api, for: 10s } ]
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
        let mut heads = Vec::new();
        for pause in [2, 0] {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| format!("{e:?}"))?;
            heads.push(env.clock().now_ms());
            let _ = response.into_body().collect().await;
            tokio::time::sleep(Duration::from_secs(pause)).await;
        }
        Ok::<_, String>(heads)
    });
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 2, "{}", trace.timeline());
    // The second request, sent at 2.040s on the pooled connection during the partition, is
    // held and delivered when it heals at 11s; its response is back 10ms later.
    assert_eq!(trace.attempts[1].start_ms, 2040);
    assert_eq!(trace.attempts[1].conn, retrylab::trace::ConnUse::Reused);
    assert_eq!(
        trace.attempts[1].head_ms,
        Some(11_010),
        "{}",
        trace.timeline()
    );
}

#[test]
fn dedupe_answers_409_in_flight_and_replays_after_commit() {
    let yaml = r#"
version: 1
name: dedupe
endpoints:
  api:
    dedupe: { header: Idempotency-Key }
    script: [ { status: 201, latency: 2s, body: "created" } ]
operation:
  endpoint: api
  method: POST
  path: /orders
  idempotency_key: { header: Idempotency-Key }
drain: 3s
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let sent = tokio::time::timeout(
                Duration::from_secs(1),
                client.request(env.operation().request()),
            )
            .await;
            match sent {
                Ok(Ok(response)) => {
                    statuses.push(response.status().as_u16());
                    let _ = response.into_body().collect().await;
                }
                _ => statuses.push(0),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok::<_, String>(statuses)
    });
    let trace = report.trace();
    // 1: times out at 1s (the step answers at 2s); 2 at 1.5s: the key is in flight -> 409;
    // 3 at 2.5s: the first committed at 2s -> replay of its 201.
    assert_eq!(
        trace.calls[0].result,
        retrylab::trace::CallResult::Success("[0, 409, 201]".into()),
        "{}",
        trace.timeline()
    );
    assert_eq!(trace.effects.len(), 1);
}

#[test]
fn unmatched_request_gets_404_and_is_reported() {
    let yaml = r#"
version: 1
name: unmatched
endpoints:
  api:
    routes:
      - { match: { method: GET, path: /health }, script: [ { status: 200 } ] }
operation: { endpoint: api, path: /orders }
"#;
    let report = scenario(yaml).run(|env| retry_loop(env, Duration::from_secs(1), None));
    assert_eq!(
        report.trace().attempts[0].outcome,
        AttemptOutcome::Status(404)
    );
    let failure = report.failures().next().expect("a verdict");
    assert_eq!(failure.check, "unmatched_request");
    assert!(
        failure.message.contains("GET /orders"),
        "{}",
        failure.message
    );
}

#[test]
fn late_request_after_the_call_returned() {
    let yaml = r#"
version: 1
name: late
endpoints:
  api:
    script: [ { status: 200 } ]
network: { latency: 100ms }
operation: { endpoint: api }
drain: 1s
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
        let request = env.operation().request();
        // Fire and forget: the call returns before its request arrives.
        tokio::spawn(async move {
            let _ = client.request(request).await;
        });
        Ok::<_, String>(())
    });
    let late = &report.trace().late_requests;
    assert_eq!(late.len(), 1, "{}", report.summary());
    assert_eq!(late[0].at_ms, 300);
}

#[test]
fn pending_client_stops_at_max_virtual_time() {
    let yaml = r#"
version: 1
name: pending
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
limits: { max_virtual_time: 30d }
"#;
    let report = scenario(yaml).run(|_env| std::future::pending::<Result<(), ()>>());
    assert_eq!(report.end(), &RunEnd::VirtualTimeLimit);
    assert_eq!(report.trace().end_ms, 30 * 24 * 3600 * 1000);
    assert_eq!(
        report.failures().next().map(|v| v.check.as_str()),
        Some("virtual_time_limit")
    );
}

#[test]
fn blocking_client_is_abandoned_at_the_wall_limit() {
    let yaml = r#"
version: 1
name: blocking
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
limits: { wall: 1s }
"#;
    let report = scenario(yaml).run(|_env| async {
        loop {
            std::thread::sleep(Duration::from_millis(50));
        }
        #[allow(unreachable_code)]
        Ok::<(), ()>(())
    });
    assert_eq!(report.end(), &RunEnd::WallLimit);
    let verdict = report.failures().next().expect("a verdict");
    assert_eq!(verdict.check, "wall_limit");
    assert!(
        verdict.message.contains("std::thread::sleep"),
        "{}",
        verdict.message
    );
}

#[test]
fn panic_in_a_spawned_task_is_reported() {
    let yaml = r#"
version: 1
name: panics
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|_env| async {
        let task = tokio::spawn(async { panic!("boom in a task") });
        let _ = task.await;
        Ok::<(), ()>(())
    });
    assert_eq!(report.end(), &RunEnd::Panicked);
    let verdict = report.failures().next().expect("a verdict");
    assert!(
        verdict.message.contains("boom in a task"),
        "{}",
        verdict.message
    );
}

#[tokio::test]
async fn runs_from_inside_a_tokio_test() {
    let report = scenario(BURST).run(|env| retry_loop(env, Duration::from_secs(2), None));
    assert_eq!(report.trace().attempts.len(), 3);
}

/// Prints the trace when run as the child of `traces_are_identical_across_processes`.
#[test]
fn determinism_child() {
    if std::env::var("RETRYLAB_DETERMINISM_CHILD").is_err() {
        return;
    }
    let yaml = BURST.replace("latency: 250ms", "latency: 7ms");
    let report = scenario(&yaml).run(|env| async move {
        // Seeded jitter of the user's own: the same seed gives the same sleeps.
        let jitter = env.seed("pause") % 1000;
        retry_loop(env, Duration::from_millis(100 + jitter), None).await
    });
    println!("TRACE-BEGIN\n{}TRACE-END", report.trace().timeline());
}

#[test]
fn traces_are_identical_across_processes() {
    let run = || {
        let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "determinism_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RETRYLAB_DETERMINISM_CHILD", "1")
            .output()
            .expect("child runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let start = text.find("TRACE-BEGIN").expect("child printed a trace");
        let end = text.find("TRACE-END").expect("child printed a trace");
        text[start..end].to_owned()
    };
    let first = run();
    assert!(first.contains("#3"), "{first}");
    assert_eq!(first, run());
}

#[test]
fn connector_clients_are_reconstructed_from_the_wire() {
    let report = scenario(BURST).run(|env| async move {
        // The user's own hyper-util client on the harness's network: no harness headers, so
        // attempts are rebuilt from the endpoint's requests and the network's segments.
        let client: hyper_util::client::legacy::Client<_, http_body_util::Full<bytes::Bytes>> =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_timer(hyper_util::rt::TokioTimer::new())
                .build(env.connector());
        loop {
            let request = http::Request::post(env.operation().url)
                .body(http_body_util::Full::default())
                .map_err(|e| e.to_string())?;
            let response = client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let _ = response.into_body().collect().await;
            if status < 500 {
                return Ok::<_, String>(status);
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    });
    // Start = the connect start on a new connection, the request's first byte on a reused
    // one; end = the response's last byte arrived: the same timeline as env.http_client().
    assert_eq!(
        report.trace().timeline(),
        "t=0.000s  #1  POST /orders  -> 503  conn 1 new\n\
         t=3.000s  #2  POST /orders  -> 503  conn 1 reused  gap 2.000s\n\
         t=5.500s  #3  POST /orders  -> 200  conn 1 reused  gap 2.000s\n"
    );
    assert!(report.trace().attempts.iter().all(|a| a.reconstructed));
}

#[test]
fn the_trace_serializes_with_names_resolved() {
    let report = scenario(BURST).run(|env| retry_loop(env, Duration::from_secs(2), None));
    let json = report.trace().to_json();
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let second = &value["attempts"][1];
    assert_eq!(second["method"], "POST");
    assert_eq!(second["path"], "/orders");
    assert_eq!(second["start_ms"], 3000);
    assert_eq!(second["gap_ms"], 2000);
    assert_eq!(second["conn"], "reused");
    assert_eq!(second["outcome"]["status"], 503);
    // Field order is declaration order, so the text itself is stable.
    assert!(
        json.starts_with(r#"{"header":[["backend","sim"]"#),
        "{json}"
    );
}

#[test]
fn the_attempt_past_max_client_attempts_stops_the_run() {
    let yaml = r#"
version: 1
name: endless retries
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api }
limits: { max_client_attempts: 3 }
"#;
    let report = scenario(yaml).run(|env| async move {
        loop {
            let _ = retry_loop(env.clone(), Duration::from_secs(1), None).await;
        }
        #[allow(unreachable_code)]
        Ok::<(), ()>(())
    });
    assert_eq!(report.end(), &RunEnd::AttemptLimit);
    // Exactly the three allowed: the fourth was refused before it was sent, and the run
    // ended at that instant, with the call still waiting on it.
    let attempts = &report.trace().attempts;
    assert_eq!(attempts.len(), 3);
    assert!(
        attempts
            .iter()
            .all(|a| a.outcome == AttemptOutcome::Status(503))
    );
    // Attempts at 0, 1 and 2 s: the run ended at 3 s, when the fourth was refused.
    assert_eq!(report.trace().end_ms, 3000);
}

/// A connector client is counted at the endpoints: its third request, past the limit of 2,
/// never reaches the script, so the 200 it would have got (and its commit) never happen.
/// Before, nothing counted such a client: it got the 200 and the run completed.
#[test]
fn max_client_attempts_stops_a_client_built_on_the_connector() {
    let yaml = r#"
version: 1
name: connector client
endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }
operation: { endpoint: api, method: POST }
limits: { max_client_attempts: 2 }
"#;
    let report = scenario(yaml).run(|env| async move {
        let client: hyper_util::client::legacy::Client<_, http_body_util::Full<bytes::Bytes>> =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_timer(hyper_util::rt::TokioTimer::new())
                .build(env.connector());
        loop {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let _ = response.into_body().collect().await;
            if status < 500 {
                return Ok::<_, String>(status);
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    assert_eq!(report.end(), &RunEnd::AttemptLimit, "{}", report.summary());
    let trace = report.trace();
    let outcomes: Vec<_> = trace.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [AttemptOutcome::Status(503); 2]);
    assert!(trace.effects.is_empty(), "{:?}", trace.effects);
    // The third request reached the endpoint at 2 s and was refused there.
    assert_eq!(trace.end_ms, 2000);
}

/// 64 tasks retrying at once on `env.http_client()` with a limit of 100 made 128 attempts:
/// the limit was only looked at when the run's own task next ran. Now the 101st attempt is
/// refused wherever it comes from.
#[test]
fn max_client_attempts_is_exact_when_tasks_race() {
    let yaml = r#"
version: 1
name: racing tasks
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api }
limits: { max_client_attempts: 100 }
"#;
    let report = scenario(yaml).run(|env| async move {
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let env = env.clone();
                tokio::spawn(async move {
                    let client = env.http_client();
                    loop {
                        if let Ok(response) = client.request(env.operation().request()).await {
                            let _ = response.into_body().collect().await;
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
        Ok::<(), ()>(())
    });
    assert_eq!(report.end(), &RunEnd::AttemptLimit);
    assert_eq!(report.trace().attempts.len(), 100);
}

/// Concurrent calls share the limit too: 64 calls at once, each retrying without a pause,
/// made 110 attempts under a limit of 100.
#[test]
fn max_client_attempts_is_exact_for_concurrent_calls() {
    let yaml = r#"
version: 1
name: concurrent calls
endpoints: { api: { script: [ { status: 503 } ] } }
operation: { endpoint: api, calls: 64, concurrency: 64 }
limits: { max_client_attempts: 100 }
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
        loop {
            if let Ok(response) = client.request(env.operation().request()).await {
                let _ = response.into_body().collect().await;
            }
        }
        #[allow(unreachable_code)]
        Ok::<(), ()>(())
    });
    assert_eq!(report.end(), &RunEnd::AttemptLimit);
    assert_eq!(report.trace().attempts.len(), 100);
}

/// An endpoint with neither `script` nor `routes` answered 404 (no route at all) although the
/// format says it answers 200 to everything.
#[test]
fn an_endpoint_without_script_answers_200_forever() {
    let yaml = "version: 1\nname: bare\nendpoints: { api: {} }\n\
                operation: { endpoint: api, method: POST, path: /orders, calls: 3 }\n\
                expect: { outcome: success, attempts: 1 }\n";
    let report = scenario(yaml).run(|env| retry_loop(env, Duration::from_secs(1), None));
    assert!(report.passed(), "{}", report.summary());
    let outcomes: Vec<_> = report.trace().attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, vec![AttemptOutcome::Status(200); 3]);
}
