//! The logical calls of a run: each client's started in call order, up to
//! `operation.concurrency` of one client in flight at once, the clients of a fleet from the
//! instants they start (`operation.start`), each watched for blocking polls and guarded against panics, and each
//! filed in a [`CallLog`] the moment it starts and the moment it returns.
//!
//! The log is shared with the thread that started the run, so a run abandoned at
//! `limits.wall` still reports the calls it made (docs/architecture.md#the-run-thread-and-its-guards).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use retrylab_endpoints::VirtualClock;

use super::plan::Plan;
use super::watchdog::Watchdog;
use crate::env::{ClientInstance, Env};
use crate::trace::record::Recorder;
use crate::trace::{Call, CallResult};

/// A call's value already formatted with `{:?}`, which formats as that text again: a
/// registered client's values (and a command's exits) read in the trace exactly as a closure
/// given to [`Scenario::run`](crate::Scenario::run) would write them (`Ok(200)`, not
/// `Ok("200")`).
pub(crate) struct Formatted(pub(crate) String);

impl Debug for Formatted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The calls of one run, shared with the thread that waits for it.
#[derive(Debug, Clone, Default)]
pub(super) struct CallLog {
    calls: Arc<Mutex<Filed>>,
}

/// The calls filed, in the order they started, and where each (client, call) is in it: the
/// calls of a fleet's clients interleave. Looked up, never iterated.
#[derive(Debug, Default)]
struct Filed {
    calls: Vec<Call>,
    at: BTreeMap<(u32, u32), usize>,
}

impl CallLog {
    fn lock(&self) -> MutexGuard<'_, Filed> {
        // Calls are only ever appended or completed in place: a poisoned lock still holds
        // a consistent list.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calls so far, in the order they started (call order for one client); calls
    /// still running are `Stopped`, with no end.
    pub(super) fn snapshot(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    fn start(&self, client_id: u32, call_id: u32, at_ms: u64) {
        let mut filed = self.lock();
        let index = filed.calls.len();
        filed.at.insert((client_id, call_id), index);
        filed.calls.push(Call {
            client_id,
            call_id,
            start_ms: at_ms,
            end_ms: None,
            result: CallResult::Stopped,
        });
    }

    fn finish(&self, client_id: u32, call_id: u32, at_ms: u64, result: CallResult) {
        let mut filed = self.lock();
        let Some(&index) = filed.at.get(&(client_id, call_id)) else {
            return;
        };
        if let Some(call) = filed.calls.get_mut(index) {
            call.end_ms = Some(at_ms);
            call.result = result;
        }
    }
}

/// How driving the calls ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Driven {
    /// Every call returned.
    Returned,
    /// A call panicked (the message is filed by the panic hook); the calls still in flight
    /// were dropped.
    Panicked,
}

/// One client of the run: its instance and the virtual instant (ms) it starts at.
pub(super) struct Member {
    pub(super) instance: Arc<ClientInstance>,
    pub(super) start_ms: u64,
}

/// What [`drive`] needs besides the client.
pub(super) struct Calls<'a> {
    /// Calls per client.
    pub(super) count: u32,
    pub(super) concurrency: u32,
    /// The clients, by client index: one, or a fleet.
    pub(super) fleet: &'a [Member],
    pub(super) clock: VirtualClock,
    pub(super) recorder: &'a Recorder,
    pub(super) watchdog: &'a Watchdog,
    pub(super) log: &'a CallLog,
}

/// Runs every call of every client: each client's calls `concurrency` at a time, in call
/// order, from the instant the client starts.
///
/// The futures in flight are polled in the order their wake-ups arrive, and on the
/// single-threaded paused runtime that order is a function of the scenario and seed alone,
/// so concurrent calls stay deterministic.
pub(super) async fn drive<F, Fut, T, E>(client: &mut F, calls: Calls<'_>) -> Driven
where
    F: FnMut(Env) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Debug,
    E: Debug,
{
    let Calls {
        count,
        concurrency,
        fleet,
        clock,
        recorder,
        watchdog,
        log,
    } = calls;
    let mut start = |client_id: u32, call_id: u32| {
        let instance = &fleet.get(client_id as usize)?.instance;
        log.start(client_id, call_id, clock.now_ms());
        let env = Env::new(instance.clone(), call_id);
        // The closure itself may panic before it returns a future.
        let call = std::panic::catch_unwind(AssertUnwindSafe(|| client(env.clone()))).ok()?;
        // Named while polled, for a client built once per run (env/polled.rs).
        let call = crate::env::polled(env, call);
        let recorder = recorder.clone();
        let watched = watchdog.watch(call, clock, move || recorder.attempt_count());
        let call = AssertUnwindSafe(watched).catch_unwind();
        Some(call.map(move |result| (client_id, call_id, result)))
    };
    match fleet {
        [one] if one.start_ms == 0 && concurrency <= 1 => {
            // One client, one call at a time: awaited directly, which spares every wake-up
            // of the call the detour through a set of futures.
            for call_id in 0..count {
                let Some(call) = start(0, call_id) else {
                    return Driven::Panicked;
                };
                let (_, _, result) = call.await;
                if finish(log, 0, call_id, clock, result) == Driven::Panicked {
                    return Driven::Panicked;
                }
            }
            return Driven::Returned;
        }
        [one] if one.start_ms == 0 => {
            let mut in_flight = FuturesUnordered::new();
            let mut next = 0;
            loop {
                while next < count && in_flight.len() < concurrency as usize {
                    let call_id = next;
                    next += 1;
                    let Some(call) = start(0, call_id) else {
                        return Driven::Panicked;
                    };
                    in_flight.push(call);
                }
                let Some((_, call_id, result)) = in_flight.next().await else {
                    return Driven::Returned;
                };
                if finish(log, 0, call_id, clock, result) == Driven::Panicked {
                    return Driven::Panicked;
                }
            }
        }
        _ => {}
    }
    // A fleet. Clients start in the order of their start instants, clients of one instant
    // in index order, each with its first `concurrency` calls; at an instant, the clients
    // due start before any call in flight is polled again.
    let mut order: Vec<u32> = (0..fleet.len() as u32).collect();
    order.sort_by_key(|&i| (fleet[i as usize].start_ms, i));
    let mut order = order.into_iter().peekable();
    let mut next_call = vec![0u32; fleet.len()];
    let mut in_flight = FuturesUnordered::new();
    loop {
        let now = clock.now_ms();
        while let Some(client_id) = order.next_if(|&i| fleet[i as usize].start_ms <= now) {
            for _ in 0..concurrency.min(count) {
                let call_id = next_call[client_id as usize];
                next_call[client_id as usize] += 1;
                let Some(call) = start(client_id, call_id) else {
                    return Driven::Panicked;
                };
                in_flight.push(call);
            }
        }
        let due = order
            .peek()
            .map(|&i| clock.start + Duration::from_millis(fleet[i as usize].start_ms));
        if in_flight.is_empty() && due.is_none() {
            return Driven::Returned;
        }
        let next_start = async {
            match due {
                Some(due) => tokio::time::sleep_until(due).await,
                None => std::future::pending().await,
            }
        };
        // Biased: a call that returns at the instant a client is due is filed first; the
        // client starts on the next turn of the loop, at the same instant.
        tokio::select! {
            biased;
            Some((client_id, call_id, result)) = in_flight.next(), if !in_flight.is_empty() => {
                if finish(log, client_id, call_id, clock, result) == Driven::Panicked {
                    return Driven::Panicked;
                }
                let next = &mut next_call[client_id as usize];
                if *next < count {
                    let call_id = *next;
                    *next += 1;
                    let Some(call) = start(client_id, call_id) else {
                        return Driven::Panicked;
                    };
                    in_flight.push(call);
                }
            }
            () = next_start => {}
        }
    }
}

/// Files how call `call_id` of client `client_id` ended: its value, or the panic that
/// ended the run.
fn finish<T: Debug, E: Debug>(
    log: &CallLog,
    client_id: u32,
    call_id: u32,
    clock: VirtualClock,
    result: std::thread::Result<Result<T, E>>,
) -> Driven {
    let result = match result {
        Ok(Ok(value)) => CallResult::Success(format!("{value:?}")),
        Ok(Err(error)) => CallResult::Failure(format!("{error:?}")),
        Err(payload) => {
            let message = super::panics::panic_text(payload.as_ref());
            log.finish(
                client_id,
                call_id,
                clock.now_ms(),
                CallResult::Panicked(message),
            );
            return Driven::Panicked;
        }
    };
    log.finish(client_id, call_id, clock.now_ms(), result);
    Driven::Returned
}

/// When client `client_id` starts, in ms of virtual time: `operation.start` drawn from the
/// client's own substream, or 0 without one.
pub(super) fn start_ms(plan: &Plan, client_id: u32) -> u64 {
    let start = match &plan.start {
        None => return 0,
        Some(Ok(fixed)) => *fixed,
        Some(Err(distribution)) => {
            let mut stream =
                crate::rng::Stream::new(plan.seed, &super::plan::client_start_label(client_id));
            distribution.sample(&mut stream)
        }
    };
    u64::try_from(start.as_millis()).unwrap_or(u64::MAX)
}
