//! One virtual hour on the sim network and in a turmoil simulation: the same schedule, an
//! attempt every 20 s against an endpoint that always answers 503 (180 attempts, 1 ms
//! latency), and the wall time each backend takes for it.
//!
//! `cargo bench -p retrylab --features turmoil --bench turmoil` prints both wall times and
//! their ratio. The wall clock is read here, in the benchmark, never on the simulated path.
//! turmoil steps every host once per 1 ms tick whether anything happens or not (3.6 million
//! steps of two hosts for the hour); the sim network wakes only when something is due.

use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use retrylab::scenario::{BackendKind, Scenario};

const ATTEMPTS: u32 = 180;
const EVERY: Duration = Duration::from_secs(20);

fn scenario(backend: BackendKind) -> Scenario {
    let yaml = "version: 1\nname: one virtual hour\n\
                endpoints: { api: { script: [ { status: 503 } ] } }\n\
                network: { latency: 1ms }\n\
                operation: { endpoint: api, method: POST, path: /orders }\n\
                limits: { max_virtual_time: 2h, max_client_attempts: 1000, wall: 600s }\n";
    let mut scenario = match Scenario::from_yaml_str(yaml, "bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    scenario.backend = backend;
    scenario
}

/// The wall time of one run on `backend`, its attempts and its virtual end.
fn hour(backend: BackendKind) -> (Duration, usize, u64) {
    let scenario = scenario(backend);
    let started = Instant::now();
    let report = scenario.run(|env| async move {
        let client = env.http_client();
        for _ in 0..ATTEMPTS {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(EVERY).await;
        }
        Ok::<_, String>(())
    });
    let elapsed = started.elapsed();
    assert!(report.passed(), "{}", report.summary());
    (
        elapsed,
        report.trace().attempts.len(),
        report.trace().end_ms,
    )
}

fn main() {
    let (sim, sim_attempts, sim_end) = hour(BackendKind::Sim);
    let (turmoil, turmoil_attempts, turmoil_end) = hour(BackendKind::Turmoil);
    assert_eq!(sim_attempts, ATTEMPTS as usize);
    assert_eq!(turmoil_attempts, ATTEMPTS as usize);
    println!(
        "sim:     {sim_attempts} attempts, virtual end {:.3}s, wall {:.3}s",
        sim_end as f64 / 1000.0,
        sim.as_secs_f64()
    );
    println!(
        "turmoil: {turmoil_attempts} attempts, virtual end {:.3}s, wall {:.3}s",
        turmoil_end as f64 / 1000.0,
        turmoil.as_secs_f64()
    );
    println!(
        "turmoil / sim: {:.0}x the wall time",
        turmoil.as_secs_f64() / sim.as_secs_f64()
    );
}
