//! Runaway clients: whatever a client does, `Scenario::run` comes back with a verdict within
//! the scenario's limits (and a second), and the process goes on.

/// The attempt limit for every client.
mod limits {
    use std::time::{Duration, Instant};

    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use retrylab::trace::AttemptOutcome;
    use retrylab::{Env, Report, RunEnd, Scenario};

    fn scenario(yaml: &str) -> Scenario {
        Scenario::from_yaml_str(yaml, "runaway.yaml").unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs `client` on `scenario`, asserting that the run came back within `wall` (the
    /// scenario's `limits.wall`) and a second.
    fn run_within<F, Fut, T, E>(scenario: &Scenario, wall: Duration, client: F) -> Report
    where
        F: FnMut(Env) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, E>> + 'static,
        T: std::fmt::Debug,
        E: std::fmt::Debug,
    {
        let started = Instant::now();
        let report = scenario.run(client);
        let took = started.elapsed();
        assert!(
            took < wall + Duration::from_secs(1),
            "the run took {took:?}, its limits allow {wall:?} and a second"
        );
        report
    }

    /// A user's own hyper client on the harness's connector.
    fn own_client(env: &Env) -> Client<retrylab::EnvConnector, Full<Bytes>> {
        Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build(env.connector())
    }

    /// The process lives on: another run works as usual.
    fn another_run_works() {
        let yaml = "version: 1\nname: after\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                    expect: { outcome: success, attempts: 1 }\n";
        let report = scenario(yaml).run(|env| async move {
            let response = env.http_client().request(env.operation().request()).await;
            response
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string())
        });
        assert!(report.passed(), "{}", report.summary());
    }

    /// Zero-delay infinite retry on the user's own client: retries a 503 forever without a
    /// pause, on a network without latency, so virtual time never moves. Only the attempt
    /// limit can stop it (before, nothing counted these attempts and it ran into the wall).
    #[test]
    fn zero_delay_infinite_retry_ends_at_the_attempt_limit() {
        let yaml = "version: 1\nname: zero-delay infinite retry\n\
                    endpoints: { api: { script: [ { status: 503 } ] } }\n\
                    operation: { endpoint: api }\n\
                    limits: { max_client_attempts: 2000, wall: 5s }\n";
        let report = run_within(&scenario(yaml), Duration::from_secs(5), |env| async move {
            let client = own_client(&env);
            loop {
                let response = client.request(env.operation().request()).await;
                if let Ok(response) = response {
                    let _ = response.into_body().collect().await;
                }
            }
            #[allow(unreachable_code)]
            Ok::<(), ()>(())
        });
        assert_eq!(report.end(), &RunEnd::AttemptLimit, "{}", report.summary());
        let attempts = &report.trace().attempts;
        assert_eq!(attempts.len(), 2000);
        assert!(
            attempts
                .iter()
                .all(|a| a.outcome == AttemptOutcome::Status(503))
        );
        assert!(report.failures().any(|v| v.check == "attempt_limit"));
        another_run_works();
    }

    /// A task left behind retries without pause after every call returned, while the run
    /// drains: the attempt limit still stops it (before, the limit was only watched while
    /// calls ran, so the run completed, its 501st attempt refused and nobody told).
    #[test]
    fn a_task_left_retrying_after_the_calls_ends_at_the_attempt_limit() {
        let yaml = "version: 1\nname: left retrying\n\
                    endpoints: { api: { script: [ { status: 503 } ] } }\n\
                    network: { latency: 10ms }\noperation: { endpoint: api }\ndrain: 60s\n\
                    limits: { max_client_attempts: 500, wall: 5s }\n";
        let report = run_within(&scenario(yaml), Duration::from_secs(5), |env| async move {
            tokio::spawn(async move {
                let client = own_client(&env);
                loop {
                    if let Ok(response) = client.request(env.operation().request()).await {
                        let _ = response.into_body().collect().await;
                    }
                }
            });
            Ok::<_, String>(())
        });
        assert_eq!(report.end(), &RunEnd::AttemptLimit, "{}", report.summary());
        let trace = report.trace();
        assert_eq!(trace.attempts.len(), 500);
        // A connect, then one 20 ms round trip each: the 501st request reached the endpoint,
        // and was refused there, at 10.03 s, long before the drain's end.
        assert_eq!(trace.end_ms, 10_030);
        another_run_works();
    }
}
