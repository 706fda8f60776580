//! Bypass diagnostics: each sign that a client went around the simulation is detected and
//! explained.

use std::time::{Duration, SystemTime};

use http_body_util::BodyExt;
use retrylab::{Env, Scenario};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "bypass.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn bypass_message(report: &retrylab::Report) -> String {
    report
        .failures()
        .find(|v| v.check == "bypass")
        .map(|v| v.message.clone())
        .unwrap_or_else(|| panic!("no bypass verdict:\n{}", report.summary()))
}

#[test]
fn zero_requests_at_the_endpoint() {
    let yaml = r#"
version: 1
name: nothing reaches the endpoint
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
"#;
    // A client that never touches env.http_client() or env.connector() (as one with its own
    // connector would): the endpoint sees nothing.
    let report = scenario(yaml).run(|_env| async { Ok::<_, String>("cached") });
    let message = bypass_message(&report);
    assert!(
        message.contains("no request and no connection reached endpoint `api`"),
        "{message}"
    );
    assert!(message.contains("env.http_client()"), "{message}");
}

#[test]
fn zero_requests_expected_is_not_a_bypass() {
    let yaml = r#"
version: 1
name: a client that answers from its cache
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
expect: { requests_received: 0 }
"#;
    let report = scenario(yaml).run(|_env| async { Ok::<_, String>("cached") });
    assert!(report.passed(), "{}", report.summary());
}

/// An endpoint that answers 503 with a Retry-After date 30 s ahead, then 200.
const DATED: &str = r#"
version: 1
name: retry-after as a date
endpoints:
  api:
    script:
      - { status: 503, retry_after: { http_date: 30s } }
      - { status: 200 }
operation: { endpoint: api }
expect: { retry_after: { honour: max } }
"#;

/// A client that waits until the Retry-After date, as `now` tells the time.
async fn until_the_date(env: Env, now: fn(&Env) -> SystemTime) -> Result<u16, String> {
    let client = env.http_client();
    loop {
        let response = client
            .request(env.operation().request())
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let date = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok());
        let _ = response.into_body().collect().await;
        if status < 500 {
            return Ok(status);
        }
        let wait = date
            .and_then(|d| d.duration_since(now(&env)).ok())
            .unwrap_or(Duration::ZERO);
        tokio::time::sleep(wait).await;
    }
}

#[test]
fn http_date_compared_with_the_real_clock() {
    // The bug: the real clock is far past the virtual 2026-01-01, so the date looks past and
    // the client retries at once.
    let report = scenario(DATED).run(|env| until_the_date(env, |_| SystemTime::now()));
    let message = bypass_message(&report);
    assert!(
        message.contains("real clock (SystemTime::now())"),
        "{message}"
    );
    assert!(message.contains("env.now_system()"), "{message}");
}

#[test]
fn http_date_compared_with_the_virtual_clock_passes() {
    let report = scenario(DATED).run(|env| until_the_date(env, Env::now_system));
    assert!(report.passed(), "{}", report.summary());
}

#[test]
fn a_blocking_sleep_stops_the_virtual_clock() {
    let yaml = r#"
version: 1
name: blocking pause between attempts
endpoints:
  api:
    script: [ { status: 503 }, { status: 200 } ]
operation: { endpoint: api }
"#;
    let report = scenario(yaml).run(|env| async move {
        let client = env.http_client();
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
            // The bug: a real-time pause. Virtual time stands still meanwhile.
            std::thread::sleep(Duration::from_millis(800));
        }
    });
    let verdict = report
        .failures()
        .find(|v| v.check == "stopped_clock")
        .unwrap_or_else(|| panic!("no stopped_clock verdict:\n{}", report.summary()));
    assert!(
        verdict.message.contains("between attempt 1 and attempt 2"),
        "{}",
        verdict.message
    );
    assert!(
        verdict.message.contains("tokio::time::sleep"),
        "{}",
        verdict.message
    );
    // The trace itself shows the symptom: no virtual time passed between the attempts.
    assert_eq!(
        report.trace().attempts[1].start_ms,
        report.trace().attempts[0].end_ms.unwrap()
    );
}

/// A sync retry loop driven through `spawn_blocking` slept in real time while virtual time
/// stood still (tokio does not advance paused time while a blocking task runs): before the
/// fix the scenario passed with every gap 0.000 s, since no poll of the run's thread blocked.
#[test]
fn a_pause_inside_spawn_blocking_stops_the_clock_and_is_caught() {
    let yaml = r#"
version: 1
name: a sync client in spawn_blocking
endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }
operation: { endpoint: api }
expect: { outcome: success, attempts: 3 }
limits: { wall: 20s }
"#;
    let report = scenario(yaml).run(|env: Env| async move {
        for _ in 0..3 {
            let response = env
                .http_client()
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            if status == 200 {
                return Ok(status);
            }
            // The sync crate's pause, off the async thread.
            tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(700)))
                .await
                .map_err(|e| e.to_string())?;
        }
        Err("gave up".to_owned())
    });
    let stopped = report
        .failures()
        .find(|v| v.check == "stopped_clock")
        .unwrap_or_else(|| panic!("no stopped_clock verdict:\n{}", report.summary()));
    assert!(
        stopped.message.contains("spawn_blocking"),
        "{}",
        stopped.message
    );
    assert!(
        stopped.message.contains("waited 2 times"),
        "{}",
        stopped.message
    );
    assert!(
        stopped
            .message
            .contains("between attempt 1 and attempt 2, whose gap shows 0.000s"),
        "{}",
        stopped.message
    );
}

/// A task the client spawned spins for 700 ms of CPU while the call waits for it at one
/// virtual instant: the wait is filed, and, where the system says how the thread spent it
/// (Linux), named as a busy task rather than a wait on the outside.
#[test]
fn a_spawned_task_that_spins_stops_the_clock_and_is_named() {
    let yaml = r#"
version: 1
name: a spawned task spins
endpoints: { api: { script: [ { status: 200 } ] } }
operation: { endpoint: api }
limits: { wall: 20s }
"#;
    let report = scenario(yaml).run(|env: Env| async move {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            // The bug: 700 ms of computation on the runtime's thread.
            spin_for_cpu(Duration::from_millis(700));
            let _ = sender.send(());
        });
        receiver.await.map_err(|e| e.to_string())?;
        retrylab::attempt(&env).await.map_err(|e| format!("{e:?}"))
    });
    let stopped = report
        .failures()
        .find(|v| v.check == "stopped_clock")
        .unwrap_or_else(|| panic!("no stopped_clock verdict:\n{}", report.summary()));
    assert!(
        stopped.message.contains("waited 1 times"),
        "{}",
        stopped.message
    );
    if cfg!(target_os = "linux") {
        assert!(
            stopped.message.contains("a task the client spawned"),
            "{}",
            stopped.message
        );
        assert!(
            stopped.message.contains("busy on a CPU"),
            "{}",
            stopped.message
        );
    }
}

/// Spins until the calling thread has used `cpu` of CPU time (on Linux, from
/// `/proc/thread-self/schedstat`, so a loaded machine makes it last longer, not use less),
/// or, elsewhere, `cpu` of real time.
fn spin_for_cpu(cpu: Duration) {
    let used = || {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .map(Duration::from_nanos)
    };
    let began = std::time::Instant::now();
    let start = used();
    loop {
        let spent = match (start, used()) {
            (Some(start), Some(now)) => now.saturating_sub(start),
            _ => began.elapsed(),
        };
        if spent >= cpu {
            return;
        }
        for _ in 0..10_000 {
            std::hint::spin_loop();
        }
    }
}
