//! The logical calls of a run: started in call order, up to `operation.concurrency` in
//! flight at once, each watched for blocking polls and guarded against panics, and each
//! filed in a [`CallLog`] the moment it starts and the moment it returns.
//!
//! The log is shared with the thread that started the run, so a run abandoned at
//! `limits.wall` still reports the calls it made (docs/architecture.md#the-run-thread-and-its-guards).

use std::fmt::Debug;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::FutureExt as _;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use retrylab_endpoints::VirtualClock;

use super::watchdog::Watchdog;
use crate::env::{ClientInstance, Env};
use crate::trace::record::Recorder;
use crate::trace::{Call, CallResult};

/// The calls of one run, shared with the thread that waits for it.
#[derive(Debug, Clone, Default)]
pub(super) struct CallLog {
    calls: Arc<Mutex<Vec<Call>>>,
}

impl CallLog {
    fn lock(&self) -> MutexGuard<'_, Vec<Call>> {
        // Calls are only ever appended or completed in place: a poisoned lock still holds
        // a consistent list.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calls so far, in call order; calls still running are `Stopped`, with no end.
    pub(super) fn snapshot(&self) -> Vec<Call> {
        self.lock().clone()
    }

    fn start(&self, call_id: u32, at_ms: u64) {
        self.lock().push(Call {
            client_id: 0,
            call_id,
            start_ms: at_ms,
            end_ms: None,
            result: CallResult::Stopped,
        });
    }

    fn finish(&self, call_id: u32, at_ms: u64, result: CallResult) {
        let mut calls = self.lock();
        // Calls are pushed in call-id order, one per id, so the id is the index.
        if let Some(call) = calls.get_mut(call_id as usize) {
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

/// What [`drive`] needs besides the client.
pub(super) struct Calls<'a> {
    pub(super) count: u32,
    pub(super) concurrency: u32,
    pub(super) instance: &'a Arc<ClientInstance>,
    pub(super) clock: VirtualClock,
    pub(super) recorder: &'a Recorder,
    pub(super) watchdog: &'a Watchdog,
    pub(super) log: &'a CallLog,
}

/// Runs every call of the client, `concurrency` at a time, in call order.
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
        instance,
        clock,
        recorder,
        watchdog,
        log,
    } = calls;
    let mut start = |call_id: u32| {
        log.start(call_id, clock.now_ms());
        let env = Env::new(instance.clone(), call_id);
        // The closure itself may panic before it returns a future.
        let call = std::panic::catch_unwind(AssertUnwindSafe(|| client(env.clone()))).ok()?;
        // Named while polled, for a client built once per run (env/polled.rs).
        let call = crate::env::polled(env, call);
        let recorder = recorder.clone();
        let watched = watchdog.watch(call, clock, move || recorder.attempt_count());
        Some(AssertUnwindSafe(watched).catch_unwind())
    };
    if concurrency <= 1 {
        // One at a time: awaited directly, which spares every wake-up of the call the
        // detour through a set of futures.
        for call_id in 0..count {
            let Some(call) = start(call_id) else {
                return Driven::Panicked;
            };
            if finish(log, call_id, clock, call.await) == Driven::Panicked {
                return Driven::Panicked;
            }
        }
        return Driven::Returned;
    }
    let mut in_flight = FuturesUnordered::new();
    let mut next = 0;
    loop {
        while next < count && in_flight.len() < concurrency as usize {
            let call_id = next;
            next += 1;
            let Some(call) = start(call_id) else {
                return Driven::Panicked;
            };
            in_flight.push(call.map(move |r| (call_id, r)));
        }
        let Some((call_id, result)) = in_flight.next().await else {
            return Driven::Returned;
        };
        if finish(log, call_id, clock, result) == Driven::Panicked {
            return Driven::Panicked;
        }
    }
}

/// Files how call `call_id` ended: its value, or the panic that ended the run.
fn finish<T: Debug, E: Debug>(
    log: &CallLog,
    call_id: u32,
    clock: VirtualClock,
    result: std::thread::Result<Result<T, E>>,
) -> Driven {
    let result = match result {
        Ok(Ok(value)) => CallResult::Success(format!("{value:?}")),
        Ok(Err(error)) => CallResult::Failure(format!("{error:?}")),
        Err(payload) => {
            let message = super::panic_text(payload.as_ref());
            log.finish(call_id, clock.now_ms(), CallResult::Panicked(message));
            return Driven::Panicked;
        }
    };
    log.finish(call_id, clock.now_ms(), result);
    Driven::Returned
}
