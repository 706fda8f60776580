//! Large fleets are judged on what the clients did: the harness's own work for thousands of
//! clients at one virtual instant is never filed as a client that stopped the clock, and a
//! connection the network's cap refused is never read as the service's failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use retrylab::prelude::*;

fn healthy_fleet(clients: u32) -> Scenario {
    let yaml = format!(
        "version: 1\nname: a healthy fleet\n\
         endpoints: {{ api: {{ script: [ {{ status: 200 }} ] }} }}\n\
         operation: {{ endpoint: api, clients: {clients} }}\nclient: no_retry\n"
    );
    Scenario::from_yaml_str(&yaml, "fleet.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// Two threads that spin until told to stop, at most `limit` long: the machine is busy.
fn busy(stop: &Arc<AtomicBool>, limit: Duration) -> Vec<std::thread::JoinHandle<()>> {
    (0..2)
        .map(|_| {
            let stop = Arc::clone(stop);
            std::thread::spawn(move || {
                let began = Instant::now();
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) && began.elapsed() < limit {
                    x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005) + 1);
                }
            })
        })
        .collect()
}

/// 20,000 built-in clients against a service that always answers 200, three runs at once
/// beside two busy threads on a machine of two cores: every run passes, with every call a
/// success, and the three JSON reports are byte-identical. Before, the harness's work for the
/// fleet was filed against the client (`stopped_clock`, differently on every run), and the
/// 10,001st client's connect failed at the network's cap of 10,000 open connections.
#[test]
fn twenty_thousand_clients_pass_alike_three_at_once_under_load() {
    let stop = Arc::new(AtomicBool::new(false));
    let spinners = busy(&stop, Duration::from_secs(300));
    let runs: Vec<_> = (0..3)
        .map(|_| std::thread::spawn(|| healthy_fleet(20_000).run_builtin()))
        .collect();
    let reports: Vec<Report> = runs
        .into_iter()
        .map(|run| run.join().expect("a run's thread"))
        .collect();
    stop.store(true, Ordering::Relaxed);
    for spinner in spinners {
        spinner.join().expect("a busy thread");
    }
    for report in &reports {
        assert!(report.passed(), "{}", report.summary());
        let calls = &report.trace().calls;
        assert_eq!(calls.len(), 20_000);
        assert!(
            calls
                .iter()
                .all(|c| matches!(c.result, retrylab::trace::CallResult::Success(_))),
            "{}",
            report.summary()
        );
        assert!(report.verdicts().iter().all(|v| v.check != "stopped_clock"));
    }
    // The trace's JSON and the verdicts, as `retrylab run --format json` writes them.
    let json: Vec<String> = reports
        .iter()
        .map(|r| format!("{}\n{:?}", r.trace().to_json(), r.verdicts()))
        .collect();
    assert_eq!(json[0], json[1]);
    assert_eq!(json[0], json[2]);
}

/// A client that opens connections and never closes them meets the network's cap: the
/// connects it refuses are the harness's doing, and the run fails saying so, even with no
/// `expect` (before, the refused connects read as the service's transport errors and the
/// run said `ok`).
#[test]
fn connects_refused_at_the_cap_fail_the_run_as_the_harness() {
    use tower::ServiceExt as _;
    let yaml = "version: 1\nname: leaks connections\nendpoints: { api: {} }\n\
                operation: { endpoint: api }\n";
    let scenario = Scenario::from_yaml_str(yaml, "leak.yaml").unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(|env| async move {
        let uri: http::Uri = env.url("api").parse().map_err(|e| format!("{e}"))?;
        let mut kept = Vec::new();
        let mut refused = 0;
        // Bounded: one past the cap of a one-client run, and a few more.
        for _ in 0..10_005 {
            match env.connector().oneshot(uri.clone()).await {
                Ok(stream) => kept.push(stream),
                Err(_) => refused += 1,
            }
        }
        Ok::<_, String>((kept.len(), refused))
    });
    assert!(!report.passed(), "{}", report.summary());
    let verdict = report
        .verdicts()
        .iter()
        .find(|v| v.check == "connection_cap")
        .unwrap_or_else(|| panic!("no connection_cap verdict:\n{}", report.summary()));
    assert!(
        verdict.message.contains("refused 5 connect(s)")
            && verdict.message.contains("at most 10000 connections"),
        "{}",
        verdict.message
    );
    assert!(
        verdict
            .message
            .contains("in the harness, not in the service")
    );
}
