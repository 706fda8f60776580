//! Running a planned scenario on a backend (docs/architecture.md: backends and the runtime contract).
//!
//! Every run gets its own OS thread with a current-thread tokio runtime on paused (virtual)
//! time, so a user's `#[tokio::test]` runtime never meets the simulation's. Two guards bound
//! it: virtual time (`limits.max_virtual_time`, inside the simulation) and wall time
//! (`limits.wall`, the only real clock in the harness for control, read by the calling thread
//! while it waits and never on the simulated path; `wall.rs` stops the run when it runs out).

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::sync::mpsc;

mod blame;
mod calls;
mod command;
mod faults;
mod live;
mod panics;
pub(crate) mod plan;
mod scenario;
mod seen_states;
mod serve;
mod serve_wait;
mod served_calls;
mod settle;
mod simulate;
mod thread_time;
#[cfg(feature = "turmoil")]
mod turmoil;
mod wall;
mod watchdog;

pub(crate) use self::calls::Formatted;
use self::live::{
    Live, LiveSlot, live_lock, salvaged_report, turmoil_wall_message, wall_limit_report,
};
use self::panics::panic_message;
use self::plan::Plan;
pub use self::serve::{Listening, ServeOptions};
use self::simulate::simulate;
use self::wall::{Stop, Waited};
use crate::env::Env;
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::BackendKind;

/// What the run's thread hands back to the thread waiting for it.
enum Handback {
    /// The run's report, and the panics of the run's thread.
    Finished(Box<Report>, Vec<String>),
    /// The run saw `limits.wall`'s stop signal: it dropped its simulation and shut its
    /// runtime down; the panics filed until then.
    Stopped(Vec<String>),
    /// The harness's own code panicked; the panics filed.
    Failed(Vec<String>),
    /// The turmoil simulation returned an error (what it said: not a panic), and the panics
    /// filed.
    #[cfg_attr(not(feature = "turmoil"), allow(dead_code))]
    SimulationFailed(String, Vec<String>),
}

/// Runs `plan`, calling `client` once per logical call.
pub(crate) fn run<F, Fut, T, E>(plan: Plan, client: F) -> Report
where
    F: FnMut(Env) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    panics::install_hook();
    let wall = plan.wall;
    let name = plan.name.clone();
    let seed = plan.seed;
    let on_turmoil = plan.backend == BackendKind::Turmoil;
    let live: LiveSlot = Arc::default();
    let stop = Arc::new(Stop::default());
    let (sender, receiver) = mpsc::channel();
    let spawned = {
        let live = live.clone();
        let stop = stop.clone();
        std::thread::Builder::new()
            // A thread name may not hold a NUL byte (the spawn would panic), and a scenario's
            // name may: a quoted YAML string can escape one.
            .name(format!("retrylab-run {}", name.replace('\0', "\\0")))
            .spawn(move || run_on_this_thread(plan, client, &live, &stop, &sender))
    };
    if let Err(error) = spawned {
        return Report::not_run(
            name,
            seed,
            RunEnd::NotRunnable,
            format!("could not start the run thread: {:?}", error.kind()),
        );
    }
    let probe = || live_lock(&live).as_ref().map(Live::pulse);
    let handed = match wall::wait(&receiver, wall, &stop, probe) {
        Waited::InTime(handed) => handed,
        Waited::Lost => Handback::Failed(Vec::new()),
        Waited::Expired { stall, handed } => match handed {
            // Past its calls when the limit came, the run finished its report meanwhile.
            Some(finished @ Handback::Finished(..)) => finished,
            Some(failed @ (Handback::Failed(_) | Handback::SimulationFailed(..))) => failed,
            Some(Handback::Stopped(panics)) => {
                let message = match turmoil_wall_message(on_turmoil, wall, &live) {
                    Some(message) => message,
                    None => wall::explain(wall, &stall, true),
                };
                return wall_limit_report(&live, name, seed, message, &panics);
            }
            None => {
                let message = wall::explain(wall, &stall, false);
                return wall_limit_report(&live, name, seed, message, &[]);
            }
        },
    };
    match handed {
        Handback::Finished(mut report, panics) => {
            if !panics.is_empty() {
                report.end = RunEnd::Panicked;
                report
                    .verdicts
                    .insert(0, Verdict::fail("panic", panic_message(&panics)));
            }
            *report
        }
        // A stop is only raised at the wall limit, handled above; here the run's thread
        // ended without a report: the harness's own code panicked.
        Handback::Stopped(panics) | Handback::Failed(panics) => {
            let message = if panics.is_empty() {
                "the run's thread ended without handing back a report".to_owned()
            } else {
                format!("the run panicked: {}", panics.join("; "))
            };
            salvaged_report(&live, name, seed, RunEnd::Panicked, message)
        }
        Handback::SimulationFailed(why, panics) => {
            let message = if panics.is_empty() {
                why
            } else {
                format!("{why}; panics: {}", panics.join("; "))
            };
            salvaged_report(&live, name, seed, RunEnd::Panicked, message)
        }
    }
}

/// The run thread's body: builds the runtime, runs the simulation until it ends or
/// `limits.wall`'s `stop` is raised, and hands back what came of it.
fn run_on_this_thread<F, Fut, T, E>(
    plan: Plan,
    client: F,
    live: &LiveSlot,
    stop: &Stop,
    sender: &mpsc::Sender<Handback>,
) where
    F: FnMut(Env) -> Fut + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    panics::start_filing();
    // The receiver may be gone (the run was abandoned): then nobody needs what is sent.
    let hand_back = |handback| {
        let _ = sender.send(handback);
    };
    // turmoil steps runtimes of its own, one per host, from outside any runtime.
    #[cfg(feature = "turmoil")]
    if plan.backend == BackendKind::Turmoil {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            turmoil::drive(plan, client, live, stop)
        }));
        return hand_back(match ran {
            Ok(Ok(Some(report))) => Handback::Finished(Box::new(report), panics::take()),
            Ok(Ok(None)) => Handback::Stopped(panics::take()),
            Ok(Err(why)) => Handback::SimulationFailed(why, panics::take()),
            Err(_) => Handback::Failed(turmoil::explain_panics(panics::take())),
        });
    }
    let runtime = match plan.backend {
        // Real time, and the IO driver for the client's sockets; the endpoints run on a
        // thread of their own (`backend/real`).
        BackendKind::Real => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        BackendKind::Sim | BackendKind::Turmoil => tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            let report = Report::not_run(
                plan.name,
                plan.seed,
                RunEnd::NotRunnable,
                format!("could not build the runtime: {:?}", error.kind()),
            );
            return hand_back(Handback::Finished(Box::new(report), Vec::new()));
        }
    };
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(wall::until_stopped(stop, simulate(plan, client, live)))
    }));
    match ran {
        Ok(Some(report)) => {
            // The report first: dropping the runtime waits for every blocking task still
            // running, and a task the client left behind in spawn_blocking may never end.
            hand_back(Handback::Finished(Box::new(report), panics::take()));
            runtime.shutdown_background();
        }
        Ok(None) => {
            // Stopped at limits.wall: drop every task (endpoints, timers, the client's own)
            // before saying so; blocking tasks keep their threads, which nothing can stop.
            runtime.shutdown_background();
            hand_back(Handback::Stopped(panics::take()));
        }
        Err(_) => {
            runtime.shutdown_background();
            hand_back(Handback::Failed(panics::take()));
        }
    }
}
