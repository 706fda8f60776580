//! `operation.clients` and `operation.start`: a fleet of client instances on the sim
//! network, each with its own index, connection pool, keys and random substreams, started at
//! seeded instants; the same seed gives a byte-identical trace, and adding clients leaves
//! the first client's draws as they were.

use retrylab::prelude::*;
use retrylab::trace::Attempt;

/// A fleet of `clients` built-in clients with full jitter against a service that answers
/// 503 to every request, `calls` calls each, started as `start` says (a YAML value or "").
fn fleet(clients: u32, calls: u32, start: &str) -> Scenario {
    let start = if start.is_empty() {
        String::new()
    } else {
        format!(", start: {start}")
    };
    let yaml = format!(
        "version: 1\n\
         name: fleet\n\
         endpoints: {{ api: {{ script: [ {{ status: 503 }} ] }} }}\n\
         operation: {{ endpoint: api, calls: {calls}, clients: {clients}{start}, \
         idempotency_key: {{ header: Idempotency-Key }} }}\n\
         client: {{ exponential: {{ initial: 100ms, multiplier: 2, max_attempts: 4, jitter: full }} }}\n"
    );
    Scenario::from_yaml_str(&yaml, "fleet.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn of_client(attempts: &[Attempt], client: u32) -> Vec<(u32, u32, u64)> {
    attempts
        .iter()
        .filter(|a| a.client_id == client)
        .map(|a| (a.call_id, a.n, a.start_ms))
        .collect()
}

#[test]
fn every_client_makes_its_calls_with_its_own_index() {
    let report = fleet(5, 2, "").run_builtin();
    assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
    let trace = report.trace();
    assert_eq!(trace.calls.len(), 10);
    assert_eq!(trace.attempts.len(), 40);
    for client in 0..5 {
        let calls: Vec<u32> = trace
            .calls
            .iter()
            .filter(|c| c.client_id == client)
            .map(|c| c.call_id)
            .collect();
        assert_eq!(calls, [0, 1], "client {client}");
        assert_eq!(
            of_client(&trace.attempts, client).len(),
            8,
            "client {client}"
        );
    }
    // Each client's jitter is its own: two clients do not retry at the same instants.
    assert_ne!(
        of_client(&trace.attempts, 1)
            .iter()
            .map(|a| a.2)
            .collect::<Vec<_>>(),
        of_client(&trace.attempts, 2)
            .iter()
            .map(|a| a.2)
            .collect::<Vec<_>>()
    );
    // The timeline says which client made each attempt.
    assert!(
        trace.timeline().contains("client 4"),
        "{}",
        trace.timeline()
    );
}

#[test]
fn each_client_has_its_own_keys_and_seeds() {
    let scenario = fleet(3, 2, "");
    let report = scenario.run(|env: Env| async move {
        let key = env.operation().idempotency_key.map(|(_, v)| v);
        Ok::<_, ()>((env.client_index(), env.call_index(), key, env.seed("x")))
    });
    let results: Vec<String> = report
        .trace()
        .calls
        .iter()
        .map(|c| format!("{:?}", c.result))
        .collect();
    let mut unique = results.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 6, "{results:?}");
    // Client 0's seed is the one a run of one client gets.
    let alone = fleet(1, 1, "").run(|env: Env| async move { Ok::<_, ()>(env.seed("x")) });
    let seed_alone = format!("{:?}", alone.trace().calls[0].result);
    let fleet_seed = |client: u32| {
        let report = scenario.run(|env: Env| async move { Ok::<_, ()>(env.seed("x")) });
        report
            .trace()
            .calls
            .iter()
            .find(|c| c.client_id == client)
            .map(|c| format!("{:?}", c.result))
    };
    assert_eq!(fleet_seed(0), Some(seed_alone.clone()));
    assert_ne!(fleet_seed(1), Some(seed_alone));
}

#[test]
fn adding_clients_leaves_the_first_clients_draws_alone() {
    let alone = fleet(1, 3, "{ uniform: [0s, 1s] }").run_builtin();
    let among = fleet(20, 3, "{ uniform: [0s, 1s] }").run_builtin();
    assert_eq!(alone.end(), &RunEnd::Completed, "{}", alone.summary());
    assert_eq!(among.end(), &RunEnd::Completed, "{}", among.summary());
    assert_eq!(
        of_client(&alone.trace().attempts, 0),
        of_client(&among.trace().attempts, 0)
    );
}

#[test]
fn starts_are_spread_as_drawn_and_in_a_defined_order() {
    let report = fleet(50, 1, "{ uniform: [0s, 1s] }").run_builtin();
    let calls = &report.trace().calls;
    assert_eq!(calls.len(), 50);
    // Calls are filed as clients start: by start instant, then by client index.
    let order: Vec<(u64, u32)> = calls.iter().map(|c| (c.start_ms, c.client_id)).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    assert!(calls.iter().all(|c| c.start_ms <= 1000));
    let distinct: std::collections::BTreeSet<u64> = calls.iter().map(|c| c.start_ms).collect();
    assert!(distinct.len() > 40, "{distinct:?}");
    // A fixed start delays every client alike.
    let fixed = fleet(3, 1, "2s").run_builtin();
    assert!(fixed.trace().calls.iter().all(|c| c.start_ms == 2000));
}

#[test]
fn the_same_seed_gives_a_byte_identical_trace() {
    let scenario = fleet(200, 2, "{ exponential: { mean: 200ms, max: 2s } }");
    let a = scenario.run_builtin();
    let b = scenario.run_builtin();
    assert_eq!(a.trace().timeline(), b.trace().timeline());
    assert_eq!(a.trace().to_json(), b.trace().to_json());
    let other = scenario.run_builtin_with_seed(scenario.seed + 1);
    assert_ne!(a.trace().timeline(), other.trace().timeline());
}

/// 100 clients starting within the first 20 ms meet a 10 s outage; each retries with
/// exponential backoff from 1 s (`jitter` none or full), five attempts in all.
fn herd(jitter: &str, expect: &str) -> Scenario {
    let yaml = format!(
        "version: 1\n\
         name: herd\n\
         endpoints: {{ api: {{ timeline: [ {{ during: [0s, 10s], status: 503 }} ] }} }}\n\
         operation: {{ endpoint: api, clients: 100, start: {{ uniform: [0s, 20ms] }} }}\n\
         client: {{ exponential: {{ initial: 1s, multiplier: 2, max_delay: 1m, max_attempts: 5, jitter: {jitter} }} }}\n\
         expect: {expect}\n"
    );
    Scenario::from_yaml_str(&yaml, "herd.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn verdict_of<'a>(report: &'a Report, check: &str) -> &'a Verdict {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

#[test]
fn retry_waves_catch_the_fleet_without_jitter_and_pass_full_jitter_on_20_seeds() {
    let waves = "{ retry_waves: { k: 50, window: 100ms, at_most: 0 } }";
    let lockstep = herd("none", waves);
    let jittered = herd("full", waves);
    for seed in 1..=20 {
        let caught = lockstep.run_builtin_with_seed(seed);
        let v = verdict_of(&caught, "retry_waves");
        assert!(v.judgement == Judgement::Failed, "seed {seed}: {v:?}");
        // Four retries, each one wave of all 100 clients.
        assert!(
            v.message.starts_with("4 waves of 50 or more"),
            "seed {seed}: {}",
            v.message
        );
        let passed = jittered.run_builtin_with_seed(seed);
        let v = verdict_of(&passed, "retry_waves");
        assert!(v.judgement == Judgement::Passed, "seed {seed}: {v:?}");
    }
}

#[test]
fn retry_waves_are_not_judged_without_a_retry() {
    let yaml = "version: 1\nname: calm\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 10 }\n\
                expect: { retry_waves: { k: 2, window: 1s, at_most: 0 } }\n";
    let report = Scenario::from_yaml_str(yaml, "calm.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin();
    let v = verdict_of(&report, "retry_waves");
    assert!(v.judgement == Judgement::NotJudged, "{v:?}");
}

#[test]
fn amplification_is_requests_per_call_over_the_fleet() {
    // Every call makes five attempts: 500 requests for 100 calls.
    let report = herd("none", "{ amplification: { at_most: 3 } }").run_builtin();
    let v = verdict_of(&report, "amplification");
    assert!(v.judgement == Judgement::Failed, "{v:?}");
    assert!(
        v.message
            .starts_with("the endpoints received 500 requests for 100 calls, 5.000 per call"),
        "{}",
        v.message
    );
    let report = herd("none", "{ amplification: { at_most: 5 } }").run_builtin();
    assert!(verdict_of(&report, "amplification").passed());
    // Every call's five attempts are also its 99th percentile.
    let report = herd("none", "{ amplification: { p99_at_most: 4 } }").run_builtin();
    let v = verdict_of(&report, "amplification");
    assert!(v.judgement == Judgement::Failed, "{v:?}");
    assert!(
        v.message.starts_with(
            "the 99th percentile of attempts per call is 5 (of 100 calls; max 5), more than 4 \
             allowed"
        ),
        "{}",
        v.message
    );
    let report = herd("none", "{ amplification: { at_most: 5, p99_at_most: 5 } }").run_builtin();
    let v = verdict_of(&report, "amplification");
    assert!(v.passed(), "{v:?}");
    assert!(
        v.message.ends_with("p99 5, max 5 (p99 at most 5 allowed)"),
        "{}",
        v.message
    );
}

#[test]
fn amplification_p99_catches_a_few_calls_the_total_hides() {
    // The first 8 requests of 100 clients get 503 and retry once: 108 requests for 100
    // calls is within 1.1 per call, but the 99th percentile call made 2 attempts.
    let yaml = "version: 1\nname: few\n\
                endpoints: { api: { script: [ { status: 503, times: 8 }, { status: 200 } ] } }\n\
                operation: { endpoint: api, clients: 100 }\n\
                client: { fixed: { delay: 1s, max_attempts: 3 } }\n\
                expect: { amplification: { at_most: 1.1, p99_at_most: 1 } }\n";
    let report = Scenario::from_yaml_str(yaml, "few.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin();
    assert_eq!(report.trace().attempts.len(), 108, "{}", report.summary());
    let v = verdict_of(&report, "amplification");
    assert!(v.judgement == Judgement::Failed, "{v:?}");
    assert_eq!(
        v.message,
        "the 99th percentile of attempts per call is 2 (of 100 calls; max 2), more than 1 allowed"
    );
    // Neither bound: a load error naming the key.
    let errors = Scenario::from_yaml_str(
        &yaml.replace("{ at_most: 1.1, p99_at_most: 1 }", "{}"),
        "few.yaml",
    )
    .err()
    .unwrap_or_else(|| panic!("an empty amplification loaded"))
    .to_string();
    assert!(
        errors.contains("expect.amplification: `amplification` bounds nothing"),
        "{errors}"
    );
    let errors = Scenario::from_yaml_str(
        &yaml.replace("p99_at_most: 1", "p99_at_most: 0"),
        "few.yaml",
    )
    .err()
    .unwrap_or_else(|| panic!("p99_at_most: 0 loaded"))
    .to_string();
    assert!(
        errors.contains("expect.amplification.p99_at_most: 0 is below 1"),
        "{errors}"
    );
}

#[test]
fn a_fleet_report_shows_outcomes_and_attempts_per_bucket() {
    let report = herd("none", "{ amplification: { at_most: 5 } }").run_builtin();
    let view = report
        .trace()
        .fleet()
        .unwrap_or_else(|| panic!("no fleet view"));
    assert_eq!((view.clients, view.calls, view.success), (100, 100, 100));
    // 500 ms buckets over the 15 s run (at most 40): the first attempts, then the four
    // waves of retries.
    assert_eq!(view.bucket_ms, 500);
    let busy: Vec<(u64, u64, u64)> = view
        .buckets
        .iter()
        .filter(|b| b.attempts > 0)
        .map(|b| (b.from_ms, b.attempts, b.retries))
        .collect();
    assert_eq!(
        busy,
        [
            (0, 100, 0),
            (1000, 100, 100),
            (3000, 100, 100),
            (7000, 100, 100),
            (15000, 100, 100)
        ]
    );
    let summary = report.summary();
    assert!(
        summary
            .contains("fleet:\n  100 clients, 100 calls: 100 success (100.0%), 0 failure (0.0%)"),
        "{summary}"
    );
    assert!(report.snapshot_text().contains("\nfleet:\n"));
    assert!(
        report
            .trace()
            .to_json()
            .contains(r#""fleet":{"clients":100"#)
    );
    // One client: no view, in the text or the JSON.
    let alone = fleet(1, 2, "").run_builtin();
    assert!(alone.trace().fleet().is_none());
    assert!(!alone.snapshot_text().contains("fleet:"));
    assert!(!alone.trace().to_json().contains("fleet"));
}

#[test]
fn attempts_of_a_fleet_on_its_own_hyper_clients_are_rebuilt_as_each_clients() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioTimer};

    let report = fleet(4, 2, "{ uniform: [0s, 100ms] }").run(|env: Env| async move {
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build(env.connector());
        let response = client
            .request(env.operation().request())
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        // Calls apart in time: a rebuilt attempt's call is the one running when it started.
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        Ok::<_, String>(status)
    });
    let attempts = &report.trace().attempts;
    assert_eq!(attempts.len(), 8);
    assert!(attempts.iter().all(|a| a.reconstructed));
    for client in 0..4 {
        let calls: Vec<u32> = of_client(attempts, client).iter().map(|a| a.0).collect();
        assert_eq!(
            calls,
            [0, 1],
            "client {client}: {}",
            report.trace().timeline()
        );
    }
}

#[test]
fn retry_waves_larger_than_the_fleet_are_a_load_error() {
    let yaml = "version: 1\nname: small\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 3 }\n\
                expect: { retry_waves: { k: 5, window: 1s, at_most: 0 } }\n";
    let errors = Scenario::from_yaml_str(yaml, "small.yaml")
        .err()
        .unwrap_or_else(|| panic!("a wave larger than the fleet loaded"))
        .to_string();
    assert!(
        errors.starts_with(
            "small.yaml:5:29 expect.retry_waves.k: a wave is 5 or more clients retrying, and \
             the fleet has 3 (`operation.clients`): no run could show one"
        ),
        "{errors}"
    );
    assert!(
        errors.contains("at most 3 (`operation.clients`)"),
        "{errors}"
    );
    // `k` equal to the fleet loads.
    assert!(Scenario::from_yaml_str(&yaml.replace("k: 5", "k: 3"), "small.yaml").is_ok());
}

#[test]
fn retry_waves_are_not_judged_without_a_shared_failure() {
    // Only the first request fails: one client retries, no window holds the failures of
    // two, so no wave could have formed and the check cannot pass on it.
    let yaml = "version: 1\nname: one failure\n\
                endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
                operation: { endpoint: api, clients: 10 }\n\
                client: { fixed: { delay: 1s, max_attempts: 2 } }\n\
                expect: { retry_waves: { k: 2, window: 100ms, at_most: 0 } }\n";
    let report = Scenario::from_yaml_str(yaml, "one.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin();
    assert_eq!(report.trace().attempts.len(), 11, "{}", report.summary());
    let v = verdict_of(&report, "retry_waves");
    assert!(v.judgement == Judgement::NotJudged, "{v:?}");
    assert!(
        v.message.contains("never saw a shared failure"),
        "{}",
        v.message
    );
    // The full-jitter herd shared its first failure: judged, and passed.
    let passed = herd(
        "full",
        "{ retry_waves: { k: 50, window: 100ms, at_most: 0 } }",
    )
    .run_builtin();
    let v = verdict_of(&passed, "retry_waves");
    assert!(v.passed(), "{v:?}");
    assert!(
        v.message
            .contains("1 shared failure, the first of 100 clients"),
        "{}",
        v.message
    );
}

#[test]
fn effects_are_judged_per_call_of_each_client() {
    // Every request commits: with keys, three clients' single calls commit once each.
    let yaml = "version: 1\nname: effects\n\
                endpoints: { api: { script: [ { status: 201, commit: arrival } ] } }\n\
                operation: { endpoint: api, method: POST, clients: 3, \
                idempotency_key: { header: Idempotency-Key } }\n\
                client: { fixed: { delay: 1s, max_attempts: 2 } }\n\
                expect: { effects: exactly_once }\n";
    let scenario = Scenario::from_yaml_str(yaml, "effects.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin();
    let v = verdict_of(&report, "effects");
    assert!(v.passed(), "{v:?}\n{}", report.snapshot_text());
    let clients: Vec<(u32, Option<u32>)> = report
        .trace()
        .effects
        .iter()
        .map(|e| (e.client_id, e.call_id))
        .collect();
    assert_eq!(clients, [(0, Some(0)), (1, Some(0)), (2, Some(0))]);
    assert!(report.snapshot_text().contains("  client 2  call 0"));
    // Without keys the harness's tags name each request's client and call.
    let unkeyed = Scenario::from_yaml_str(
        &yaml.replace(
            "idempotency_key: { header: Idempotency-Key }",
            "call_tag: true",
        ),
        "effects.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = unkeyed.run_builtin();
    assert!(verdict_of(&report, "effects").passed());
}

#[test]
fn a_request_is_late_only_after_its_own_clients_call_returned() {
    // Clients finish at different instants: a request of one client's call 0 is not late
    // because another client's call 0 had returned.
    let report = herd("full", "{ late_requests: 0 }").run_builtin();
    assert!(
        report.trace().late_requests.is_empty(),
        "{}",
        report.summary()
    );
    assert!(verdict_of(&report, "late_requests").passed());
}

#[test]
fn each_client_of_a_fleet_runs_its_calls_concurrency_at_a_time() {
    let yaml = "version: 1\nname: concurrent fleet\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 3, calls: 4, concurrency: 2, start: 500ms }\n";
    let scenario = Scenario::from_yaml_str(yaml, "c.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(|_env: Env| async move {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        Ok::<_, ()>(())
    });
    let starts: Vec<(u32, u32, u64)> = report
        .trace()
        .calls
        .iter()
        .map(|c| (c.client_id, c.call_id, c.start_ms))
        .collect();
    // All three start at 500ms, each with two calls; each returning call starts the next.
    assert_eq!(
        starts,
        [
            (0, 0, 500),
            (0, 1, 500),
            (1, 0, 500),
            (1, 1, 500),
            (2, 0, 500),
            (2, 1, 500),
            (0, 2, 1500),
            (0, 3, 1500),
            (1, 2, 1500),
            (1, 3, 1500),
            (2, 2, 1500),
            (2, 3, 1500),
        ]
    );
}

#[test]
fn late_requests_are_each_clients_own() {
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use std::time::Duration;

    // Every call leaves a task behind that sends a request at 100ms on the client's own
    // hyper client (no call tag). Clients 1 and 2 returned at 0s, so theirs are late;
    // client 0's call runs until 1s, so its request is not, whatever the others did.
    let yaml = "version: 1\nname: late fleet\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 3 }\ndrain: 10s\n\
                expect: { late_requests: 2 }\n";
    let scenario = Scenario::from_yaml_str(yaml, "late.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(|env: Env| async move {
        let slow = env.client_index() == 0;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
                .pool_timer(TokioTimer::new())
                .build(env.connector());
            let _ = client.request(env.operation().request()).await;
        });
        if slow {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Ok::<_, String>(())
    });
    assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 3, "{}", trace.timeline());
    let late: Vec<(u32, u32, u64)> = trace
        .late_requests
        .iter()
        .map(|l| (l.client_id, l.call_id, l.at_ms))
        .collect();
    assert_eq!(late, [(1, 0, 100), (2, 0, 100)], "{}", report.summary());
    assert!(verdict_of(&report, "late_requests").passed());
    let text = report.snapshot_text();
    assert!(
        text.contains(
            "late requests:\n  t=0.100s  api  client 1 call 0\n  t=0.100s  api  client 2 call 0\n"
        ),
        "{text}"
    );
    assert!(trace.to_json().contains(r#""client_id":2,"call_id":0"#));
}

#[test]
fn a_key_naming_a_client_the_fleet_lacks_names_no_call() {
    // Each of two clients sends its own key in place of the harness's: `key-7-3` looks like
    // client 7's call 3, but the fleet has two clients, so the effect goes by the request's
    // tags to the client and call that sent it.
    let yaml = "version: 1\nname: keys\n\
                endpoints: { api: { script: [ { status: 201, commit: arrival } ] } }\n\
                operation: { endpoint: api, method: POST, clients: 2, \
                idempotency_key: { header: Idempotency-Key } }\n";
    let scenario = Scenario::from_yaml_str(yaml, "keys.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(|env: Env| async move {
        let mut request = env.operation().request();
        request
            .headers_mut()
            .insert("idempotency-key", http::HeaderValue::from_static("key-7-3"));
        let response = env
            .http_client()
            .request(request)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(response.status().as_u16())
    });
    assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
    let mut effects: Vec<(u32, Option<u32>)> = report
        .trace()
        .effects
        .iter()
        .map(|e| (e.client_id, e.call_id))
        .collect();
    effects.sort();
    assert_eq!(
        effects,
        [(0, Some(0)), (1, Some(0))],
        "{}",
        report.summary()
    );
    // The harness's own keys name their client in the same fleet.
    let keyed = scenario.run(|env: Env| async move {
        let response = env
            .http_client()
            .request(env.operation().request())
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(response.status().as_u16())
    });
    let keys: Vec<(u32, Option<u32>, String)> = keyed
        .trace()
        .effects
        .iter()
        .map(|e| {
            let key = e.key.map(|k| keyed.trace().name(k).to_owned());
            (e.client_id, e.call_id, key.unwrap_or_default())
        })
        .collect();
    assert_eq!(
        keys,
        [
            (0, Some(0), "key-0".to_owned()),
            (1, Some(0), "key-1-0".to_owned())
        ]
    );
}

#[test]
fn request_checks_compare_each_clients_calls_apart() {
    // Each client's call retries with its own key (`key-0`, `key-1-0`, `key-2-0`): the key
    // stays the same within a call, though the fleet's calls 0 carry three keys.
    let report = fleet(3, 1, "").run_builtin();
    assert_eq!(report.trace().attempts.len(), 12, "{}", report.summary());
    let yaml = "version: 1\nname: keys\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
                operation: { endpoint: api, method: POST, clients: 3, body: x, \
                idempotency_key: { header: Idempotency-Key } }\n\
                client: { fixed: { delay: 100ms, max_attempts: 3 } }\n\
                expect: { same_idempotency_key: true, same_body: true }\n";
    let report = Scenario::from_yaml_str(yaml, "keys.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin();
    for check in ["same_idempotency_key", "same_body"] {
        let v = verdict_of(&report, check);
        assert!(v.passed(), "{v:?}\n{}", report.summary());
        assert!(v.message.contains("requests: 9"), "{}", v.message);
    }
}

#[test]
fn the_adaptive_fleets_derived_bounds_catch_standard_mode() {
    // scenarios/fleets/aws-adaptive-settles-under-a-rate-limiter.yaml with standard mode in
    // adaptive mode's place: no client-side limiter, so the fleet neither settles under the
    // bucket's rate nor keeps within twice what it admits.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/fleets/aws-adaptive-settles-under-a-rate-limiter.yaml"
    );
    let adaptive = Scenario::load(path).unwrap_or_else(|e| panic!("{e}"));
    let mut standard = adaptive.clone();
    standard.client = Scenario::from_yaml_str(
        "version: 1\nname: s\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
         client: { aws_standard: { max_attempts: 5 } }\n",
        "s.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .client;
    standard.snapshot = false;
    // The seeds the file's comment cites.
    for seed in 0..=5 {
        let report = adaptive.run_builtin_with_seed(seed);
        for check in ["max_rate", "amplification"] {
            let v = verdict_of(&report, check);
            assert!(v.passed(), "adaptive, seed {seed}: {v:?}");
        }
        let report = standard.run_builtin_with_seed(seed);
        for check in ["max_rate", "amplification"] {
            let v = verdict_of(&report, check);
            assert!(
                v.judgement == Judgement::Failed,
                "standard, seed {seed}: {v:?}"
            );
        }
    }
}

#[test]
fn a_fleet_on_the_real_or_turmoil_backend_is_refused_not_run_as_one_client() {
    use retrylab::scenario::BackendKind;

    for (backend, word) in [
        (BackendKind::Real, "real"),
        (BackendKind::Turmoil, "turmoil"),
    ] {
        let mut scenario = fleet(3, 1, "{ uniform: [0s, 1s] }");
        scenario.backend = backend;
        // Loading and validating say which key and which backend.
        let errors = scenario
            .validate()
            .err()
            .unwrap_or_else(|| panic!("a fleet on {word} validated"))
            .to_string();
        for key in [
            "operation.clients: a fleet of clients (`clients`)",
            "operation.start: `start`",
        ] {
            assert!(
                errors.contains(&format!("{key} on `backend: {word}` is not supported yet")),
                "{errors}"
            );
        }
        // Both ways to run give a not-runnable report with no attempt, not a run of one client.
        let builtin = scenario.run_builtin();
        let closure = scenario.run(|_env: Env| async move { Ok::<_, ()>(()) });
        for report in [builtin, closure] {
            assert_eq!(report.end(), &RunEnd::NotRunnable, "{}", report.summary());
            assert!(report.trace().calls.is_empty());
            assert!(report.trace().attempts.is_empty());
            assert!(
                report.summary().contains(&format!(
                    "operation.clients: a fleet of clients (`clients`) on `backend: {word}` is \
                     not supported yet"
                )),
                "{}",
                report.summary()
            );
        }
    }
    // A YAML file says the same at the key's line.
    let yaml = "version: 1\nname: x\nbackend: turmoil\nendpoints: { api: {} }\n\
                operation: { endpoint: api, clients: 2 }\n";
    let errors = Scenario::from_yaml_str(yaml, "x.yaml")
        .err()
        .unwrap_or_else(|| panic!("a turmoil fleet loaded"))
        .to_string();
    assert!(
        errors.contains(
            "x.yaml:5:29 operation.clients: a fleet of clients (`clients`) on `backend: turmoil` \
             is not supported yet"
        ),
        "{errors}"
    );
}

/// The guide's Fleets example (docs/guide/fleets.md) is
/// `scenarios/fleets/twenty-clients-spread-starts-full-jitter.yaml` (the guide shows the file
/// after its schema line), and what the guide says of it holds:
/// 123 requests for 20 calls with seed 0, and with `jitter: none`, `retry_waves` failing
/// with the text it quotes.
#[test]
fn the_guides_fleet_example_is_the_scenario_file_and_its_figures_hold() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let file = "scenarios/fleets/twenty-clients-spread-starts-full-jitter.yaml";
    let yaml = std::fs::read_to_string(format!("{root}/{file}")).expect("the scenario file");
    let guide = std::fs::read_to_string(format!("{root}/docs/guide/fleets.md"))
        .expect("the guide's chapter");
    let (schema_line, shown) = yaml.split_once('\n').expect("more than one line");
    assert!(
        schema_line.starts_with("# yaml-language-server:"),
        "{schema_line}"
    );
    assert!(
        guide.contains(&format!("```yaml\n{shown}```")),
        "the guide's Fleets example differs from {file}"
    );
    assert!(
        guide.contains(&format!("](../../{file})")),
        "the guide links {file}"
    );

    let report = Scenario::from_yaml_str(&yaml, file)
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin_with_seed(0);
    assert!(report.passed(), "{}", report.summary());
    let requests = "the endpoints received 123 requests for 20 calls";
    let v = verdict_of(&report, "amplification");
    assert!(v.message.starts_with(requests), "{}", v.message);
    assert!(
        guide.contains("It passes (123 requests for 20 calls with seed 0)"),
        "the guide quotes the figure the run gives"
    );

    let lockstep = yaml.replacen("jitter: full", "jitter: none", 1);
    assert_ne!(lockstep, yaml);
    let report = Scenario::from_yaml_str(&lockstep, file)
        .unwrap_or_else(|e| panic!("{e}"))
        .run_builtin_with_seed(0);
    let v = verdict_of(&report, "retry_waves");
    assert!(v.judgement == Judgement::Failed, "{v:?}");
    let quoted = "4 waves of 10 or more of the 20 clients retrying within 0.100s, at most 0 \
                  allowed: 20 clients retried from 1.001s to 1.050s; ";
    assert!(v.message.starts_with(quoted), "{}", v.message);
    assert!(
        guide.contains(&format!("retry_waves: {quoted}...")),
        "the guide quotes the failure the run gives"
    );
}
