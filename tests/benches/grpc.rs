//! 100,000 gRPC attempts over 23 virtual days, beside the same number of HTTP/1 and HTTP/2
//! attempts on the same schedule: what a long gRPC run costs next to the HTTP/1 run the
//! harness was first measured on.
//!
//! `cargo bench -p retrylab-tests --features tonic --bench grpc` prints one line per case and
//! the ratios. Each case is one call that makes 100,000 attempts against an endpoint that
//! always fails, 19.872 virtual seconds apart (23 days in all), through a client built on the
//! run's network:
//!
//! - HTTP/1: `env.http_client()` (hyper-util), `POST /orders`, every answer a 503;
//! - HTTP/2: `env.http2_client()` (hyper-util with `http2_only`), the same 503 on an
//!   endpoint with `protocol: http2`;
//! - gRPC: tonic 0.14 on `env.tonic_channel()`, `retrylab.test.v1.Echo/Say` with a 2 s
//!   deadline, every answer a trailers-only `UNAVAILABLE` with a 500 ms pushback.
//!
//! The wall clock is read here, in the bench, never on the simulated path. The bench fails
//! where a case's trace does not hold its 100,000 attempts, each answered as scripted, or
//! ends more than 10 virtual ms from the others. `GRPC_BENCH_COUNT` sets the attempts (1 to 120,000: the
//! scenario's 30 virtual days hold 130,000 attempts this far apart); `GRPC_BENCH_ONLY=http1`
//! (or `http2`, `grpc`) runs one case, for a profiler.

use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use retrylab::Scenario;
use retrylab_tests::clients::tonic::echo::{EchoClient, SAY, SayRequest};

/// The wait between two attempts: 100,000 of them fill 23 virtual days.
const GAP: Duration = Duration::from_millis(19_872);

/// The three ways of making an attempt, each against its own endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Http1,
    Http2,
    Grpc,
}

impl Case {
    const ALL: [Case; 3] = [Case::Http1, Case::Http2, Case::Grpc];

    fn name(self) -> &'static str {
        match self {
            Case::Http1 => "http1",
            Case::Http2 => "http2",
            Case::Grpc => "grpc",
        }
    }

    /// The scenario: one endpoint that always fails, as this case's protocol says.
    fn scenario(self) -> Scenario {
        let endpoint = match self {
            Case::Http1 => "api: { script: [ { status: 503 } ] }".to_owned(),
            Case::Http2 => "api: { protocol: http2, script: [ { status: 503 } ] }".to_owned(),
            Case::Grpc => format!(
                "api: {{ protocol: http2, routes: [ {{ match: {{ method: POST, path: {SAY} }}, \
                 script: [ {{ grpc: unavailable, pushback: 500ms }} ] }} ] }}"
            ),
        };
        let yaml = format!(
            "version: 1\nname: {name} bench\nendpoints:\n  {endpoint}\n\
             network: {{ latency: 1ms }}\n\
             operation: {{ endpoint: api, method: POST, path: {path} }}\n\
             limits: {{ max_virtual_time: 30d, max_client_attempts: 200000, wall: 1h }}\n",
            name = self.name(),
            path = if self == Case::Grpc { SAY } else { "/orders" },
        );
        match Scenario::from_yaml_str(&yaml, "grpc-bench.yaml") {
            Ok(scenario) => scenario,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs the case: its wall time, and the virtual instant its run ended at.
    fn run(self, attempts: u64) -> (Duration, u64) {
        let scenario = self.scenario();
        let started = Instant::now();
        let report = match self {
            Case::Http1 | Case::Http2 => scenario.run(move |env| async move {
                let client = if self == Case::Http1 {
                    env.http_client()
                } else {
                    env.http2_client()
                };
                for n in 0..attempts {
                    if n > 0 {
                        tokio::time::sleep(GAP).await;
                    }
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
                    if status != 503 {
                        return Err(format!("attempt {n}: {status}, not 503"));
                    }
                }
                Ok(503)
            }),
            Case::Grpc => scenario.run(move |env| async move {
                let mut client = EchoClient::new(env.tonic_channel());
                for n in 0..attempts {
                    if n > 0 {
                        tokio::time::sleep(GAP).await;
                    }
                    let mut request = tonic::Request::new(SayRequest {
                        text: "hi".to_owned(),
                    });
                    request.set_timeout(Duration::from_secs(2));
                    match client.say(request).await {
                        Err(status) if status.code() == tonic::Code::Unavailable => {}
                        other => return Err(format!("attempt {n}: {other:?}, not UNAVAILABLE")),
                    }
                }
                Ok(503)
            }),
        };
        let wall = started.elapsed();
        let trace = report.trace();
        assert_eq!(
            trace.attempts.len() as u64,
            attempts,
            "{}: the trace holds {} attempts:\n{}",
            self.name(),
            trace.attempts.len(),
            report.summary()
        );
        // The client's own outcome: every attempt answered as scripted.
        assert!(report.passed(), "{}:\n{}", self.name(), report.summary());
        (wall, trace.end_ms)
    }
}

/// Reads a whole number from `var`, or `default` when unset; anything else stops the bench.
fn from_env(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Err(_) => default,
        Ok(text) => match text.parse() {
            Ok(n @ 1..=120_000) => n,
            _ => {
                eprintln!("{var}={text}: expected a whole number from 1 to 120000");
                std::process::exit(2)
            }
        },
    }
}

fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let attempts = from_env("GRPC_BENCH_COUNT", 100_000);
    let only = std::env::var("GRPC_BENCH_ONLY").ok();
    if let Some(name) = &only
        && !Case::ALL.iter().any(|case| case.name() == name)
    {
        eprintln!("GRPC_BENCH_ONLY={name}: expected http1, http2 or grpc");
        std::process::exit(2)
    }
    let mut walls = Vec::new();
    let mut end = None;
    for case in Case::ALL {
        if only.as_deref().is_some_and(|name| name != case.name()) {
            continue;
        }
        let (wall, end_ms) = case.run(attempts);
        // Every case waits the same gaps over a network of the same latency; the stacks'
        // connection setups differ by a round trip or so (tonic's channel connects on its
        // own schedule), never by an attempt's gap.
        match end {
            None => end = Some(end_ms),
            Some(first) => assert!(
                first.abs_diff(end_ms) <= 10,
                "{} ended at virtual {end_ms} ms, the first case at {first} ms",
                case.name()
            ),
        }
        println!(
            "{}: {attempts} attempts over {:.2} virtual days in {:.3}s wall ({:.1} us/attempt)",
            case.name(),
            end_ms as f64 / 86_400_000.0,
            wall.as_secs_f64(),
            wall.as_secs_f64() * 1e6 / attempts as f64,
        );
        walls.push((case, wall));
    }
    if let Some((_, http1)) = walls.iter().find(|(case, _)| *case == Case::Http1) {
        for (case, wall) in walls.iter().filter(|(case, _)| *case != Case::Http1) {
            println!(
                "{} / http1: {:.2}x",
                case.name(),
                wall.as_secs_f64() / http1.as_secs_f64()
            );
        }
    }
}
