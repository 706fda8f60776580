//! reqwest-retry through retrylab's reqwest adapter against its scenarios in
//! `scenarios/clients/reqwest-retry-*.yaml`, with each verdict pinned (which checks pass,
//! which fail as the file's `must_fail` expects, the instants that make the point), and the
//! adapter's own promises: one attempt per request, the body streamed, a clear error for a
//! streaming request body, the request's timeout, transport faults as middleware errors.
//!
//! Needs feature `reqwest` (reqwest 0.13); with `reqwest-0-12` too, the same files run on
//! reqwest 0.12 and reqwest-retry 0.8 and must give the same traces.
//!
//! `tests/scenarios.rs` runs the same files (and asserts their snapshots) through the client
//! registry; these tests call `Scenario::run` with the client functions directly and check
//! verdicts only.

use std::time::Duration;

use bytes::Bytes;
use retrylab::adapters::reqwest::TransportError;
use retrylab::trace::{AttemptOutcome, CallResult, ConnUse, EndKind};
use retrylab::{Env, Judgement, Scenario};
use retrylab_tests::clients::reqwest as plain_reqwest;
use retrylab_tests::clients::reqwest_retry;
use retrylab_tests::pinned::{
    call0, caught, checks, client_scenario, failure, gaps, jitter, jitter_scenario, message,
    real_scenario, starts,
};

// ---- reqwest-retry's documented behaviours ------------------------------------------------

#[test]
fn exponential_backoff_doubles_from_its_minimum_to_its_maximum() {
    let report = client_scenario("reqwest-retry-exponential.yaml").run(reqwest_retry::exponential);
    assert!(report.passed(), "{}", report.summary());
    assert!(caught(&report).is_empty());
    assert_eq!(
        checks(&report),
        ["outcome", "attempts", "gaps", "conforms_to", "total_time"]
    );
    assert_eq!(gaps(&report), [100, 200, 400, 800, 1000]);
    assert_eq!(starts(&report), [0, 104, 306, 708, 1510, 2512]);
    // It hands back the last 503 when it gives up.
    assert_eq!(call0(&report), (&failure("Status(503)"), Some(2514)));
}

#[test]
fn retry_after_is_ignored_on_a_503_as_on_a_429() {
    let report = client_scenario("reqwest-retry-retry-after.yaml").run(reqwest_retry::exponential);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["retry_after"]);
    assert_eq!(
        message(&report, "retry_after"),
        "failed as must_fail expects: call 0: attempt 2 started 0.100s after the head of a 503 \
         with Retry-After: 2 (needed >= 2.000s); call 0: attempt 3 started 0.200s after the \
         head of a 429 with Retry-After: 2 (needed >= 2.000s)"
    );
    assert_eq!(starts(&report), [0, 104, 306]);
    assert_eq!(
        call0(&report),
        (&CallResult::Success("200".into()), Some(308))
    );
}

#[test]
fn a_post_is_retried_on_503_and_commits_twice() {
    let report =
        client_scenario("reqwest-retry-post-without-key.yaml").run(reqwest_retry::exponential);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["effects"]);
    assert_eq!(
        message(&report, "effects"),
        "failed as must_fail expects: call 0 committed 2 effects (at 0.003s, 0.105s)"
    );
    let methods: Vec<&str> = report
        .trace()
        .attempts
        .iter()
        .map(|a| report.trace().name(a.method))
        .collect();
    assert_eq!(methods, ["POST", "POST"]);
    assert_eq!(
        call0(&report),
        (&CallResult::Success("201".into()), Some(106))
    );
}

#[test]
fn the_total_retry_duration_never_expires_in_virtual_time() {
    let report =
        client_scenario("reqwest-retry-total-duration.yaml").run(reqwest_retry::total_duration);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["attempts", "total_time"]);
    assert_eq!(
        message(&report, "attempts"),
        "failed as must_fail expects: call 0 made 21 attempts, expected 6"
    );
    // The 20-retry backstop ended it, 20 virtual seconds in: SystemTime::now() said ~0s.
    assert_eq!(call0(&report), (&failure("Status(503)"), Some(20_000)));
}

#[test]
fn the_retry_limit_from_a_total_duration_is_one_short_of_its_docs() {
    use reqwest_retry::limit_retries_policy;
    // The docs' example: "we would calculate 17 max retries".
    assert_eq!(limit_retries_policy().max_retries(), Some(16));
    let report =
        client_scenario("reqwest-retry-limit-retries.yaml").run(reqwest_retry::limit_retries);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(caught(&report), ["attempts", "conforms_to"]);
    assert_eq!(
        message(&report, "attempts"),
        "failed as must_fail expects: call 0 made 17 attempts, expected 18"
    );
    assert!(
        message(&report, "conforms_to").contains(
            "attempt 17: the call stopped after a retryable 503 with attempts left (policy \
             allows 18 attempts)"
        ),
        "{}",
        report.summary()
    );
    // 1s doubling, exact: the last attempt starts at 2^16 - 1 seconds.
    let gaps = gaps(&report);
    assert_eq!(gaps.len(), 16);
    assert!(gaps.iter().enumerate().all(|(n, gap)| *gap == 1000 << n));
    assert_eq!(call0(&report), (&failure("Status(503)"), Some(65_535_000)));
}

#[test]
fn the_documented_example_jitters_within_bounds_but_is_not_reproducible() {
    let scenario = client_scenario("reqwest-retry-doc-example.yaml");
    let mut runs = Vec::new();
    for _ in 0..3 {
        let report = scenario.run(reqwest_retry::doc_example);
        assert!(report.passed(), "{}", report.summary());
        let gaps = gaps(&report);
        assert!(
            gaps[0] <= 1000 && gaps[1] <= 2000 && gaps[2] <= 4000,
            "{gaps:?}"
        );
        runs.push(gaps);
    }
    // rand's thread generator, unseeded: three runs drawing the same three delays (each
    // from a second or more of milliseconds) would be a chance below 1e-17.
    assert!(runs[0] != runs[1] || runs[1] != runs[2], "{runs:?}");
}

#[test]
fn jitter_present_tells_the_jittered_configuration_from_the_exact_one() {
    let jittered = jitter_scenario("reqwest-retry-doc-example.yaml", 4);
    for _ in 0..5 {
        let report = jittered.run(reqwest_retry::doc_example);
        assert_eq!(jitter(&report).0, Judgement::Passed, "{}", report.summary());
    }
    let exact = jitter_scenario("reqwest-retry-exponential.yaml", 4);
    let report = exact.run(reqwest_retry::exponential);
    assert_eq!(jitter(&report).0, Judgement::Failed, "{}", report.summary());
}

#[test]
fn a_run_without_jitter_is_reproducible() {
    let scenario = client_scenario("reqwest-retry-exponential.yaml");
    let first = scenario.run(reqwest_retry::exponential);
    let second = scenario.run(reqwest_retry::exponential);
    assert_eq!(first.snapshot_text(), second.snapshot_text());
}

// ---- what a middleware cannot express -----------------------------------------------------

/// `yaml`'s body under a scenario header, with the one endpoint `api`.
fn scenario(yaml: &str) -> Scenario {
    let text = format!(
        "version: 1\nname: adapter\nnetwork: {{ latency: 1ms }}\n\
         operation: {{ endpoint: api, path: /items }}\n{yaml}"
    );
    Scenario::from_yaml_str(&text, "adapter.yaml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_reset_is_a_middleware_error_and_reqwest_retry_gives_up_at_once() {
    let scenario =
        scenario("endpoints: { api: { script: [ { fail: reset }, { status: 200 } ] } }\n");
    let report = scenario.run(reqwest_retry::exponential);
    // One attempt: over reqwest's own connector the reset would be a retryable
    // reqwest::Error; through a middleware it is Error::Middleware, which is fatal.
    assert_eq!(report.trace().attempts.len(), 1, "{}", report.summary());
    assert_eq!(report.trace().attempts[0].outcome, AttemptOutcome::Reset);
    let CallResult::Failure(error) = &report.trace().calls[0].result else {
        panic!("{}", report.summary());
    };
    assert!(
        error.starts_with(
            "Error(\"the request to http://api/items failed on the harness's network: "
        ),
        "{error}"
    );
}

// ---- a plain reqwest::Client on the real backend -------------------------------------------

/// What `scenarios/real/reqwest-reset-mid-body.yaml` cannot say: which error kind reqwest
/// surfaced for each fault, and where (sending, or reading the body).
#[test]
fn a_plain_client_sees_each_transport_fault_as_its_io_error_kind() {
    let report = real_scenario("reqwest-reset-mid-body.yaml").run(plain_reqwest::retry_loop);
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        call0(&report).0,
        &CallResult::Success(
            "Fetched { status: 200, retried_on: [Send(Io(ConnectionReset)), \
             Body(Io(UnexpectedEof)), Body(Io(ConnectionReset))] }"
                .into()
        )
    );
    // Each failure ended its connection.
    let conns: Vec<ConnUse> = report.trace().attempts.iter().map(|a| a.conn).collect();
    assert_eq!(conns, [ConnUse::New; 4]);
}

// ---- the adapter --------------------------------------------------------------------------

/// Sends one GET through `env.reqwest_client` with no middleware.
async fn get(env: &Env) -> Result<reqwest::Response, reqwest_middleware::Error> {
    let client = env
        .reqwest_client(|builder| builder)
        .map_err(reqwest_middleware::Error::from)?;
    client.get(env.operation().url.as_str()).send().await
}

#[test]
fn the_response_streams_from_the_attempt_and_names_its_url() {
    let scenario = scenario("endpoints: { api: { script: [ { status: 200, body: hello } ] } }\n");
    // Dropped unread after a second: the attempt ends then, not when the head arrived.
    let report = scenario.run(|env| async move {
        let response = get(&env).await.map_err(|e| e.to_string())?;
        let url = response.url().to_string();
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(response);
        Ok::<_, String>(url)
    });
    let attempt = &report.trace().attempts[0];
    assert_eq!(
        (attempt.head_ms, attempt.end_ms, attempt.end),
        (Some(4), Some(1004), EndKind::Dropped)
    );
    assert_eq!(
        report.trace().calls[0].result,
        CallResult::Success("\"http://api/items\"".into())
    );
    // Read to the end: the attempt ends with its last byte.
    let report = scenario.run(|env| async move {
        let response = get(&env).await.map_err(|e| e.to_string())?;
        response.text().await.map_err(|e| e.to_string())
    });
    let attempt = &report.trace().attempts[0];
    assert_eq!((attempt.end_ms, attempt.end), (Some(4), EndKind::Body));
    assert_eq!(
        report.trace().calls[0].result,
        CallResult::Success("\"hello\"".into())
    );
}

#[test]
fn the_operation_s_headers_and_body_reach_the_endpoint() {
    let scenario = Scenario::from_yaml_str(
        "version: 1\nname: key\nendpoints: { orders: { script: [ { status: 503 }, { status: 201 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: orders, method: POST, path: /orders, body: '{\"sku\":\"C3\"}', \
         idempotency_key: { header: Idempotency-Key } }\n\
         expect: { outcome: success, attempts: 2, same_idempotency_key: true, same_body: true }\n",
        "key.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(reqwest_retry::exponential);
    assert!(report.passed(), "{}", report.summary());
}

#[test]
fn a_streaming_request_body_is_a_clear_error() {
    let scenario = scenario("endpoints: { api: { script: [ { status: 200 } ] } }\n");
    let report = scenario.run(|env| async move {
        let client = env
            .reqwest_client(|builder| builder)
            .map_err(|e| e.to_string())?;
        let body = reqwest::Body::wrap(http_body_util::Full::new(Bytes::from_static(b"{}")));
        let error = match client.post("http://api/items").body(body).send().await {
            Ok(response) => return Err(format!("sent: {}", response.status())),
            Err(error) => error,
        };
        let reqwest_middleware::Error::Middleware(error) = error else {
            return Err(format!("not a middleware error: {error:?}"));
        };
        match error.downcast_ref::<TransportError>() {
            Some(TransportError::StreamingBody { .. }) => Ok(error.to_string()),
            _ => Err(format!("{error:?}")),
        }
    });
    assert_eq!(
        report.trace().calls[0].result,
        CallResult::Success(
            "\"retrylab's reqwest transport sends only bodies held in memory, and the POST \
             request to http://api/items has a streaming body (reqwest::Body::wrap or \
             wrap_stream): make the body from Bytes, a String or a Vec<u8>\""
                .into()
        )
    );
    // Nothing was sent.
    assert!(report.trace().attempts.is_empty());
}

#[test]
fn a_request_timeout_bounds_the_head_and_the_body() {
    // A hang: the attempt is abandoned at the timeout, and the error says so.
    let hang = scenario("endpoints: { api: { script: [ { fail: hang } ] } }\n");
    let report = hang.run(|env| async move {
        let client = env
            .reqwest_client(|builder| builder)
            .map_err(|e| e.to_string())?;
        let sent = client
            .get("http://api/items")
            .timeout(Duration::from_secs(2))
            .send()
            .await;
        match sent {
            Ok(response) => Err(format!("answered: {}", response.status())),
            Err(error) => Ok(error.to_string()),
        }
    });
    assert_eq!(
        report.trace().calls[0].result,
        CallResult::Success(
            "\"the request to http://api/items timed out after 2s (its reqwest timeout)\"".into()
        )
    );
    let attempt = &report.trace().attempts[0];
    assert_eq!(
        (attempt.end_ms, attempt.outcome),
        (Some(2000), AttemptOutcome::Abandoned)
    );
    // A body read after the deadline fails, and a body read before it does not.
    let answered = scenario("endpoints: { api: { script: [ { status: 200, body: late } ] } }\n");
    for (pause, read) in [(500, "Ok(\"late\")"), (3000, "Err(timed out)")] {
        let report = answered.run(move |env| async move {
            let client = env
                .reqwest_client(|builder| builder)
                .map_err(|e| e.to_string())?;
            let response = client
                .get("http://api/items")
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(Duration::from_millis(pause)).await;
            Ok::<_, String>(match response.text().await {
                Ok(text) => format!("Ok({text:?})"),
                Err(error) if timed_out(&error) => "Err(timed out)".to_owned(),
                Err(error) => format!("Err({error:?})"),
            })
        });
        assert_eq!(
            report.trace().calls[0].result,
            CallResult::Success(format!("{read:?}")),
            "{}",
            report.summary()
        );
    }
}

/// Whether `error` or one of its causes is the transport's timeout.
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(TransportError::Timeout { .. }) = error.downcast_ref::<TransportError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

#[test]
fn reqwest_retry_holds_a_failed_response_through_its_sleep() {
    // A 503 with a body: reqwest-retry keeps the response (unread) while it sleeps and drops
    // it when it retries, so the attempt ends when the next starts: gaps of 0. (hyper had
    // the whole short body, so the connection still goes back to the pool.)
    let scenario = scenario(
        "endpoints: { api: { script: [ { status: 503, body: busy, times: 2 }, { status: 200 } ] } }\n",
    );
    let report = scenario.run(reqwest_retry::exponential);
    let attempts = &report.trace().attempts;
    let ends: Vec<(u64, Option<u64>, EndKind, Option<u64>)> = attempts
        .iter()
        .map(|a| (a.start_ms, a.end_ms, a.end, a.conn_id))
        .collect();
    assert_eq!(
        ends,
        [
            (0, Some(104), EndKind::Dropped, Some(1)),
            (104, Some(306), EndKind::Dropped, Some(1)),
            (306, Some(308), EndKind::Body, Some(1)),
        ],
        "{}",
        report.summary()
    );
}

// ---- reqwest 0.12 -------------------------------------------------------------------------

/// The same files on reqwest 0.12 and reqwest-retry 0.8.0: byte-identical traces.
#[cfg(feature = "reqwest-0-12")]
mod reqwest_0_12 {
    use super::*;
    use retrylab::Report;
    use retrylab_tests::clients::reqwest_retry_0_8;

    fn same(file: &str, on_0_13: Report, on_0_12: Report) {
        assert!(on_0_12.passed(), "{file}: {}", on_0_12.summary());
        assert_eq!(
            on_0_12.snapshot_text(),
            on_0_13.snapshot_text(),
            "{file} differs on reqwest 0.12"
        );
    }

    /// `file` run with the client `$client` of each version, compared with [`same`].
    macro_rules! same_on_both {
        ($file:expr, $client:ident) => {{
            let scenario = client_scenario($file);
            same(
                $file,
                scenario.run(reqwest_retry::$client),
                scenario.run(reqwest_retry_0_8::$client),
            );
        }};
    }

    #[test]
    fn the_scenarios_give_the_same_traces_as_on_reqwest_0_13() {
        for file in [
            "reqwest-retry-exponential.yaml",
            "reqwest-retry-retry-after.yaml",
            "reqwest-retry-post-without-key.yaml",
        ] {
            same_on_both!(file, exponential);
        }
        same_on_both!("reqwest-retry-total-duration.yaml", total_duration);
        same_on_both!("reqwest-retry-limit-retries.yaml", limit_retries);
        let report =
            client_scenario("reqwest-retry-doc-example.yaml").run(reqwest_retry_0_8::doc_example);
        assert!(report.passed(), "{}", report.summary());
    }

    #[test]
    fn a_streaming_request_body_is_a_clear_error_on_reqwest_0_12() {
        use retrylab::adapters::reqwest_0_12::TransportError;
        let scenario = scenario("endpoints: { api: { script: [ { status: 200 } ] } }\n");
        let report = scenario.run(|env| async move {
            let client = env
                .reqwest_0_12_client(|builder| builder)
                .map_err(|e| e.to_string())?;
            let body =
                ::reqwest_0_12::Body::wrap(http_body_util::Full::new(Bytes::from_static(b"{}")));
            match client.post("http://api/items").body(body).send().await {
                Ok(response) => Err(format!("sent: {}", response.status())),
                Err(::reqwest_middleware_0_4::Error::Middleware(error)) => {
                    match error.downcast_ref::<TransportError>() {
                        Some(TransportError::StreamingBody { .. }) => Ok(()),
                        _ => Err(format!("{error:?}")),
                    }
                }
                Err(error) => Err(format!("not a middleware error: {error:?}")),
            }
        });
        assert_eq!(
            report.trace().calls[0].result,
            CallResult::Success("()".into())
        );
        assert!(report.trace().attempts.is_empty());
    }
}
