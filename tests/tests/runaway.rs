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
