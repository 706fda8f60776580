//! The response path: the task that runs an admitted request's step, detached from its
//! connection. It waits out the step's latency, commits before the response if the step says
//! so, settles dedupe, and hands the outcome to the connection (or records it, for a server
//! that already holds the response).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::http::response::SentResponse;
use crate::kinds::broker;
#[cfg(feature = "wiremock")]
use crate::ledger::{RequestId, ResponseOutcome, ResponseRecord};
use crate::script::step::{Commit, Fail, Step};

use super::commit::EffectCtx;
use super::{Endpoint, Inner};

/// What a step task hands to its connection.
pub(crate) enum Answer {
    /// The response, and the time its body is spread over ([`Step::trickle`]).
    Respond(Arc<SentResponse>, Duration),
    /// The response, the failure that cuts it, and its trickle.
    Truncate(Arc<SentResponse>, Fail, Duration),
    Fail(Fail),
}

/// Where a step task's outcome goes.
pub(super) enum Reply {
    /// To the connection serving the request, which sends it and records the response.
    Connection(oneshot::Sender<Answer>),
    /// Nowhere: the server already holds the response and sends it when the latency ends (a
    /// wiremock responder), so the task records it, on connection `conn_id`.
    #[cfg(feature = "wiremock")]
    Record { conn_id: u64 },
}

/// A step to run for one request.
pub(super) struct StepPlan {
    pub(super) step: Arc<Step>,
    /// The step's response, when it could be rendered in advance.
    pub(super) rendered: Option<Arc<SentResponse>>,
    pub(super) ctx: EffectCtx,
    /// The endpoint's life the request was admitted in.
    pub(super) life: u64,
}

impl Endpoint {
    /// Spawns the task that runs a planned step.
    pub(super) fn spawn_step(&self, plan: StepPlan, reply: Reply) {
        let StepPlan {
            step,
            rendered,
            ctx,
            life,
        } = plan;
        self.inner.steps_in_progress.fetch_add(1, Ordering::AcqRel);
        // Made with the count, so the step is counted done however its task ends: run to its
        // end, or dropped unfinished, before its first poll or after, with the runtime it was
        // spawned on (a crashed turmoil host's).
        let done = StepDone(self.clone());
        // Detached from the connection: a client that gives up drops the service future, not
        // this task, so a commit scheduled later still happens (duplicate-on-timeout).
        // Boxed, so the task moves a pointer around rather than the whole job (the spawn path
        // copies a future several times).
        tokio::spawn(run_step(Box::new(StepJob {
            endpoint: self.clone(),
            step,
            rendered,
            ctx,
            reply,
            life,
            done,
        })));
    }
}

/// What a step task needs.
struct StepJob {
    endpoint: Endpoint,
    step: Arc<Step>,
    /// The step's response, when it could be rendered in advance.
    rendered: Option<Arc<SentResponse>>,
    ctx: EffectCtx,
    reply: Reply,
    /// The endpoint's life the request was admitted in.
    life: u64,
    /// Counts the step done when the job is dropped, wherever that happens.
    done: StepDone,
}

/// One request's step: latency, commit, then the outcome goes to the connection (if it is
/// still there).
async fn run_step(job: Box<StepJob>) {
    // Only the box and (rarely) the boxed timer live across the await: the task stays small.
    if !job.step.latency.is_zero() {
        let inner = &*job.endpoint.inner;
        // Biased: polled in a fixed order, so that a crash already made when the latency
        // ends wins, never a random branch choice.
        tokio::select! {
            biased;
            _ = inner.lives.ended(job.life) => {}
            _ = Box::pin(tokio::time::sleep(job.step.latency)) => {}
        }
    }
    let StepJob {
        endpoint,
        step,
        rendered,
        ctx,
        reply,
        life,
        done: _done,
    } = *job;
    match finish_step(&endpoint, &step, rendered, &ctx, life) {
        // An error means the connection went away first; the step has done its work regardless.
        Some(outcome) => match reply {
            Reply::Connection(tx) => {
                let _ = tx.send(outcome);
            }
            #[cfg(feature = "wiremock")]
            Reply::Record { conn_id } => {
                record_outcome(&endpoint.inner, ctx.request, conn_id, &outcome);
            }
        },
        // The process that admitted the request is gone: no answer.
        None => drop(reply),
    }
}

/// Marks a step task done when dropped: see [`step_done`].
struct StepDone(Endpoint);

impl Drop for StepDone {
    fn drop(&mut self) {
        step_done(&self.0.inner);
    }
}

/// A step's work once its latency is over: its outcome, its commit before the response and
/// its dedupe entry. `None` if the endpoint's life `life` has ended: then nothing commits or
/// answers, and the crash already released the request's dedupe key.
pub(super) fn finish_step(
    endpoint: &Endpoint,
    step: &Step,
    rendered: Option<Arc<SentResponse>>,
    ctx: &EffectCtx,
    life: u64,
) -> Option<Answer> {
    let inner = &*endpoint.inner;
    let render =
        || rendered.unwrap_or_else(|| Arc::new(step.respond.render(inner.clock().now_system())));
    let outcome = match step.fail {
        None => Answer::Respond(render(), step.trickle),
        Some(fail) if fail.answers() => Answer::Truncate(render(), fail, step.trickle),
        Some(fail) => Answer::Fail(fail),
    };
    let mut state = endpoint.lock();
    if inner.lives.current() != life {
        return None;
    }
    let stored = match step.effective_commit() {
        Commit::BeforeResponse => endpoint.commit(&mut state, ctx, inner.clock().now_ms()),
        Commit::Arrival | Commit::Never => ctx.stored.clone(),
    };
    // A broker acknowledges a stored send with the id it gave the message, known only now.
    let outcome = match outcome {
        Answer::Respond(response, trickle) if inner.broker.is_some() => {
            match broker::acknowledgement(&response, stored.as_deref()) {
                Some(ack) => Answer::Respond(Arc::new(ack), trickle),
                None => Answer::Respond(response, trickle),
            }
        }
        outcome => outcome,
    };
    // A hanging request is still being processed as far as dedupe knows: its key stays in
    // flight.
    if let (Some(table), Some(key)) = (&mut state.dedupe, &ctx.dedupe_key) {
        match &outcome {
            Answer::Respond(response, _) | Answer::Truncate(response, _, _) => {
                table.finish(key, ctx.request, Some(Arc::clone(response)));
            }
            Answer::Fail(Fail::Hang) => {}
            Answer::Fail(_) => table.finish(key, ctx.request, None),
        }
    }
    Some(outcome)
}

/// A step task ends: the last one wakes [`Endpoint::idle`].
fn step_done(inner: &Inner) {
    if inner.steps_in_progress.fetch_sub(1, Ordering::AcqRel) == 1 {
        inner.idle.notify_waiters();
    }
}

/// Records how a request ended, for a server that reports neither its connection's bytes nor
/// their flush (a wiremock responder): byte ranges stay empty and `end_ms` unknown.
#[cfg(feature = "wiremock")]
pub(super) fn record_outcome(inner: &Inner, request: RequestId, conn_id: u64, outcome: &Answer) {
    let (outcome, retry_after) = match outcome {
        Answer::Respond(response, _) => (
            ResponseOutcome::Sent {
                status: response.status,
            },
            response.retry_after_lines().cloned().collect(),
        ),
        Answer::Truncate(response, fail, _) => (
            ResponseOutcome::Truncated {
                status: response.status,
                fail: *fail,
            },
            response.retry_after_lines().cloned().collect(),
        ),
        Answer::Fail(fail) => (ResponseOutcome::Failed(*fail), Vec::new()),
    };
    inner.ledger.push_response(ResponseRecord {
        request,
        conn_id,
        at_ms: inner.clock().now_ms(),
        end_ms: None,
        outcome,
        retry_after,
        outbound: 0..0,
        grpc: None,
    });
}
