//! Running a planned scenario on the turmoil backend (docs/architecture.md#the-turmoil-backend).
//!
//! turmoil gives each host a current-thread runtime of its own on paused time and steps
//! them all, one tick at a time, from outside any runtime: the run's thread builds the
//! simulation here and steps it, instead of blocking on one runtime as the other backends
//! do. Each endpoint is a host named after it; the calls run in a client host, through the
//! same code as on the other backends (`run_calls`), so the trace, settling and the
//! verdicts are made the same way.

use std::cell::RefCell;
use std::fmt::Debug;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use retrylab_endpoints::turmoil::Signals;
use retrylab_endpoints::{ConnIds, Endpoint, LatencyDistribution, ScriptState, VirtualClock};

use super::live::LiveSlot;
use super::plan::{Plan, PlannedFault, TurmoilWindow, TurmoilWindowKind};
use super::simulate::{Setup, run_calls};
use super::wall::Stop;
use crate::backend::turmoil::{LinkLatency, TICK, TurmoilNet};
use crate::backend::{AttemptLimit, LinkFault, Net};
use crate::env::Env;
use crate::report::Report;

/// Connections an endpoint's listener holds before they are accepted, and segments a
/// connection holds before they are read. turmoil panics when a backlog is full (a kernel
/// would refuse the connect); an endpoint accepts at once, so only a client opening this
/// many connections within one tick fills it.
const TCP_CAPACITY: usize = 4096;

/// The name of the client's host; an endpoint may be named so too, and then the client's
/// host gets a `_` more until the name is free.
const CLIENT_HOST: &str = "client";

/// Runs `plan` in a turmoil simulation on this thread: `Ok(Some)` with the report,
/// `Ok(None)` when `limits.wall`'s `stop` was raised, `Err` saying why the simulation
/// failed (a host's software returned an error or panicked).
pub(super) fn drive<F, Fut, T, E>(
    plan: Plan,
    client: F,
    live: &LiveSlot,
    stop: &Stop,
) -> Result<Option<Report>, String>
where
    F: FnMut(Env) -> Fut + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    let mut latencies = Vec::with_capacity(plan.endpoints.len());
    for planned in &plan.endpoints {
        latencies.push(link_latency(&planned.name, &planned.latency)?);
    }
    let (min_latency, max_latency, curve) = turmoil_latency(&latencies, plan.default_latency)?;
    let longest = latencies
        .iter()
        .map(|latency| latency.longest())
        .fold(plan.default_latency, Duration::max);
    let mut sim = simulation(&plan, min_latency, max_latency, curve);

    let limit = AttemptLimit::new(plan.max_attempts);
    let signals = Signals::new();
    let endpoints = endpoint_hosts(&mut sim, &plan, &limit, &signals)?;
    // The stepping thread's own handles, for the crashes it applies.
    let hosts = endpoints.clone();

    let mut client_host = CLIENT_HOST.to_owned();
    while plan.endpoints.iter().any(|p| p.name == client_host) {
        client_host.push('_');
    }
    let actions = link_actions(&plan.turmoil_windows);
    let crashes = host_actions(&plan.faults);
    let names = plan
        .endpoints
        .iter()
        .zip(&latencies)
        .map(|(p, latency)| (p.name.clone(), *latency))
        .collect();
    let net = TurmoilNet::new(names, longest, plan.seed, signals);
    let network = Net::Turmoil(net.clone());
    // A drawn latency is every link's, set above; a fixed one differing from the default
    // is set on its link.
    let links: Vec<(String, Duration)> = plan
        .endpoints
        .iter()
        .zip(&latencies)
        .filter_map(|(planned, latency)| match latency {
            LinkLatency::Fixed(fixed) if *fixed != plan.default_latency => {
                Some((planned.name.clone(), *fixed))
            }
            _ => None,
        })
        .collect();

    let handed: Rc<RefCell<Option<Report>>> = Rc::default();
    let out = Rc::clone(&handed);
    let live = Arc::clone(live);
    sim.client(client_host.as_str(), async move {
        // First polled at the first step, at time zero of this host's runtime.
        let start = tokio::time::Instant::now();
        let clock = VirtualClock::starting_at(start, plan.epoch_unix_ms);
        let setup = Setup {
            start,
            clock,
            limit,
            endpoints,
            network,
        };
        let report = run_calls(plan, client, &live, setup).await;
        *out.borrow_mut() = Some(report);
        Ok(())
    });
    for (name, latency) in &links {
        sim.set_link_latency(client_host.as_str(), name.as_str(), *latency);
    }

    let mut due = actions.iter().peekable();
    let mut due_crashes = crashes.iter().peekable();
    loop {
        // Between steps, as `until_stopped` checks at each poll on the other backends.
        if stop.is_raised() {
            return Ok(None);
        }
        // A fault at `at` is applied before the step whose hosts run at `at`.
        let now = sim.elapsed();
        while let Some(action) = due_crashes.next_if(|a| a.at <= now) {
            apply_crash(&mut sim, &hosts, &net, action, now)?;
        }
        while let Some(action) = due.next_if(|a| a.at <= now) {
            apply_link_fault(&mut sim, &client_host, &net, action, now);
        }
        match sim.step() {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => return Err(format!("the turmoil simulation failed: {error}")),
        }
    }
    let report = handed.borrow_mut().take();
    report
        .map(Some)
        .ok_or_else(|| "the client host finished without handing back a report".to_owned())
}

/// The simulation of a run: seeded with the run's seed, its clock at the epoch in ticks of
/// [`TICK`], its links' latencies, capacity and random loss as the plan says.
fn simulation<'a>(
    plan: &Plan,
    min_latency: Duration,
    max_latency: Duration,
    curve: Option<f64>,
) -> turmoil::Sim<'a> {
    // The run ends itself at `max_virtual_time` (settling included) plus `drain`; turmoil's
    // own limit only catches what would run past that.
    let duration = plan
        .max_virtual_time
        .saturating_add(plan.drain)
        .saturating_add(Duration::from_secs(1));
    let mut builder = turmoil::Builder::new();
    builder
        .rng_seed(plan.seed)
        .epoch(UNIX_EPOCH + Duration::from_millis(plan.epoch_unix_ms))
        .tick_duration(TICK)
        .simulation_duration(duration)
        .min_message_latency(min_latency)
        .max_message_latency(max_latency)
        .tcp_capacity(TCP_CAPACITY);
    // turmoil's random loss: at each message, a working link starts dropping with
    // `fail_rate`, a dropping one recovers with `repair_rate`, drawn from the seeded
    // generator, so the same seed drops the same messages.
    if let Some((fail_rate, repair_rate)) = plan.turmoil_loss {
        builder.fail_rate(fail_rate).repair_rate(repair_rate);
    }
    let sim = builder.build();
    if let Some(curve) = curve {
        sim.set_message_latency_curve(curve);
    }
    sim
}

/// A host per endpoint of the plan, each endpoint behind the run's attempt limit.
fn endpoint_hosts(
    sim: &mut turmoil::Sim<'_>,
    plan: &Plan,
    limit: &AttemptLimit,
    signals: &Signals,
) -> Result<Vec<(String, Endpoint)>, String> {
    let ids = ConnIds::new();
    let mut endpoints = Vec::with_capacity(plan.endpoints.len());
    for planned in &plan.endpoints {
        let config = planned.config.clone();
        let gate = Arc::new(limit.clone());
        let epoch = plan.epoch_unix_ms;
        // turmoil starts the host's software inside the host's runtime as it registers the
        // host, before the first step: the endpoint's clock reads that runtime's time, whose
        // zero is the simulation's.
        let made = retrylab_endpoints::turmoil::host_with_signals(
            sim,
            planned.name.as_str(),
            ids.clone(),
            signals.clone(),
            move || {
                let clock = VirtualClock::starting_at(tokio::time::Instant::now(), epoch);
                Endpoint::with_gate(config, clock, gate)
            },
        );
        let endpoint = made.ok_or_else(|| {
            format!(
                "turmoil did not start endpoint `{}`'s host when it was added",
                planned.name
            )
        })?;
        endpoints.push((planned.name.clone(), endpoint));
    }
    Ok(endpoints)
}

/// Applies a crash, a host crash or a bounce due at `now` (before the step whose hosts run
/// at `now`).
fn apply_crash(
    sim: &mut turmoil::Sim<'_>,
    hosts: &[(String, Endpoint)],
    net: &TurmoilNet,
    action: &HostAction,
    now: Duration,
) -> Result<(), String> {
    let name = action.endpoint.as_str();
    // Loading checked that a crash names an endpoint of the scenario, each of which
    // is a host here: one that is not is a fault of the plan, not a crash to skip.
    let endpoint = hosts
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, e)| e)
        .ok_or_else(|| {
            format!("a crash names `{name}`, which is not an endpoint host of the run")
        })?;
    let at_ms = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
    match action.step {
        // The endpoint first: no step can commit or answer from now on.
        CrashStep::Endpoint => {
            endpoint.crash();
            net.record(at_ms, name, LinkFault::Crashed);
        }
        CrashStep::Host => sim.crash(name),
        CrashStep::Bounce(scripts) => {
            endpoint.restart(scripts);
            sim.bounce(name);
            net.record(at_ms, name, LinkFault::Bounced);
        }
    }
    Ok(())
}

/// Applies a turmoil link fault due at `now` between the client's host and an endpoint's.
fn apply_link_fault(
    sim: &mut turmoil::Sim<'_>,
    client_host: &str,
    net: &TurmoilNet,
    action: &LinkAction,
    now: Duration,
) {
    let (client, endpoint) = (client_host, action.endpoint.as_str());
    match action.fault {
        LinkFault::Held => sim.hold(client, endpoint),
        LinkFault::Released => sim.release(client, endpoint),
        LinkFault::Partitioned => sim.partition(client, endpoint),
        LinkFault::Repaired => sim.repair(client, endpoint),
        // Host actions, applied above.
        LinkFault::Crashed | LinkFault::Bounced => {}
    }
    let at_ms = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
    net.record(at_ms, endpoint, action.fault);
}

/// The latency of the link to endpoint `name`, planned as `latency`: fixed, or
/// `turmoil.latency`'s exponential, whose cap loading requires on this backend.
fn link_latency(
    name: &str,
    latency: &Result<Duration, LatencyDistribution>,
) -> Result<LinkLatency, String> {
    match latency {
        Ok(fixed) => Ok(LinkLatency::Fixed(*fixed)),
        Err(LatencyDistribution::Exponential {
            mean_ms,
            max_ms: Some(max_ms),
        }) if *mean_ms > 0 => Ok(LinkLatency::Exponential {
            mean: Duration::from_millis(*mean_ms),
            max: Duration::from_millis(*max_ms),
        }),
        // Loading refuses them on this backend (validate/network.rs, validate/turmoil.rs).
        Err(_) => Err(format!(
            "endpoint `{name}` has a latency distribution the turmoil backend does not run: \
             turmoil draws an exponential with a positive mean and a cap only"
        )),
    }
}

/// turmoil's latency for every link, from the links' `latencies` and the network's
/// `default` fixed one: its minimum and maximum message latency, and the exponential
/// curve's rate when the latency is drawn. turmoil draws `min + floor((max - min) * x)`
/// milliseconds with `x` exponential of that rate, so `min = 0`, `max = cap` and rate
/// `cap / mean` make an exponential of mean `mean`, truncated and capped. One curve is
/// turmoil's for all links, so a drawn latency must be every link's (it comes from
/// `turmoil.latency`, which is).
fn turmoil_latency(
    latencies: &[LinkLatency],
    default: Duration,
) -> Result<(Duration, Duration, Option<f64>), String> {
    let drawn = latencies.iter().find_map(|latency| match *latency {
        LinkLatency::Exponential { mean, max } => Some((mean, max)),
        LinkLatency::Fixed(_) => None,
    });
    let Some((mean, max)) = drawn else {
        return Ok((default, default, None));
    };
    if latencies
        .iter()
        .any(|latency| *latency != LinkLatency::Exponential { mean, max })
    {
        return Err(
            "the links' latencies differ and one is drawn: turmoil draws one curve for all \
             links"
                .to_owned(),
        );
    }
    Ok((
        Duration::ZERO,
        max,
        Some(max.as_millis() as f64 / mean.as_millis() as f64),
    ))
}

/// A change to the link between the client's host and an endpoint's, due at `at`.
struct LinkAction {
    at: Duration,
    endpoint: String,
    fault: LinkFault,
}

/// A crash of an endpoint's host, or its bounce, due at `at`.
struct HostAction {
    at: Duration,
    endpoint: String,
    step: CrashStep,
}

/// The parts of a crash and its bounce, in the order they are applied at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CrashStep {
    /// The host goes, with its software and connections, a tick after the endpoint's crash.
    Host,
    /// The host comes back, with the endpoint's scripts kept or started over.
    Bounce(ScriptState),
    /// The endpoint crashes and its host refuses connects from now on.
    Endpoint,
}

impl CrashStep {
    /// Its place among the steps due at one instant.
    fn order(self) -> u8 {
        match self {
            CrashStep::Host => 0,
            CrashStep::Bounce(_) => 1,
            CrashStep::Endpoint => 2,
        }
    }
}

/// Each crash of `faults` and its bounce as actions, by instant.
///
/// turmoil delivers a message sent between steps a tick sooner than one a host sends as it
/// runs, so the host is crashed a tick after the endpoint: the resets of its connections
/// then leave as they would have at the crash, and reach the client one latency after it.
/// At one instant the host of a crash goes before it is bounced (a crash 1ms long), and a
/// bounce comes before a crash (validation lets a crash start where the one before ends).
fn host_actions(faults: &[PlannedFault]) -> Vec<HostAction> {
    let mut actions: Vec<HostAction> = faults
        .iter()
        .filter_map(|fault| match fault {
            PlannedFault::Crash {
                at,
                endpoint,
                restart_after,
                scripts,
            } => Some((*at, endpoint, *restart_after, *scripts)),
            // Refused on this backend when the scenario loads.
            PlannedFault::Partition { .. } => None,
        })
        .flat_map(|(at, endpoint, back_after, scripts)| {
            let action = |at, step| HostAction {
                at,
                endpoint: endpoint.clone(),
                step,
            };
            let bounce = back_after
                .map(|after| action(at.saturating_add(after), CrashStep::Bounce(scripts)));
            [
                action(at, CrashStep::Endpoint),
                action(at.saturating_add(TICK), CrashStep::Host),
            ]
            .into_iter()
            .chain(bounce)
        })
        .collect();
    actions.sort_by_key(|a| (a.at, a.step.order()));
    actions
}

/// Each window's start and end as actions, by instant. At one instant every end comes
/// before every start: validation lets two windows of one kind on one endpoint touch (one
/// ends where the next starts) in any file order, and the link must then stay faulted
/// rather than be released by the earlier window's end after the later one began.
fn link_actions(windows: &[TurmoilWindow]) -> Vec<LinkAction> {
    let mut actions: Vec<LinkAction> = windows
        .iter()
        .flat_map(|w| {
            let (begin, end) = match w.kind {
                TurmoilWindowKind::Hold => (LinkFault::Held, LinkFault::Released),
                TurmoilWindowKind::Partition => (LinkFault::Partitioned, LinkFault::Repaired),
            };
            [(w.at, begin), (w.at.saturating_add(w.lasts), end)].map(|(at, fault)| LinkAction {
                at,
                endpoint: w.endpoint.clone(),
                fault,
            })
        })
        .collect();
    actions.sort_by_key(|a| (a.at, starts_a_window(a.fault)));
    actions
}

/// Whether `fault` starts a window (sorts after the ends at the same instant).
fn starts_a_window(fault: LinkFault) -> bool {
    matches!(fault, LinkFault::Held | LinkFault::Partitioned)
}

/// The panics of a run whose simulation panicked, with what turmoil's own panics mean: it
/// panics where a kernel would refuse or fail a call.
pub(super) fn explain_panics(mut panics: Vec<String>) -> Vec<String> {
    for panic in &mut panics {
        if panic.contains("server socket buffer full") {
            *panic = format!(
                "{panic} (turmoil's limit: more than {TCP_CAPACITY} connections waited to be \
                 accepted by one endpoint within one tick, and turmoil panics where a kernel \
                 would refuse the connect)"
            );
        } else if panic.contains("ports exhausted") {
            *panic = format!(
                "{panic} (turmoil's limit: the client host had every ephemeral port, 16,384, \
                 in use at once)"
            );
        }
    }
    panics
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(kind: TurmoilWindowKind, at: u64, lasts: u64) -> TurmoilWindow {
        TurmoilWindow {
            kind,
            endpoint: "api".to_owned(),
            at: Duration::from_millis(at),
            lasts: Duration::from_millis(lasts),
        }
    }

    #[test]
    fn touching_windows_in_any_file_order_keep_the_link_faulted() {
        // The later window first in the file: its start at 100ms must not be undone by the
        // earlier window's end at the same instant.
        let actions = link_actions(&[
            window(TurmoilWindowKind::Hold, 100, 100),
            window(TurmoilWindowKind::Hold, 0, 100),
        ]);
        let got: Vec<(u128, LinkFault)> = actions
            .iter()
            .map(|a| (a.at.as_millis(), a.fault))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, LinkFault::Held),
                (100, LinkFault::Released),
                (100, LinkFault::Held),
                (200, LinkFault::Released),
            ]
        );
        let actions = link_actions(&[
            window(TurmoilWindowKind::Partition, 50, 50),
            window(TurmoilWindowKind::Partition, 0, 50),
        ]);
        let got: Vec<LinkFault> = actions.iter().map(|a| a.fault).collect();
        assert_eq!(
            got,
            vec![
                LinkFault::Partitioned,
                LinkFault::Repaired,
                LinkFault::Partitioned,
                LinkFault::Repaired,
            ]
        );
    }

    #[test]
    fn a_crash_goes_endpoint_first_then_host_a_tick_later_and_bounces_after_its_host_went() {
        let crash = |at: u64, back: Option<u64>| PlannedFault::Crash {
            at: Duration::from_millis(at),
            endpoint: "api".to_owned(),
            restart_after: back.map(Duration::from_millis),
            scripts: ScriptState::Keep,
        };
        // A crash 1ms long: its host goes and comes back at the same instant, in that order;
        // a crash starting where the one before ends comes after that one's bounce.
        let actions = host_actions(&[crash(21, Some(4)), crash(20, Some(1))]);
        let got: Vec<(u128, CrashStep)> =
            actions.iter().map(|a| (a.at.as_millis(), a.step)).collect();
        let bounce = CrashStep::Bounce(ScriptState::Keep);
        assert_eq!(
            got,
            vec![
                (20, CrashStep::Endpoint),
                (21, CrashStep::Host),
                (21, bounce),
                (21, CrashStep::Endpoint),
                (22, CrashStep::Host),
                (25, bounce),
            ]
        );
    }

    #[test]
    fn a_drawn_latency_is_turmoils_curve_from_zero_to_the_cap() {
        let ms = Duration::from_millis;
        let drawn = LinkLatency::Exponential {
            mean: ms(20),
            max: ms(80),
        };
        // Rate 4: x has mean 1/4, so 80ms * x has mean 20ms, which turmoil floors and caps.
        assert_eq!(
            turmoil_latency(&[drawn, drawn], ms(0)),
            Ok((ms(0), ms(80), Some(4.0)))
        );
        assert_eq!(
            turmoil_latency(&[LinkLatency::Fixed(ms(3))], ms(2)),
            Ok((ms(2), ms(2), None))
        );
        assert!(turmoil_latency(&[drawn, LinkLatency::Fixed(ms(3))], ms(0)).is_err());
        let uncapped = Err(LatencyDistribution::Exponential {
            mean_ms: 20,
            max_ms: None,
        });
        assert!(link_latency("api", &uncapped).is_err());
        let capped = Err(LatencyDistribution::Exponential {
            mean_ms: 20,
            max_ms: Some(80),
        });
        assert_eq!(link_latency("api", &capped), Ok(drawn));
    }

    #[test]
    fn turmoils_own_panics_say_what_they_mean() {
        let explained = explain_panics(vec![
            "0.0.0.0:80 server socket buffer full".to_owned(),
            "Host: 'client' ports exhausted".to_owned(),
            "the client's own panic".to_owned(),
        ]);
        assert!(
            explained[0].contains("more than 4096 connections waited to be accepted"),
            "{}",
            explained[0]
        );
        assert!(
            explained[1].contains("every ephemeral port"),
            "{}",
            explained[1]
        );
        assert_eq!(explained[2], "the client's own panic");
    }
}
