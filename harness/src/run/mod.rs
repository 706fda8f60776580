//! Running a planned scenario on a backend (docs/architecture.md: backends and the runtime contract).
//!
//! Every run gets its own OS thread with a current-thread tokio runtime on paused (virtual)
//! time, so a user's `#[tokio::test]` runtime never meets the simulation's. Two guards bound
//! it: virtual time (`limits.max_virtual_time`, inside the simulation) and wall time
//! (`limits.wall`, the only real clock in the harness for control, read by the calling thread
//! while it waits and never on the simulated path; `wall.rs` stops the run when it runs out).

use std::fmt::Debug;
use std::future::Future;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retrylab_endpoints::{Endpoint, VirtualClock};

mod blame;
mod calls;
mod faults;
mod panics;
pub(crate) mod plan;
mod serve;
mod settle;
mod thread_time;
#[cfg(feature = "turmoil")]
mod turmoil;
mod wall;
mod watchdog;

use self::calls::{CallLog, Calls, Driven, Member};
use self::plan::{Plan, PlannedFault};
pub use self::serve::{Listening, ServeOptions};
use self::thread_time::{ThreadTime, Tid};
use self::wall::{Pulse, Stop, Waited};
use self::watchdog::Watchdog;
use crate::backend::real::RealNet;
use crate::backend::sim::{EndpointHost, Network};
use crate::backend::{AttemptLimit, Net};
use crate::env::{ClientInstance, Env, HTTP_CLIENT_CONFIG};
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::BackendKind;
use crate::trace::record::Recorder;
use crate::trace::{assemble, seconds};

/// What the thread waiting for a run can still read of it: everything the trace is
/// assembled from. The run thread publishes it once the run is set up, so a run that is
/// abandoned at `limits.wall`, or whose harness code panicked, still reports every attempt
/// recorded up to that point.
struct Live {
    header: Vec<(String, String)>,
    /// The client instances of the run (`operation.clients`).
    clients: u32,
    recorder: Recorder,
    network: Net,
    endpoints: Vec<(String, Endpoint)>,
    calls: CallLog,
    watchdog: Watchdog,
    /// The run's runtime and clock, through which the waiting thread reads virtual time.
    runtime: tokio::runtime::Handle,
    clock: VirtualClock,
    /// The run's thread, whose times the waiting thread reads (Linux).
    thread: Option<Tid>,
}

impl Live {
    /// The run's virtual time now, read from another thread (through the runtime's clock,
    /// behind a lock: for the salvaged trace, not for sampling).
    fn virtual_ms(&self) -> u64 {
        // The paused clock is the runtime's: read it as the run's thread would.
        let _entered = self.runtime.enter();
        self.clock.now_ms()
    }

    /// What the waiting thread samples of the run while it waits: atomics the run's calls
    /// keep, never a lock the run takes (a waiting thread descheduled while holding one
    /// would stop the run it watches), and the run's thread's times from `/proc`.
    fn pulse(&self) -> Pulse {
        Pulse {
            virtual_ms: self.watchdog.last_poll_ms(),
            attempts: self.watchdog.attempts(),
            polls: self.watchdog.polls(),
            thread: self.thread.and_then(ThreadTime::of),
        }
    }
}

type LiveSlot = Arc<Mutex<Option<Live>>>;

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
        return failed_report(
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

/// Why a turmoil run that virtual time kept moving in stopped at `limits.wall`: turmoil
/// steps every host each millisecond, so a long wait costs wall time, where the other
/// backends jump to the next timer. The run's calls are not polled while it waits, so the
/// watchdog's reading (a loop in a task) would mislead. `None` elsewhere, or when virtual
/// time did not move (a client that blocks its thread, which the usual reading explains).
fn turmoil_wall_message(on_turmoil: bool, wall: Duration, live: &LiveSlot) -> Option<String> {
    if !on_turmoil {
        return None;
    }
    let virtual_ms = live_lock(live).as_ref().map(Live::virtual_ms)?;
    let wall_ms = u64::try_from(wall.as_millis()).unwrap_or(u64::MAX);
    (virtual_ms > wall_ms).then(|| {
        format!(
            "the run had not finished after limits.wall ({}) of real time, at t={} of \
             virtual time: turmoil steps every host once per millisecond of virtual time, \
             whether anything is due or not, so a long wait costs wall time. Lower \
             limits.max_virtual_time, shorten the schedule, or raise limits.wall",
            seconds(wall_ms),
            seconds(virtual_ms)
        )
    })
}

/// The report of a run stopped or abandoned at `limits.wall`: its trace so far, the
/// verdict saying why, and the panics filed until then.
fn wall_limit_report(
    live: &LiveSlot,
    name: String,
    seed: u64,
    message: String,
    panics: &[String],
) -> Report {
    let mut report = salvaged_report(live, name, seed, RunEnd::WallLimit, message);
    if !panics.is_empty() {
        report
            .verdicts
            .push(Verdict::fail("panic", panic_message(panics)));
    }
    report
}

/// The `panic` verdict's message for the panics of a run, with a hint when the client
/// started a runtime inside the run's (tokio refuses, in words about blocking).
fn panic_message(panics: &[String]) -> String {
    let mut message = format!("the client panicked: {}", panics.join("; "));
    let nested = panics.iter().any(|panic| {
        panic.contains("Cannot start a runtime from within a runtime")
            || panic.contains("Cannot drop a runtime in a context where blocking is not allowed")
            || panic.contains("can call blocking only when running on the multi-threaded runtime")
    });
    if nested {
        message += ". The client started or blocked on a runtime of its own inside the \
                    run's: a run is one current-thread runtime on virtual time, which the \
                    client's code must await on (call the async API and .await it) instead \
                    of blocking its thread";
    }
    message
}

fn live_lock(live: &LiveSlot) -> std::sync::MutexGuard<'_, Option<Live>> {
    // Published once and taken once: a poisoned lock still holds a consistent value.
    live.lock().unwrap_or_else(|e| e.into_inner())
}

fn failed_report(name: String, seed: u64, end: RunEnd, message: String) -> Report {
    let check = end.verdict_name().unwrap_or("run");
    Report {
        name,
        seed,
        trace: Default::default(),
        end,
        verdicts: vec![Verdict::fail(check, message)],
        snapshot: None,
        snapshot_skipped: None,
        ledgers: Vec::new(),
        request_calls: Vec::new(),
        long_polls: Vec::new(),
        warnings: Vec::new(),
        unsettled: None,
    }
}

/// The report of a run that did not hand back its own: the trace is assembled from what the
/// run published, up to the virtual instant the run had reached.
fn salvaged_report(
    live: &LiveSlot,
    name: String,
    seed: u64,
    end: RunEnd,
    message: String,
) -> Report {
    let live = live_lock(live).take();
    let Some(live) = live else {
        // The run never got as far as setting up: nothing was recorded.
        return failed_report(name, seed, end, message);
    };
    // Whatever the abandoned client does from here on is recorded nowhere: it fails.
    live.network.end_run();
    let check = end.verdict_name().unwrap_or("run");
    // Virtual time cannot move while a poll blocks the thread, nor once the run stopped.
    let end_ms = live.virtual_ms().max(live.watchdog.last_poll_ms());
    let assembled = assemble::assemble(
        live.header,
        end_ms,
        live.clients,
        live.calls.snapshot(),
        live.recorder,
        &live.network,
        &live.endpoints,
    );
    Report {
        name,
        seed,
        trace: assembled.trace,
        end,
        verdicts: vec![Verdict::fail(check, message)],
        snapshot: None,
        snapshot_skipped: None,
        ledgers: assembled.ledgers,
        request_calls: assembled.request_calls,
        long_polls: live.watchdog.long_polls(),
        warnings: Vec::new(),
        unsettled: None,
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
            let report = failed_report(
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

async fn simulate<F, Fut, T, E>(plan: Plan, client: F, live: &LiveSlot) -> Report
where
    F: FnMut(Env) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Debug,
    E: Debug,
{
    let start = tokio::time::Instant::now();
    let clock = VirtualClock::starting_at(start, plan.epoch_unix_ms);
    // Counted by the harness's client and, for any other client, by the endpoints.
    let limit = AttemptLimit::new(plan.max_attempts);
    let endpoints: Vec<(String, Endpoint)> = plan
        .endpoints
        .iter()
        .map(|planned| {
            let gate = Arc::new(limit.clone());
            let endpoint = Endpoint::with_gate(planned.config.clone(), clock, gate);
            (planned.name.clone(), endpoint)
        })
        .collect();
    let network = match plan.backend {
        BackendKind::Real => match RealNet::start(&endpoints, plan.bind) {
            Ok(net) => Net::Real(net),
            Err(error) => {
                return failed_report(
                    plan.name,
                    plan.seed,
                    RunEnd::NotRunnable,
                    format!(
                        "the real backend could not listen on {}: {error}",
                        plan.bind
                    ),
                );
            }
        },
        BackendKind::Sim | BackendKind::Turmoil => {
            let network = Network::new(start, plan.default_latency);
            for (planned, (name, endpoint)) in plan.endpoints.iter().zip(&endpoints) {
                network.add_host(name, Arc::new(EndpointHost::new(endpoint.clone())));
                // The host was added just above, so the name is known.
                let _ = match &planned.latency {
                    Ok(fixed) => network.set_latency(name, *fixed, *fixed),
                    Err(distribution) => network.set_sampled_latency(
                        name,
                        distribution.clone(),
                        crate::rng::Stream::new(plan.seed, &plan::network_latency_label(name)),
                    ),
                };
            }
            // Each client of a fleet keeps its own pool, a connection per call it may have
            // in flight: the cap grows by those of every client after the first, so a fleet
            // of any documented size never meets it, and a single client's is as before.
            let per_client = u64::from(plan.concurrency.min(plan.calls));
            let pools = u64::from(plan.clients.saturating_sub(1)).saturating_mul(per_client);
            network.set_connection_cap(
                crate::backend::sim::MAX_OPEN_CONNECTIONS
                    .saturating_add(usize::try_from(pools).unwrap_or(usize::MAX)),
            );
            faults::schedule(&network, &endpoints, &plan.faults);
            Net::Sim(network)
        }
    };
    let setup = Setup {
        start,
        clock,
        limit,
        endpoints,
        network,
    };
    run_calls(plan, client, live, setup).await
}

/// A run's network and endpoints, made by the backend before the calls start.
struct Setup {
    /// Virtual time zero, on the runtime the calls run on.
    start: tokio::time::Instant,
    /// The calls' clock (the endpoints have their own, on turmoil: one per host runtime).
    clock: VirtualClock,
    /// The attempt limit the endpoints' gates share.
    limit: AttemptLimit,
    endpoints: Vec<(String, Endpoint)>,
    network: Net,
}

/// Makes the run's calls on `setup`'s network, settles, and assembles and judges the trace.
async fn run_calls<F, Fut, T, E>(plan: Plan, mut client: F, live: &LiveSlot, setup: Setup) -> Report
where
    F: FnMut(Env) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Debug,
    E: Debug,
{
    let Setup {
        start,
        clock,
        limit,
        endpoints,
        network,
    } = setup;
    let mut operation = plan.operation.clone();
    operation.url = format!(
        "{}{}",
        network.base_url(&operation.endpoint),
        operation.path
    );

    let recorder = Recorder::new(clock, limit);
    // Every client of a fleet gets an instance of its own (its connection pool, its keys),
    // and lives until the run ends, as a process would.
    let fleet: Vec<Member> = (0..plan.clients)
        .map(|client_id| Member {
            instance: Arc::new(ClientInstance::new(
                network.clone(),
                client_id,
                plan.seed,
                recorder.clone(),
                operation.clone(),
                plan.key_header.clone(),
                plan.dead_letter.clone(),
            )),
            start_ms: start_ms(&plan, client_id),
        })
        .collect();
    let watchdog = Watchdog::default();
    let log = CallLog::default();
    *live_lock(live) = Some(Live {
        header: trace_header(&plan),
        clients: plan.clients,
        recorder: recorder.clone(),
        network: network.clone(),
        endpoints: endpoints.clone(),
        calls: log.clone(),
        watchdog: watchdog.clone(),
        runtime: tokio::runtime::Handle::current(),
        clock,
        thread: Tid::current(),
    });

    let all_calls = calls::drive(
        &mut client,
        Calls {
            count: plan.calls,
            concurrency: plan.concurrency,
            fleet: &fleet,
            clock,
            recorder: &recorder,
            watchdog: &watchdog,
            log: &log,
        },
    );
    // Biased, in a fixed order: the calls first, then the attempt limit, then virtual time.
    let mut end = tokio::select! {
        biased;
        driven = all_calls => match driven {
            Driven::Returned => RunEnd::Completed,
            Driven::Panicked => RunEnd::Panicked,
        },
        _ = recorder.stopped() => RunEnd::AttemptLimit,
        _ = tokio::time::sleep(plan.max_virtual_time) => RunEnd::VirtualTimeLimit,
    };
    let mut unsettled = None;
    if end == RunEnd::Completed {
        let returned = tokio::time::Instant::now();
        // Held data moves when a partition heals; a crash holds nothing.
        // On turmoil, a released hold moves what waited on the link.
        let heals: Vec<tokio::time::Instant> = plan
            .faults
            .iter()
            .filter_map(|fault| match fault {
                PlannedFault::Partition { at, lasts, .. } => Some(start + *at + *lasts),
                PlannedFault::Crash { .. } => None,
            })
            .chain(
                plan.turmoil_windows
                    .iter()
                    .map(|window| start + window.at + window.lasts),
            )
            .collect();
        let deadline = start + plan.max_virtual_time;
        let settling = async {
            let left = settle::settle(&network, &endpoints, &heals, deadline).await;
            // `drain` is the least the run goes on after the last call returned; settling
            // may already have taken longer.
            tokio::time::sleep_until(returned + plan.drain).await;
            left.err().map(|left| left.why())
        };
        // A task a call left behind may go on making attempts: the limit still holds.
        tokio::select! {
            biased;
            _ = recorder.stopped() => end = RunEnd::AttemptLimit,
            left = settling => unsettled = left,
        }
    }
    let end_ms = clock.now_ms();
    // A client that kept its Env gets an error from now on, not answers nobody records.
    network.end_run();
    drop(fleet);
    // The run is over: the waiting thread no longer needs a way in.
    let published = live_lock(live).take();
    let header = published.map_or_else(|| trace_header(&plan), |live| live.header);
    // A served run's calls are the client's, read off its requests.
    let calls = match plan.served_calls {
        Some(calls) => serve::calls_of(&endpoints, calls),
        None => log.snapshot(),
    };
    let assembled = assemble::assemble(
        header,
        end_ms,
        plan.clients,
        calls,
        recorder,
        &network,
        &endpoints,
    );
    let mut verdicts = Vec::new();
    let hint = blame::hint(&plan, &assembled.trace, &end, network.is_real());
    // A panic gets its verdict, with the panic's message, from the thread that waits.
    if let Some(name) = end.verdict_name().filter(|_| end != RunEnd::Panicked) {
        let message = match end {
            RunEnd::VirtualTimeLimit => format!(
                "the run reached limits.max_virtual_time ({}) before every call returned.\
                 {hint}",
                seconds(plan.max_virtual_time.as_millis() as u64)
            ),
            RunEnd::AttemptLimit => format!(
                "the client made limits.max_client_attempts ({}) attempts; the run was \
                 stopped.{hint}",
                plan.max_attempts.unwrap_or_default()
            ),
            _ => "the run did not complete".to_owned(),
        };
        verdicts.push(Verdict::fail(name, message));
    }
    for note in assembled.unmatched {
        verdicts.push(Verdict::fail("unmatched_request", note));
    }
    // A connect the network refused at its cap failed in the harness, not in the service:
    // the run says so, whatever the scenario expects.
    if let Some((refused, cap)) = network.refused_at_cap().filter(|(refused, _)| *refused > 0) {
        verdicts.push(Verdict::fail(
            "connection_cap",
            format!(
                "the simulated network refused {refused} connect(s): it holds at most {cap} \
                 connections open at once (10,000, and one per call in flight for each client of a \
                 fleet after the first), and the client kept that many open without closing them. The calls \
                 that failed on it failed in the harness, not in the service: close idle \
                 connections (a bounded pool, `Connection: close`), or reuse them"
            ),
        ));
    }
    Report {
        name: plan.name,
        seed: plan.seed,
        trace: assembled.trace,
        end,
        verdicts,
        snapshot: None,
        snapshot_skipped: None,
        // A client may block its thread on the real backend: the endpoints run on their own,
        // and no virtual clock stops.
        long_polls: if network.is_real() {
            Vec::new()
        } else {
            watchdog.long_polls()
        },
        ledgers: assembled.ledgers,
        request_calls: assembled.request_calls,
        warnings: Vec::new(),
        unsettled,
    }
}

/// When client `client_id` starts, in ms of virtual time: `operation.start` drawn from the
/// client's own substream, or 0 without one.
fn start_ms(plan: &Plan, client_id: u32) -> u64 {
    let start = match &plan.start {
        None => return 0,
        Some(Ok(fixed)) => *fixed,
        Some(Err(distribution)) => {
            let mut stream =
                crate::rng::Stream::new(plan.seed, &plan::client_start_label(client_id));
            distribution.sample(&mut stream)
        }
    };
    u64::try_from(start.as_millis()).unwrap_or(u64::MAX)
}

/// The trace header: the backend, the seed and the pinned client and server configuration.
fn trace_header(plan: &Plan) -> Vec<(String, String)> {
    let backend = match plan.backend {
        BackendKind::Real => "real",
        BackendKind::Turmoil => "turmoil",
        BackendKind::Sim => "sim",
    };
    let mut header = vec![
        ("backend".to_owned(), backend.to_owned()),
        ("seed".to_owned(), plan.seed.to_string()),
        ("client".to_owned(), HTTP_CLIENT_CONFIG.to_owned()),
        (
            "server".to_owned(),
            "hyper http1, auto_date_header off, header_read_timeout none".to_owned(),
        ),
    ];
    if plan.https_as_http {
        header.push((
            "tls".to_owned(),
            "https URLs are served as plain HTTP in the simulation".to_owned(),
        ));
    }
    header
}

impl crate::scenario::Scenario {
    /// Runs the scenario on the sim backend, calling `client` once per logical call, and
    /// judges the run against `expect:`.
    ///
    /// The seed is the scenario's `seed`, unless `RETRYLAB_SEED` overrides it. A scenario
    /// that cannot run (a feature it uses is not built yet), or a `RETRYLAB_SEED` that is not
    /// a seed, gives a report whose verdict `not_runnable` says why.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let scenario = Scenario::from_yaml_str(
    ///     "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///      operation: { endpoint: api }\nexpect: { attempts: 1 }\n",
    ///     "ok.yaml",
    /// ).unwrap();
    /// let report = scenario.run(|env| async move {
    ///     let response = env.http_client().request(env.operation().request()).await;
    ///     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
    /// });
    /// report.assert();
    /// ```
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run<F, Fut, T, E>(&self, client: F) -> Report
    where
        F: FnMut(Env) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        match self.effective_seed() {
            Ok(seed) => self.run_with_seed(seed, client),
            Err(e) => failed_report(
                self.name.clone(),
                self.seed,
                RunEnd::NotRunnable,
                e.to_string(),
            ),
        }
    }

    /// Like [`run`](Self::run), with an explicit seed.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_with_seed<F, Fut, T, E>(&self, seed: u64, client: F) -> Report
    where
        F: FnMut(Env) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        match Plan::from_scenario(self, seed) {
            Ok(plan) => {
                let epoch = plan.epoch_unix_ms;
                let mut report = run(plan, client);
                report
                    .warnings
                    .extend(self.warnings().iter().map(ToString::to_string));
                // Every run is judged, an abandoned one too: its expectations come out
                // `not judged`, and must_fail and known_failure still apply.
                crate::check::judge(self, &mut report, epoch);
                if self.snapshot && report.end != RunEnd::WallLimit {
                    let snapshot_seed = snapshot_seed(self);
                    if seed == snapshot_seed {
                        report.snapshot =
                            Some(crate::report::snapshot_name(&self.source.file, &self.name));
                    } else if matches!(crate::overrides::seed(), Ok(Some(_))) {
                        // Reproducing another seed: its verdicts are judged, but no snapshot
                        // exists for it, and writing one would leave a stray file.
                        report.snapshot_skipped = Some(format!(
                            "the snapshot was not compared: it is taken with seed \
                             {snapshot_seed}, and RETRYLAB_SEED asks for seed {seed}"
                        ));
                    }
                }
                report
            }
            Err(errors) => failed_report(
                self.name.clone(),
                seed,
                RunEnd::NotRunnable,
                errors.to_string(),
            ),
        }
    }

    /// Runs the scenario with its built-in client (`client:`), once per call.
    ///
    /// `custom:` clients are registered in Rust; running one here gives a `not_runnable`
    /// verdict that says so.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_builtin(&self) -> Report {
        match self.effective_seed() {
            Ok(seed) => self.run_builtin_with_seed(seed),
            Err(e) => failed_report(
                self.name.clone(),
                self.seed,
                RunEnd::NotRunnable,
                e.to_string(),
            ),
        }
    }

    /// Like [`run_builtin`](Self::run_builtin), with an explicit seed.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_builtin_with_seed(&self, seed: u64) -> Report {
        let policy = match self.client.policy() {
            Ok(policy) => policy,
            Err(why) => {
                // An invalid scenario gets every error loading it gives, as `run_with_seed`
                // does; only a valid one (a custom client) gets here for the policy alone.
                let error = match self.validate() {
                    Err(errors) => errors.to_string(),
                    Ok(()) => self.error_at("client", why.to_string()).to_string(),
                };
                return failed_report(self.name.clone(), seed, RunEnd::NotRunnable, error);
            }
        };
        // One reference client per client instance: a fleet's clients keep their policy
        // state (a retry quota, a rate estimate) apart, as separate processes would.
        let timeout = self.client.attempt_timeout().map(|t| t.as_duration());
        let shared = |policy| {
            let mut client = crate::client::ReferenceClient::new(policy);
            if let Some(timeout) = timeout {
                client = client.attempt_timeout(timeout);
            }
            client.shared()
        };
        let mut clients = vec![shared(policy)];
        for _ in 1..self.operation.clients.max(1) {
            // The same spec gave a policy just above.
            match self.client.policy() {
                Ok(policy) => clients.push(shared(policy)),
                Err(why) => {
                    let error = self.error_at("client", why.to_string()).to_string();
                    return failed_report(self.name.clone(), seed, RunEnd::NotRunnable, error);
                }
            }
        }
        self.run_with_seed(seed, move |env| {
            // The run makes exactly `operation.clients` instances, indexed from 0.
            let client = clients[env.client_index() as usize].clone();
            async move { crate::client::ReferenceClient::call_shared(&client, &env).await }
        })
    }

    /// The seed a run uses: `RETRYLAB_SEED` when set, else `seed:`. An error when
    /// `RETRYLAB_SEED` is set to something that is not a seed (see
    /// [`overrides`](crate::overrides)): a run with another seed than the one asked for
    /// would reproduce nothing.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nseed: 7\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// // Tests run with `RETRYLAB_SEED` unset.
    /// assert_eq!(s.effective_seed(), Ok(7));
    /// ```
    pub fn effective_seed(&self) -> Result<u64, crate::overrides::SeedOverrideError> {
        crate::overrides::seed().map(|over| over.unwrap_or(self.seed))
    }
}

/// Snapshots are taken for one seed: the scenario's `seed`, or the first of its `seeds:`
/// sweep when the sweep leaves `seed` out (so a sweep is never left without one). The other
/// seeds of a sweep, and other seeds asked for with `RETRYLAB_SEED`, are judged without one.
fn snapshot_seed(scenario: &crate::scenario::Scenario) -> u64 {
    match &scenario.seeds {
        Some(range) if !range.iter().any(|s| s == scenario.seed) => range.start,
        _ => scenario.seed,
    }
}
