//! The turmoil backend: the scenario's endpoints as hosts of a turmoil simulation, the
//! client in a host of its own, on turmoil's virtual time.

use retrylab::scenario::BackendKind;
use retrylab::trace::AttemptOutcome;
use retrylab::{Report, RunEnd, Scenario};
use retrylab_tests::listed;

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "turmoil.yaml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_reference_client_retries_across_turmoil_hosts() {
    let s = scenario(
        "version: 1\nname: turmoil burst\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 4 } }\n\
         expect: { attempts: 3, outcome: success, gaps_each: { within: [100ms, 100ms] } }\n",
    );
    let report = s.run_builtin();
    report.assert();
    let trace = report.trace();
    assert_eq!(
        trace.header[0],
        ("backend".to_owned(), "turmoil".to_owned())
    );
    let statuses: Vec<_> = trace.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        statuses,
        [
            AttemptOutcome::Status(503),
            AttemptOutcome::Status(503),
            AttemptOutcome::Status(200)
        ]
    );
    // One connection, reused: the endpoint's ids and the client's agree.
    assert!(trace.attempts.iter().all(|a| a.conn_id == Some(1)));
}

#[test]
fn a_client_on_the_connector_is_rebuilt_from_the_endpoints_ledger() {
    let s = scenario(
        "version: 1\nname: connector\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
         network: { latency: 2ms }\n\
         operation: { endpoint: api, path: /orders }\n\
         expect: { attempts: 2 }\n",
    );
    let report = s.run(|env| async move {
        use http_body_util::{BodyExt, Empty};
        use hyper_util::client::legacy::Client;
        use hyper_util::rt::TokioExecutor;
        let client: Client<_, Empty<bytes::Bytes>> =
            Client::builder(TokioExecutor::new()).build(env.connector());
        let mut statuses = Vec::new();
        for _ in 0..2 {
            let uri: http::Uri = env.operation().url.parse().map_err(|e| format!("{e}"))?;
            let response = client.get(uri).await.map_err(|e| e.to_string())?;
            statuses.push(response.status().as_u16());
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        Ok::<_, String>(statuses)
    });
    report.assert();
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 2);
    assert!(trace.attempts.iter().all(|a| a.reconstructed));
    assert_eq!(trace.attempts[0].outcome, AttemptOutcome::Status(503));
    assert_eq!(trace.attempts[1].outcome, AttemptOutcome::Status(200));
    // The endpoint's instants: the second request arrived 50ms after the first answer
    // left, plus one crossing each way.
    let gap = trace.attempts[1].start_ms - trace.attempts[0].end_ms.unwrap_or_default();
    assert!((50..=56).contains(&gap), "{gap}");
}

#[test]
fn what_turmoil_cannot_make_is_refused_where_it_is_written() {
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: refused\nbackend: turmoil\n\
         endpoints:\n  api:\n    connect: [ { action: refuse } ]\n    script: [ { fail: reset } ]\n\
         network:\n  latency: { uniform: [1ms, 5ms] }\n  faults: [ { at: 1s, partition: api, for: 1s } ]\n\
         operation: { endpoint: api }\n",
        "refused.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        errors.contains(
            "refused.yaml:9:12 network.latency: a latency distribution of the sim network cannot be \
             made on the turmoil backend"
        ),
        "{errors}"
    );
    assert!(
        errors.contains(
            "refused.yaml:10:34 network.faults[0].partition: a `network.faults` partition holds \
             segments until it heals"
        ),
        "{errors}"
    );
    // Refused connects and resets are made: the endpoint notes them for the connector.
    // A `network.faults` crash is a crash of the endpoint's host there.
    assert!(!errors.contains("endpoints.api"), "{errors}");
}

#[test]
fn touching_holds_written_out_of_order_hold_the_link_throughout() {
    // Regression: the later hold first in the file once let the earlier one's end, at the
    // same 100ms, release the link the later one had just held, so attempt 2 went on at 100ms.
    let s = scenario(
        "version: 1\nname: touching holds\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api, path: /orders }\n\
         client: { fixed: { delay: 50ms, max_attempts: 3, attempt_timeout: 500ms } }\n\
         turmoil:\n  hold: [ { at: 100ms, endpoint: api, for: 100ms }, \
         { at: 20ms, endpoint: api, for: 80ms } ]\n\
         expect: { outcome: success, attempts: 2, total_time: { within: [201ms, 201ms] } }\n",
    );
    let report = s.run_builtin();
    println!("{}", report.summary());
    report.assert();
}

#[test]
fn a_hold_and_a_partition_of_one_endpoint_must_not_overlap() {
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: both\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 200 } ] }, other: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api }\n\
         turmoil:\n  hold: [ { at: 0ms, endpoint: api, for: 100ms } ]\n  \
         partition: [ { at: 100ms, endpoint: api, for: 50ms }, { at: 50ms, endpoint: other, for: 50ms }, \
         { at: 99ms, endpoint: api, for: 1ms } ]\n",
        "both.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        errors.contains(
            "both.yaml:8:105 turmoil.partition[2].at: this partition of `api` overlaps \
             turmoil.hold[0]"
        ),
        "{errors}"
    );
    // Touching (ends at 100ms, starts at 100ms) and another endpoint's are fine.
    assert_eq!(
        errors.matches("overlaps turmoil.hold").count(),
        1,
        "{errors}"
    );
}

#[test]
fn the_default_virtual_time_limit_is_ten_minutes_on_turmoil() {
    let mut s = scenario(
        "version: 1\nname: forever\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nclient: { fixed: { delay: 1m, max_attempts: 100000 } }\n",
    );
    s.backend = BackendKind::Turmoil;
    assert_eq!(s.run_limits().max_virtual_time.as_ms(), 600_000);
    s.backend = BackendKind::Sim;
    assert!(s.run_limits().max_virtual_time.as_ms() > 600_000);
}

#[test]
fn a_turmoil_run_is_the_same_on_every_run() {
    let s = scenario(
        "version: 1\nname: twice\nbackend: turmoil\nseed: 11\n\
         endpoints: { api: { script: [ { status: 503, times: 3 }, { fail: hang }, { status: 200 } ] } }\n\
         network: { latency: 3ms }\n\
         operation: { endpoint: api, calls: 2 }\n\
         client: { exponential: { initial: 100ms, jitter: full, max_attempts: 6, attempt_timeout: 1s } }\n",
    );
    let first = s.run_builtin();
    let second = s.run_builtin();
    assert_eq!(first.end(), &RunEnd::Completed, "{}", first.summary());
    assert!(first.trace().attempts.len() >= 5, "{}", first.summary());
    assert_eq!(first.trace().to_json(), second.trace().to_json());
    assert_eq!(first.summary(), second.summary());
}

// ---- library files on turmoil ----------------------------------------------------------------

/// What a run's judgement rests on: its end, each attempt's outcome, and each verdict's
/// check and judgement.
fn judged(report: &Report) -> String {
    let outcomes: Vec<String> = report
        .trace()
        .attempts
        .iter()
        .map(|a| format!("{:?}", a.outcome))
        .collect();
    let verdicts: Vec<String> = report
        .verdicts()
        .iter()
        .map(|v| format!("{}: {:?}", v.check, v.judgement))
        .collect();
    format!(
        "end {:?}, {} attempts [{}], verdicts [{}]",
        report.end(),
        outcomes.len(),
        outcomes.join(", "),
        verdicts.join(", ")
    )
}

#[test]
fn the_listed_library_files_judge_alike_on_sim_and_turmoil() {
    let files = listed::files("turmoil_backend.txt");
    assert!(files.len() >= 5, "{} files listed", files.len());
    let differing: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let sim = listed::run_on(file, BackendKind::Sim);
            let turmoil = listed::run_on(file, BackendKind::Turmoil);
            let same = judged(&sim) == judged(&turmoil);
            (!same || !turmoil.passed()).then(|| {
                format!(
                    "{file}:\n  sim:     {}\n  turmoil: {}\n{}",
                    judged(&sim),
                    judged(&turmoil),
                    turmoil.summary()
                )
            })
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} files differ on turmoil or fail there:\n{}",
        differing.len(),
        files.len(),
        differing.join("\n")
    );
}

#[test]
fn a_panic_in_a_task_the_client_spawned_fails_the_run() {
    let s = scenario(
        "version: 1\nname: swallowed\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n",
    );
    let report = s.run(|env| async move {
        // tokio catches this panic inside the client's host; turmoil never sees it.
        let task = tokio::spawn(async { panic!("a background task broke") });
        let _ = task.await;
        let response = env.http_client().request(env.operation().request()).await;
        response
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
    });
    assert!(!report.passed());
    assert_eq!(report.end(), &RunEnd::Panicked, "{}", report.summary());
    assert!(
        report.summary().contains("a background task broke"),
        "{}",
        report.summary()
    );
}

#[test]
fn a_wait_longer_than_turmoil_steps_through_in_time_says_why() {
    let s = scenario(
        "version: 1\nname: long wait\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 503 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 1d, max_attempts: 2 } }\n\
         limits: { max_virtual_time: 2d, wall: 1s }\n",
    );
    let report = s.run_builtin();
    assert_eq!(report.end(), &RunEnd::WallLimit, "{}", report.summary());
    let summary = report.summary();
    assert!(
        summary.contains("turmoil steps every host once per millisecond of virtual time"),
        "{summary}"
    );
    // What happened before the limit is still there.
    assert_eq!(report.trace().attempts.len(), 1, "{summary}");
}

#[test]
fn an_endpoint_crashed_in_both_lists_is_refused_where_the_turmoil_crash_is_written() {
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: two lists\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\n\
         network: { faults: [ { at: 1s, crash: api, restart_after: 1s } ] }\n\
         turmoil: { crash: [ { at: 5s, endpoint: api } ] }\n\
         operation: { endpoint: api }\n",
        "both.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        errors.contains(
            "turmoil.crash[0].endpoint: `api` also crashes under `network.faults`: write an \
             endpoint's crashes in one of the two lists"
        ),
        "{errors}"
    );
}

#[test]
fn a_turmoil_latency_turmoil_cannot_draw_is_refused_where_it_is_written() {
    for (latency, why) in [
        (
            "{ uniform: [1ms, 5ms] }",
            "a uniform latency cannot be made on its links",
        ),
        (
            "{ lognormal: { median: 5ms, sigma: 0.5 } }",
            "a lognormal latency cannot be made on its links",
        ),
    ] {
        let errors = Scenario::from_yaml_str(
            &format!(
                "version: 1\nname: drawn\nbackend: turmoil\n\
                 endpoints: {{ api: {{ script: [ {{ status: 200 }} ] }} }}\n\
                 turmoil:\n  latency: {latency}\n\
                 operation: {{ endpoint: api }}\n"
            ),
            "drawn.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            errors.contains("drawn.yaml:6:12 turmoil.latency: "),
            "{errors}"
        );
        assert!(errors.contains(why), "{errors}");
    }
    // A fixed one is every link's, and the network's may not say otherwise.
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: twice\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\n\
         network: { latency: 2ms }\n\
         turmoil: { latency: 5ms }\n\
         operation: { endpoint: api }\n",
        "twice.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        errors.contains("write the links' latency in one place"),
        "{errors}"
    );
}

#[test]
fn a_request_held_past_its_attempt_timeout_reaches_hypers_server_with_the_fin_and_is_dropped() {
    // Attempt 2 (104ms) is held with its link from 50ms to 550ms; the client abandons it at
    // 304ms and closes connection 1, whose FIN is held behind the request. At the release
    // both reach the endpoint in one step. hyper's HTTP/1 server (half-close off, its
    // default) parses the request head, makes the service's future, reads on, finds the end
    // of the stream in the middle of a message and ends the connection with an "incomplete
    // message" error, dropping that future before its first poll: the endpoint, which
    // records a request when its service first runs, never sees it. The sim network's
    // partitions, which hold data the same way, do the same
    // (scenarios/transport/partition-outlasts-attempt-timeout.yaml).
    let s = scenario(
        "version: 1\nname: held past the timeout\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api, path: /orders }\n\
         client: { fixed: { delay: 100ms, max_attempts: 3, attempt_timeout: 200ms } }\n\
         turmoil: { hold: [ { at: 50ms, endpoint: api, for: 500ms } ] }\n\
         expect: { outcome: success, attempts: 3, requests_received: 2, \
         total_time: { within: [553ms, 553ms] } }\n",
    );
    let report = s.run_builtin();
    report.assert();
    let trace = report.trace();
    let outcomes: Vec<_> = trace.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes,
        [
            AttemptOutcome::Status(503),
            AttemptOutcome::Abandoned,
            AttemptOutcome::Status(200)
        ]
    );
    // The held FIN reached the endpoint at the release, and the request with it did not.
    let text = report.snapshot_text();
    assert!(
        text.contains("t=0.550s  conn 1  api  FIN by client"),
        "{text}"
    );
}

// ---- a crash's own instant ---------------------------------------------------------------

/// `yaml` run with its built-in client on `backend`.
fn run_on(yaml: &str, backend: BackendKind) -> Report {
    let mut s = scenario(yaml);
    s.backend = backend;
    s.run_builtin()
}

#[test]
fn a_retry_reaching_the_endpoint_at_the_instant_it_crashes_finds_it_down_on_both_backends() {
    // Latency 1ms each way, 100ms between attempts, a crash at 105ms for 100ms with the
    // script kept. Attempt 1 is answered 503 at 4ms; attempt 2 reaches api exactly at 105ms,
    // the crash's instant: on the pooled connection its request arrives then, and with one
    // request a connection its SYN does. Either way api is down: the request is not admitted
    // (the 200 is not consumed), and the connection is reset with the crash's others. Attempt
    // 3, after the bounce, gets the 200: three attempts, two requests received.
    let timeline = "network: { latency: 1ms, faults: [ { at: 105ms, crash: api, restart_after: 100ms } ] }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 4, attempt_timeout: 1s } }\n\
         expect: { outcome: success, attempts: 3, requests_received: 2 }\n";
    for (what, api) in [
        (
            "a request",
            "endpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n",
        ),
        (
            "a SYN",
            "endpoints: { api: { keep_alive: { max_requests: 1 }, \
             script: [ { status: 503 }, { status: 200 } ] } }\n",
        ),
    ] {
        let yaml = format!("version: 1\nname: {what} at the crash\n{api}{timeline}");
        let sim = run_on(&yaml, BackendKind::Sim);
        let turmoil = run_on(&yaml, BackendKind::Turmoil);
        assert!(sim.passed(), "{what}, sim:\n{}", sim.summary());
        assert!(turmoil.passed(), "{what}, turmoil:\n{}", turmoil.summary());
        assert_eq!(judged(&sim), judged(&turmoil), "{what}");
    }
}

#[test]
fn a_hold_or_a_partition_while_its_endpoint_is_down_is_refused_where_it_is_written() {
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: down\nbackend: turmoil\n\
         endpoints: { api: { script: [ { status: 200 } ] }, other: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api }\n\
         network: { faults: [ { at: 1s, crash: other } ] }\n\
         turmoil:\n  crash: [ { at: 150ms, endpoint: api, bounce_after: 200ms } ]\n  \
         hold: [ { at: 100ms, endpoint: api, for: 50ms }, { at: 300ms, endpoint: api, for: 100ms } ]\n  \
         partition: [ { at: 350ms, endpoint: api, for: 50ms }, { at: 5s, endpoint: other, for: 1s } ]\n",
        "down.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        errors.contains(
            "turmoil.hold[1].at: this hold of `api` overlaps turmoil.crash[0], while its host \
             is down"
        ),
        "{errors}"
    );
    assert!(
        errors.contains(
            "turmoil.partition[1].at: this partition of `other` overlaps network.faults[0], \
             while its host is down"
        ),
        "{errors}"
    );
    // Touching the crash (ending at 150ms, starting at the bounce at 350ms) is fine.
    assert_eq!(
        errors.matches("while its host is down").count(),
        2,
        "{errors}"
    );
}

#[test]
fn a_drawn_turmoil_latency_is_the_same_for_a_seed_and_differs_for_another() {
    let run = |seed: u64| {
        scenario(&format!(
            "version: 1\nname: drawn\nbackend: turmoil\nseed: {seed}\n\
             endpoints: {{ api: {{ script: [ {{ status: 503, times: 3 }}, {{ status: 200 }} ] }} }}\n\
             turmoil: {{ latency: {{ exponential: {{ mean: 20ms, max: 80ms }} }} }}\n\
             operation: {{ endpoint: api, calls: 2 }}\n\
             client: {{ fixed: {{ delay: 100ms, max_attempts: 5, attempt_timeout: 1s }} }}\n"
        ))
        .run_builtin()
    };
    let first = run(7);
    let again = run(7);
    assert_eq!(first.end(), &RunEnd::Completed, "{}", first.summary());
    assert_eq!(first.trace().to_json(), again.trace().to_json());
    assert_eq!(first.summary(), again.summary());
    // The trace's header names the seed, so the timings are compared: another seed draws
    // other latencies, and the same schedule of retries lands at other instants.
    let timings = |report: &Report| -> Vec<(u64, Option<u64>)> {
        report
            .trace()
            .attempts
            .iter()
            .map(|a| (a.start_ms, a.head_ms))
            .collect()
    };
    let other = run(8);
    assert_eq!(other.end(), &RunEnd::Completed, "{}", other.summary());
    assert_eq!(timings(&first), timings(&again));
    assert_ne!(timings(&first), timings(&other), "{}", other.summary());
    // Every gap is the client's 100ms whatever the crossings took.
    for report in [&first, &other] {
        let trace = report.trace();
        let gaps: Vec<Option<u64>> = trace.attempts.iter().map(|a| trace.gap_before(a)).collect();
        assert!(gaps.iter().all(|g| g.is_none_or(|g| g == 100)), "{gaps:?}");
    }
}

#[test]
fn a_drawn_turmoil_latency_needs_its_cap_and_no_crash() {
    let load = |turmoil: &str| {
        Scenario::from_yaml_str(
            &format!(
                "version: 1\nname: drawn\nbackend: turmoil\n\
                 endpoints: {{ api: {{ script: [ {{ status: 200 }} ] }} }}\n\
                 turmoil:\n{turmoil}\
                 operation: {{ endpoint: api }}\n"
            ),
            "drawn.yaml",
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let uncapped = load("  latency: { exponential: { mean: 5ms } }\n").unwrap_err();
    assert!(
        uncapped.contains(
            "drawn.yaml:6:27 turmoil.latency.exponential: turmoil draws a link's latency between a minimum \
             and a maximum, so an exponential latency on its links needs `max`"
        ),
        "{uncapped}"
    );
    for crash in [
        "  crash: [ { at: 1s, endpoint: api } ]\n",
        "  crash: []\nnetwork: { faults: [ { at: 1s, crash: api } ] }\n",
    ] {
        let errors = load(&format!(
            "  latency: {{ exponential: {{ mean: 5ms, max: 40ms }} }}\n{crash}"
        ))
        .unwrap_err();
        assert!(
            errors.contains("drawn.yaml:6:12 turmoil.latency: a drawn latency and "),
            "{errors}"
        );
        assert!(
            errors.contains("crashes need a fixed `turmoil.latency`"),
            "{errors}"
        );
    }
    assert_eq!(
        load("  latency: { exponential: { mean: 5ms, max: 40ms } }\n"),
        Ok(())
    );
}
