//! Runaway clients: clients that never give their thread back, block it, panic on the side or
//! leave work behind. Each run returns from `Scenario::run` within its limits (`limits.wall`
//! plus one second at most), with a verdict that names the cause, and the test process lives
//! on: a correct run afterwards in the same process passes.
//!
//! A thread that never returns to its runtime cannot be stopped from outside in Rust; the
//! harness abandons it. So every runaway client here is bounded by a flag its test sets once
//! `Scenario::run` has returned, and nothing keeps spinning or sleeping for the rest of the
//! test binary.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use retrylab::prelude::*;

/// `limits.wall` of every runaway scenario here: short, so the suite stays fast in debug.
const WALL: Duration = Duration::from_secs(1);

/// How much later than `limits.wall` a run may return.
const SLACK: Duration = Duration::from_secs(1);

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "runaway.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// A scenario whose endpoint answers 503 forever, with `limits.wall` of [`WALL`].
fn runaway(name: &str) -> Scenario {
    scenario(&format!(
        "version: 1\nname: {name}\nendpoints: {{ api: {{ script: [ {{ status: 503 }} ] }} }}\n\
         operation: {{ endpoint: api }}\nlimits: {{ wall: 1s }}\n"
    ))
}

/// Runs `client` and checks that the run returned within its limits.
fn run_bounded<F, Fut, T, E>(scenario: &Scenario, client: F) -> Report
where
    F: FnMut(Env) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T, E>> + 'static,
    T: std::fmt::Debug,
    E: std::fmt::Debug,
{
    let began = Instant::now();
    let report = scenario.run(client);
    let took = began.elapsed();
    assert!(
        took <= WALL + SLACK,
        "the run returned after {took:?}, more than limits.wall ({WALL:?}) + {SLACK:?}:\n{}",
        report.summary()
    );
    report
}

/// The process lives on: a correct run after a runaway one passes.
fn a_later_run_passes() {
    let ok = scenario(
        "version: 1\nname: afterwards\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { outcome: success, attempts: 1 }\n",
    );
    let report = ok.run(|env| async move { attempt(&env).await });
    assert!(report.passed(), "{}", report.summary());
}

/// The message of the run's `wall_limit` verdict.
fn wall_limit_message(report: &Report) -> String {
    assert_eq!(report.end(), &RunEnd::WallLimit, "{}", report.summary());
    report
        .failures()
        .find(|v| v.check == "wall_limit")
        .map(|v| v.message.clone())
        .unwrap_or_else(|| panic!("no wall_limit verdict:\n{}", report.summary()))
}

/// Sets its flag when dropped: a task the runtime drops says so.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Spawns a task that lives as long as the run's runtime does (it ticks on virtual time),
/// and returns the flag it sets when the runtime drops it.
fn spawn_witness() -> Arc<AtomicBool> {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    tokio::spawn(async move {
        let _flag = flag;
        loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    dropped
}

/// Waits up to `within` for `condition` to hold.
fn eventually(within: Duration, condition: impl Fn() -> bool) -> bool {
    let began = Instant::now();
    while began.elapsed() < within {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    condition()
}

/// A client that spins without awaiting holds the run's thread: the verdict says it was busy
/// on a CPU in one poll, and once the spin ends the run is stopped (its tasks dropped)
/// instead of going on. Before the fix the verdict was the same whatever the client did,
/// and the abandoned run went on retrying once the spin ended.
#[test]
fn a_busy_loop_is_named_and_the_run_stops_once_it_ends() {
    let release = Arc::new(AtomicBool::new(false));
    let witness = Arc::new(std::sync::Mutex::new(None));
    let report = {
        let release = release.clone();
        let witness = witness.clone();
        run_bounded(&runaway("busy loop"), move |env| {
            let release = release.clone();
            let witness = witness.clone();
            async move {
                *witness.lock().unwrap() = Some(spawn_witness());
                let _ = attempt(&env).await;
                // The bug: a spin-wait that never awaits.
                while !release.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                // Then a correct retry loop, which the abandoned run must not go on with.
                loop {
                    let _ = attempt(&env).await;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                #[allow(unreachable_code)]
                Ok::<(), String>(())
            }
        })
    };
    release.store(true, Ordering::SeqCst);
    let message = wall_limit_message(&report);
    assert!(message.contains("busy on a CPU"), "{message}");
    assert!(message.contains("never awaits"), "{message}");
    assert_eq!(report.trace().attempts.len(), 1, "{}", report.summary());
    let dropped = witness.lock().unwrap().clone().expect("the client ran");
    assert!(
        eventually(Duration::from_secs(2), || dropped.load(Ordering::SeqCst)),
        "the abandoned run's tasks were not dropped once the spin ended"
    );
    a_later_run_passes();
}

/// `std::thread::sleep` in the client: the verdict says the thread was asleep in one poll.
#[test]
fn a_blocking_sleep_is_named() {
    let report = run_bounded(&runaway("thread sleep"), |env| async move {
        let _ = attempt(&env).await;
        // The bug, bounded so the abandoned thread ends soon after the test.
        std::thread::sleep(Duration::from_millis(2500));
        Ok::<(), String>(())
    });
    let message = wall_limit_message(&report);
    assert!(message.contains("asleep"), "{message}");
    assert!(message.contains("std::thread::sleep"), "{message}");
    assert_eq!(report.trace().attempts.len(), 1, "{}", report.summary());
    a_later_run_passes();
}

/// A task the client spawned panics while the call waits for it: the run ends as `panic`
/// with the panic's message, long before the wall limit.
#[test]
fn a_panic_in_a_spawned_task_is_named() {
    let report = run_bounded(&runaway("panic in a spawned task"), |env| async move {
        let (sender, receiver) = tokio::sync::oneshot::channel::<u16>();
        tokio::spawn(async move {
            // The bug: the task expects a success, and the endpoint answers 503.
            let status = attempt(&env).await.expect("boom in a spawned task");
            let _ = sender.send(status);
        });
        receiver.await.map_err(|e| e.to_string())
    });
    assert_eq!(report.end(), &RunEnd::Panicked, "{}", report.summary());
    let verdict = report.failures().next().expect("a verdict");
    assert_eq!(verdict.check, "panic");
    assert!(
        verdict.message.contains("boom in a spawned task"),
        "{}",
        verdict.message
    );
    a_later_run_passes();
}

/// The call awaits a `spawn_blocking` task that does not return: the runtime waits outside
/// the simulation, virtual time stands still, and the verdict says so; the run is stopped
/// (its runtime shut down, its tasks dropped) although the blocking task keeps its thread.
#[test]
fn a_spawn_blocking_that_never_returns_is_named_and_the_run_stops() {
    let release = Arc::new(AtomicBool::new(false));
    let witness = Arc::new(std::sync::Mutex::new(None));
    let report = {
        let release = release.clone();
        let witness = witness.clone();
        run_bounded(&runaway("spawn_blocking forever"), move |env| {
            let release = release.clone();
            let witness = witness.clone();
            async move {
                *witness.lock().unwrap() = Some(spawn_witness());
                let _ = attempt(&env).await;
                tokio::task::spawn_blocking(move || {
                    while !release.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                })
                .await
                .map_err(|e| e.to_string())
            }
        })
    };
    let message = wall_limit_message(&report);
    assert!(message.contains("spawn_blocking"), "{message}");
    assert!(message.contains("outside the simulation"), "{message}");
    let dropped = witness.lock().unwrap().clone().expect("the client ran");
    assert!(
        eventually(Duration::from_secs(1), || dropped.load(Ordering::SeqCst)),
        "the run's runtime was not shut down while a blocking task ran"
    );
    release.store(true, Ordering::SeqCst);
    a_later_run_passes();
}

/// A call that completed, leaving a `spawn_blocking` task running: the run's report is
/// handed back at once, complete. Before the fix the run waited for the blocking task when
/// it dropped its runtime, so the report was lost and the run called a `wall_limit`.
#[test]
fn a_detached_spawn_blocking_does_not_lose_the_report() {
    let release = Arc::new(AtomicBool::new(false));
    let yaml = "version: 1\nname: detached blocking task\n\
                endpoints: { api: { script: [ { status: 200 } ] } }\n\
                operation: { endpoint: api }\nexpect: { outcome: success, attempts: 1 }\n\
                limits: { wall: 1s }\n";
    let report = {
        let release = release.clone();
        run_bounded(&scenario(yaml), move |env| {
            let release = release.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    while !release.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                });
                attempt(&env).await
            }
        })
    };
    release.store(true, Ordering::SeqCst);
    assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
    assert!(report.passed(), "{}", report.summary());
    a_later_run_passes();
}

/// The client starts a runtime of its own inside the call and blocks on it: tokio refuses
/// (a runtime inside a runtime), and the run ends as `panic` with a verdict that says what
/// the client did and what to do instead.
#[test]
fn a_nested_runtime_is_named() {
    let report = run_bounded(&runaway("nested runtime"), |env| async move {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime
            .block_on(attempt(&env))
            .map_err(|e| format!("{e:?}"))
    });
    assert_eq!(report.end(), &RunEnd::Panicked, "{}", report.summary());
    let verdict = report.failures().next().expect("a verdict");
    assert_eq!(verdict.check, "panic");
    assert!(
        verdict.message.contains("a runtime of its own"),
        "{}",
        verdict.message
    );
    a_later_run_passes();
}

/// A correct but slow run, with the built-in client, is told from a blocked one: virtual
/// time was still passing when the wall limit came. Before the fix the verdict blamed the
/// client for blocking its thread, and the abandoned run went on using a CPU.
#[test]
fn a_slow_run_is_told_from_a_blocked_one() {
    let slow = scenario(
        "version: 1\nname: zz slow\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nclient: { fixed: { delay: 1ms, max_attempts: 100000 } }\n\
         limits: { wall: 2s, max_client_attempts: 100000 }\n",
    );
    // Two seconds, not one: the verdict reads the last quarter of the window, and half a
    // second of it leaves room for a loaded machine's pauses.
    let began = Instant::now();
    let report = slow.run_builtin();
    assert!(
        began.elapsed() <= Duration::from_secs(2) + SLACK,
        "{}",
        report.summary()
    );
    let message = wall_limit_message(&report);
    assert!(message.contains("still making progress"), "{message}");
    assert!(!message.contains("blocked its thread"), "{message}");
    assert!(message.contains("stopped"), "{message}");
    assert!(!report.trace().attempts.is_empty(), "{}", report.summary());
    // The run's thread (named after the scenario, cut to 15 bytes by Linux) is gone soon
    // after: the run stopped instead of going on in the background.
    #[cfg(target_os = "linux")]
    assert!(
        eventually(Duration::from_secs(1), || !thread_alive("retrylab-run zz")),
        "the abandoned run's thread still runs"
    );
    a_later_run_passes();
}

/// Whether a thread of this process is named `name`.
#[cfg(target_os = "linux")]
fn thread_alive(name: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim_end() == name)
    })
}

/// The attempt limit for every client, open connections, and requests made after their call
/// returned (and after their run ended).
mod limits {
    use std::sync::{Arc, Mutex};
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

    /// Prints the peak memory of a run whose client opens 100,000 connections and keeps
    /// them, when run as the child of `a_hundred_thousand_open_connections_stop_at_the_cap`
    /// (alone in its process, so the peak is the run's).
    #[test]
    fn open_connections_child() {
        if std::env::var("RETRYLAB_OPEN_CONNECTIONS_CHILD").is_err() {
            return;
        }
        let yaml = "version: 1\nname: 1e5 open connections\nendpoints: { api: {} }\n\
                    operation: { endpoint: api }\nlimits: { wall: 5s }\n";
        let report = run_within(&scenario(yaml), Duration::from_secs(5), |env| async move {
            let mut connector = env.connector();
            let mut open = Vec::new();
            for _ in 0..100_000 {
                let uri = http::Uri::from_static("http://api/");
                match tower::Service::call(&mut connector, uri).await {
                    Ok(stream) => open.push(stream),
                    Err(error) => return Err(format!("{} open, then: {error}", open.len())),
                }
            }
            Ok::<_, String>(open.len())
        });
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let peak_kib = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| {
                value
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            });
        println!("\nEND {:?}", report.end());
        println!("\nCALL {:?}", report.trace().calls[0].result);
        println!(
            "\nPEAK-KIB {}",
            peak_kib.map_or("unknown".to_owned(), |k| k.to_string())
        );
    }

    /// 1e5 open connections: a client opens connections and never closes them, on a network
    /// without latency (virtual time stands still, and no attempt is made). The network
    /// refuses the connect past its cap, so the run ends with the client's error and memory
    /// stays bounded (it grew by some 2.4 KB a connection, 240 MB for these 100,000).
    #[test]
    fn a_hundred_thousand_open_connections_stop_at_the_cap() {
        let started = Instant::now();
        let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "limits::open_connections_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RETRYLAB_OPEN_CONNECTIONS_CHILD", "1")
            .output()
            .expect("the child runs");
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{text}");
        let line = |prefix: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(prefix))
                .unwrap_or_else(|| panic!("the child printed no {prefix}: {text}"))
                .to_owned()
        };
        assert_eq!(line("END "), "Completed");
        let call = line("CALL ");
        assert!(
            call.contains("10000 open, then:") && call.contains("at most 10000 connections"),
            "{call}"
        );
        // On Linux the child measured its own peak; elsewhere it cannot.
        if let Ok(peak_kib) = line("PEAK-KIB ").parse::<u64>() {
            assert!(peak_kib < 256 * 1024, "peak RSS {peak_kib} KiB");
        }
    }

    /// A late request: a task the call spawned sends a request after the call returned,
    /// while the run drains. A request of the user's own client carries no call tag, so it
    /// was never reported late; one that arrives while no call is running is now.
    #[test]
    fn a_late_request_from_a_spawned_task_is_reported() {
        let yaml = "version: 1\nname: a late request\nendpoints: { api: {} }\n\
                    operation: { endpoint: api }\ndrain: 10s\nlimits: { wall: 5s }\n\
                    expect: { late_requests: 1 }\n";
        let report = run_within(&scenario(yaml), Duration::from_secs(5), |env| async move {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let client = own_client(&env);
                let _ = client.request(env.operation().request()).await;
            });
            Ok::<_, String>(())
        });
        assert_eq!(report.end(), &RunEnd::Completed);
        let late = &report.trace().late_requests;
        assert_eq!(late.len(), 1, "{}", report.summary());
        assert_eq!((late[0].at_ms, late[0].call_id), (1000, 0));
        assert!(report.passed(), "{}", report.summary());
        assert!(
            report
                .snapshot_text()
                .contains("late requests:\n  t=1.000s  api  call 0")
        );
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
        assert_eq!(trace.late_requests.len(), 500);
        // A connect, then one 20 ms round trip each: the 501st request reached the endpoint,
        // and was refused there, at 10.03 s, long before the drain's end.
        assert_eq!(trace.end_ms, 10_030);
        another_run_works();
    }

    /// An `Env` kept past its run, and the clients and connections taken from it: every use
    /// after the run fails with an error that says the run has ended (before, a request got
    /// a 200 from an endpoint whose ledger nobody would read again).
    #[test]
    fn an_env_kept_past_its_run_fails_loudly() {
        type Kept = (
            Env,
            Client<retrylab::EnvConnector, Full<Bytes>>,
            retrylab::HttpClient,
        );
        let kept: Arc<Mutex<Option<Kept>>> = Arc::default();
        let yaml = "version: 1\nname: kept\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                    limits: { wall: 5s }\n";
        let report = run_within(&scenario(yaml), Duration::from_secs(5), {
            let kept = kept.clone();
            move |env| {
                let kept = kept.clone();
                async move {
                    // Both clients hold a pooled connection when the call returns.
                    let own = own_client(&env);
                    let response = own.request(env.operation().request()).await;
                    let _ = response
                        .map_err(|e| e.to_string())?
                        .into_body()
                        .collect()
                        .await;
                    let harness = env.http_client();
                    let response = harness.request(env.operation().request()).await;
                    let _ = response
                        .map_err(|e| e.to_string())?
                        .into_body()
                        .collect()
                        .await;
                    *kept.lock().expect("not poisoned") = Some((env, own, harness));
                    Ok::<_, String>(())
                }
            }
        });
        assert!(report.passed(), "{}", report.summary());
        assert_eq!(report.trace().attempts.len(), 2);
        let (env, own, harness) = kept
            .lock()
            .expect("not poisoned")
            .take()
            .expect("the call kept its Env");
        let says_ended = |text: String| {
            assert!(
                text.contains("has ended") && text.contains("must not outlive"),
                "{text}"
            );
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let error = harness
                .request(env.operation().request())
                .await
                .expect_err("the run has ended");
            says_ended(format!("{error:?}"));
            let error = env
                .http_client()
                .request(env.operation().request())
                .await
                .expect_err("the run has ended");
            says_ended(format!("{error:?}"));
            let error = own
                .request(env.operation().request())
                .await
                .expect_err("the run has ended");
            says_ended(format!("{error:?}"));
            let mut connector = env.connector();
            let uri = http::Uri::from_static("http://api/");
            let error = tower::Service::call(&mut connector, uri)
                .await
                .expect_err("the run has ended");
            says_ended(error.to_string());
        });
        another_run_works();
    }

    /// A run abandoned at `limits.wall` has ended too: its client, once it wakes, gets the
    /// same error, never a 200 nobody records (unless the run's containment drops it first).
    #[test]
    fn an_abandoned_runs_client_fails_loudly_when_it_wakes() {
        let yaml = "version: 1\nname: abandoned\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                    limits: { wall: 300ms }\n";
        let (sender, receiver) = std::sync::mpsc::channel();
        let sender = Mutex::new(sender);
        let report = run_within(&scenario(yaml), Duration::from_millis(300), move |env| {
            let sender = sender.lock().expect("not poisoned").clone();
            async move {
                // Blocks the run's thread past the wall limit, then sends a request.
                std::thread::sleep(Duration::from_millis(600));
                let result = env.http_client().request(env.operation().request()).await;
                let _ = sender.send(
                    result
                        .map(|r| r.status().as_u16())
                        .map_err(|e| format!("{e:?}")),
                );
                Ok::<_, String>(())
            }
        });
        assert_eq!(report.end(), &RunEnd::WallLimit);
        match receiver.recv_timeout(Duration::from_secs(2)) {
            Ok(Ok(status)) => panic!("the abandoned client got {status}"),
            Ok(Err(error)) => assert!(error.contains("has ended"), "{error}"),
            // Dropped before it could send: contained, which is as good.
            Err(_) => {}
        }
        another_run_works();
    }
}
