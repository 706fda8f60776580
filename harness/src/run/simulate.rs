//! A run on its thread's runtime: the backend's network and endpoints set up, the calls
//! made and settled, the trace assembled, and the verdicts of the run itself.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use retrylab_endpoints::{Endpoint, VirtualClock};

use super::calls::{self, CallLog, Calls, Driven, Member};
use super::live::{Live, LiveSlot, live_lock};
use super::plan::{self, Plan, PlannedFault};
use super::thread_time::Tid;
use super::watchdog::Watchdog;
use super::{blame, faults, served_calls, settle};
use crate::backend::real::RealNet;
use crate::backend::sim::{EndpointHost, Network};
use crate::backend::{AttemptLimit, Net};
use crate::env::{ClientInstance, Env, HTTP_CLIENT_CONFIG};
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::BackendKind;
use crate::trace::record::Recorder;
use crate::trace::{assemble, seconds};

pub(super) async fn simulate<F, Fut, T, E>(plan: Plan, client: F, live: &LiveSlot) -> Report
where
    F: FnMut(Env) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Debug,
    E: Debug,
{
    let start = tokio::time::Instant::now();
    let real = plan.backend == BackendKind::Real;
    // On real sockets the wall clock is the real one, read beside `start`.
    let epoch_unix_ms = if real {
        crate::backend::real::wall_clock_unix_ms()
    } else {
        plan.epoch_unix_ms
    };
    let clock = VirtualClock::starting_at(start, epoch_unix_ms);
    // Counted by the harness's client and, for any other client, by the endpoints.
    let limit = AttemptLimit::new(plan.max_attempts);
    let endpoints: Vec<(String, Endpoint)> = plan
        .endpoints
        .iter()
        .map(|planned| {
            let gate = Arc::new(limit.clone());
            let config = planned.config.clone().date_header(real);
            let endpoint = Endpoint::with_gate(config, clock, gate);
            (planned.name.clone(), endpoint)
        })
        .collect();
    let network = match plan.backend {
        BackendKind::Real => match RealNet::start(&endpoints, plan.bind) {
            Ok(net) => Net::Real(net),
            Err(error) => {
                return Report::not_run(
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
pub(super) struct Setup {
    /// Virtual time zero, on the runtime the calls run on.
    pub(super) start: tokio::time::Instant,
    /// The calls' clock (the endpoints have their own, on turmoil: one per host runtime).
    pub(super) clock: VirtualClock,
    /// The attempt limit the endpoints' gates share.
    pub(super) limit: AttemptLimit,
    pub(super) endpoints: Vec<(String, Endpoint)>,
    pub(super) network: Net,
}

/// Makes the run's calls on `setup`'s network, settles, and assembles and judges the trace.
pub(super) async fn run_calls<F, Fut, T, E>(
    plan: Plan,
    mut client: F,
    live: &LiveSlot,
    setup: Setup,
) -> Report
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
    let fleet = fleet(&plan, &network, &recorder, &operation);
    let watchdog = Watchdog::default();
    let log = CallLog::default();
    *live_lock(live) = Some(Live {
        header: trace_header(&plan, clock),
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
        let settling = settle_after_calls(&plan, start, &network, &endpoints);
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
    let header = published.map_or_else(|| trace_header(&plan, clock), |live| live.header);
    // A served run's calls are the client's, read off its requests.
    let calls = match plan.served_calls {
        Some(calls) => served_calls::calls_of(&endpoints, calls),
        None => log.snapshot(),
    };
    let mut assembled = assemble::assemble(
        header,
        end_ms,
        plan.clients,
        calls,
        recorder,
        &network,
        &endpoints,
    );
    let unmatched = std::mem::take(&mut assembled.unmatched);
    let verdicts = run_verdicts(&plan, &end, &assembled.trace, unmatched, &network);
    // A client may block its thread on the real backend: the endpoints run on their own, and
    // no virtual clock stops.
    let long_polls = if network.is_real() {
        Vec::new()
    } else {
        watchdog.long_polls()
    };
    Report::of_run(
        plan.name, plan.seed, end, assembled, long_polls, unsettled, verdicts,
    )
}

/// Every client of a fleet gets an instance of its own (its connection pool, its keys),
/// which lives until the run ends, as a process would.
fn fleet(
    plan: &Plan,
    network: &Net,
    recorder: &Recorder,
    operation: &crate::env::Operation,
) -> Vec<Member> {
    (0..plan.clients)
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
            start_ms: calls::start_ms(plan, client_id),
        })
        .collect()
}

/// After the last call returned: waits until the network is quiet (held data moves when a
/// partition heals, or a turmoil hold is released; a crash holds nothing) and `drain` has
/// passed, and says what was still moving at `limits.max_virtual_time`.
async fn settle_after_calls(
    plan: &Plan,
    start: tokio::time::Instant,
    network: &Net,
    endpoints: &[(String, Endpoint)],
) -> Option<String> {
    let returned = tokio::time::Instant::now();
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
    let left = settle::settle(network, endpoints, &heals, deadline).await;
    // `drain` is the least the run goes on after the last call returned; settling may
    // already have taken longer.
    tokio::time::sleep_until(returned + plan.drain).await;
    left.err().map(|left| left.why())
}

/// The verdicts of the run itself, which no scenario expects: a limit that stopped it,
/// requests that matched no route, connects refused at the network's cap.
fn run_verdicts(
    plan: &Plan,
    end: &RunEnd,
    trace: &crate::trace::Trace,
    unmatched: Vec<String>,
    network: &Net,
) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let hint = blame::hint(plan, trace, end, network.is_real());
    // A panic gets its verdict, with the panic's message, from the thread that waits.
    if let Some(name) = end.verdict_name().filter(|_| *end != RunEnd::Panicked) {
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
    for note in unmatched {
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
    verdicts
}

/// The trace header: the backend, the seed and the pinned client and server configuration;
/// on real sockets, the real wall clock the run started at ([`crate::trace::EPOCH_KEY`]).
fn trace_header(plan: &Plan, clock: VirtualClock) -> Vec<(String, String)> {
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
            if plan.backend == BackendKind::Real {
                "hyper http1, auto_date_header off (the endpoint writes Date from the run's \
                 clock), header_read_timeout none"
            } else {
                "hyper http1, auto_date_header off, header_read_timeout none"
            }
            .to_owned(),
        ),
    ];
    header.extend(crate::env::http2_header(
        plan.endpoints.iter().map(|e| &e.config),
    ));
    if plan.backend == BackendKind::Real {
        header.push(crate::trace::epoch_entry(clock.epoch_unix_ms));
    }
    if plan.https_as_http {
        header.push((
            "tls".to_owned(),
            "https URLs are served as plain HTTP in the simulation".to_owned(),
        ));
    }
    header
}
