//! The stopped-clock diagnostic on a loaded machine (Linux): a correct run whose thread is
//! descheduled for seconds is not blamed for it, and a real `std::thread::sleep` in the
//! client still is.
//!
//! CPU-burning neighbours alone (one busy thread per core, plus one) give the run's thread a
//! fair share, and deschedule it for milliseconds at a time. To reproduce what a load of 17
//! on two cores does, the client also puts the run's thread (one thread per run, gone with
//! it) in the idle scheduling class, `SCHED_IDLE`, so the neighbours take nearly all of the
//! CPU while they burn. They burn for a bounded time only, stopped early when the test ends.
#![cfg(target_os = "linux")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use retrylab::prelude::*;

/// One test at a time: each brings its own neighbours.
static SERIAL: Mutex<()> = Mutex::new(());

/// How long the neighbours burn at most.
const BURN: Duration = Duration::from_secs(3);

/// One busy thread per core, plus one, each spinning for [`BURN`] at most or until dropped.
struct Neighbours {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Neighbours {
    fn start() -> Neighbours {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..=cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let began = Instant::now();
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && began.elapsed() < BURN {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Neighbours { stop, threads }
    }
}

impl Drop for Neighbours {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Puts the calling thread (the run's thread, when a client calls it) in the idle
/// scheduling class: it runs only when no other thread wants the CPU. Lowering a thread's
/// class needs no privilege.
fn starve_this_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread, and `param` is a valid sched_param.
    let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    assert_eq!(set, 0, "sched_setscheduler(SCHED_IDLE) failed");
}

/// Some CPU work per attempt, as a client that signs its requests does: a few tens of ms.
fn sign(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..2_000_000 {
        x = std::hint::black_box(x.rotate_left(7) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    x
}

fn scenario() -> Scenario {
    Scenario::from_yaml_str(
        "version: 1\nname: starved\n\
         endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { outcome: success, attempts: 3 }\n\
         limits: { wall: 60s }\n",
        "loaded.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Before the fix the run failed `stopped_clock`, "the client blocked its thread", for
/// polls the thread spent waiting for a CPU.
#[test]
fn a_correct_run_on_a_starved_thread_does_not_stop_the_clock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The test means something only if the neighbours descheduled the run's thread for long
    // inside a poll. Other work on the machine (tests running beside this one) can keep them
    // from doing so; then the experiment is made again, a bounded number of times.
    let mut longest = Duration::ZERO;
    for _ in 0..3 {
        let (report, took) = starved_run();
        longest = took;
        if took < Duration::from_millis(600) {
            continue;
        }
        assert!(
            report.failures().all(|v| v.check != "stopped_clock"),
            "a starved but correct run stopped the clock:\n{}",
            report.summary()
        );
        assert!(report.passed(), "{}", report.summary());
        return;
    }
    panic!(
        "in 3 tries the neighbours did not starve the run's thread (the longest signing \
         took {longest:?} in the last), so this test shows nothing"
    );
}

/// A correct client on a starved thread: its report, and the longest real time one signing
/// took.
fn starved_run() -> (Report, Duration) {
    let neighbours = Neighbours::start();
    let longest = Arc::new(Mutex::new(Duration::ZERO));
    let report = {
        let longest = longest.clone();
        scenario().run(move |env| {
            let longest = longest.clone();
            async move {
                starve_this_thread();
                loop {
                    let began = Instant::now();
                    std::hint::black_box(sign(env.call_seed("sign")));
                    let took = began.elapsed();
                    {
                        let mut longest = longest.lock().unwrap_or_else(|e| e.into_inner());
                        *longest = (*longest).max(took);
                    }
                    match attempt(&env).await {
                        Ok(status) => return Ok(status),
                        Err(AttemptError::Fatal(status)) => return Err(status),
                        Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
            }
        })
    };
    drop(neighbours);
    let longest = *longest.lock().unwrap_or_else(|e| e.into_inner());
    (report, longest)
}

/// Load does not hide a real stop: a `std::thread::sleep` in the client is still caught,
/// and the verdict says the thread was asleep.
#[test]
fn a_blocking_sleep_on_a_starved_thread_still_stops_the_clock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let neighbours = Neighbours::start();
    let report = scenario().run(|env| async move {
        starve_this_thread();
        loop {
            match attempt(&env).await {
                Ok(status) => return Ok(status),
                Err(AttemptError::Fatal(status)) => return Err(status),
                // The bug: a real-time pause.
                Err(_) => std::thread::sleep(Duration::from_millis(700)),
            }
        }
    });
    drop(neighbours);
    let stopped = report
        .failures()
        .find(|v| v.check == "stopped_clock")
        .unwrap_or_else(|| panic!("no stopped_clock verdict:\n{}", report.summary()));
    assert!(
        stopped.message.contains("blocked its thread 2 times"),
        "{}",
        stopped.message
    );
    assert!(
        stopped.message.contains("asleep for"),
        "{}",
        stopped.message
    );
}
