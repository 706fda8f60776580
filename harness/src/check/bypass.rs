//! Bypass diagnostics (docs/architecture.md#plugging-a-client-in): signs that the client went around the simulation,
//! explained in a verdict instead of leaving a puzzling failure.
//!
//! - no request reached an endpoint: the client talked to the real network (its own
//!   connector or HTTP stack) rather than `env.http_client()` / `env.connector()`;
//! - an HTTP-date `Retry-After` treated as already past: the client compared it with the
//!   real clock (`SystemTime::now()`) instead of the virtual one (`env.now_system()`).
//!
//! - a stopped virtual clock: a poll of the client blocked the thread (the run's watchdog
//!   timed it with the real clock and, where the system says, saw the thread asleep or on a
//!   CPU rather than waiting for one), so the pause it meant took no virtual time and the
//!   gaps around it follow wall time, not the trace.

use super::Ctx;
use crate::policy::RetryAfterValue;
use crate::report::Verdict;
use crate::trace::{LongPoll, seconds};

/// The name these verdicts carry.
pub(crate) const CHECK: &str = "bypass";

pub(super) fn diagnose(ctx: &Ctx<'_>) -> Vec<Verdict> {
    let mut out = Vec::new();
    no_requests(ctx, &mut out);
    real_clock_dates(ctx, &mut out);
    stopped_clock(ctx, &mut out);
    out
}

fn no_requests(ctx: &Ctx<'_>, out: &mut Vec<Verdict>) {
    let expect = &ctx.scenario.expect;
    // Only an expectation that requires no request turns the diagnosis off: one that merely
    // allows none (`attempts: { max: 3 }`) would otherwise pass a client that bypassed the
    // simulation on zero attempts.
    let expects_none = expect.requests_received.is_some_and(|c| c.requires_zero())
        || expect.attempts.is_some_and(|c| c.requires_zero())
        || expect.total_attempts.is_some_and(|c| c.requires_zero());
    if expects_none || ctx.trace.calls.is_empty() {
        return;
    }
    let endpoint = &ctx.scenario.operation.endpoint;
    let received = ctx
        .ledgers
        .iter()
        .find(|(name, _)| name == endpoint)
        .map_or(0, |(_, ledger)| {
            ledger.requests.len() + ledger.connects.len()
        });
    if received == 0 && ctx.trace.attempts.is_empty() {
        out.push(Verdict::fail(
            CHECK,
            format!(
                "no request and no connection reached endpoint `{endpoint}` in {} calls: did \
                 the client use env.http_client() (or its own hyper client over \
                 env.connector()) and env.url(\"{endpoint}\")? A client with its own \
                 connector or HTTP stack goes to the real network, which the simulation \
                 cannot see",
                ctx.trace.calls.len()
            ),
        ));
    }
}

fn real_clock_dates(ctx: &Ctx<'_>, out: &mut Vec<Verdict>) {
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        for pair in attempts.windows(2) {
            let (previous, next) = (pair[0], pair[1]);
            let (Some(raw), Some(head)) = (previous.retry_after, previous.head_ms) else {
                continue;
            };
            let RetryAfterValue::Date(unix_s) = RetryAfterValue::parse(ctx.trace.name(raw)) else {
                continue;
            };
            let head_system_ms = ctx.epoch_unix_ms as i64 + head as i64;
            let asked_ms = unix_s * 1000 - head_system_ms;
            let waited = next.start_ms.saturating_sub(head);
            // Retried at once although the date was well in the future of the virtual
            // clock: the signature of a date compared with the real clock, months later. A
            // retry early by no more than the tolerance is forgiven, as `retry_after` does.
            let forgiven = ctx.tolerance.at_least(waited, asked_ms.max(0) as u64);
            if asked_ms >= 1000 && waited < 100 && !forgiven {
                out.push(Verdict::fail(
                    CHECK,
                    format!(
                        "{}: attempt {} came {} after a Retry-After date {} in the future of \
                         the virtual clock: the client seems to compare HTTP-dates with the \
                         real clock (SystemTime::now()); the simulation's wall clock is \
                         env.now_system() (epoch {} + virtual time)",
                        ctx.call_name(client, call),
                        next.n,
                        seconds(waited),
                        seconds(asked_ms as u64),
                        httpdate::fmt_http_date(
                            std::time::UNIX_EPOCH
                                + std::time::Duration::from_millis(ctx.epoch_unix_ms)
                        ),
                    ),
                ));
                return;
            }
        }
    }
}

fn stopped_clock(ctx: &Ctx<'_>, out: &mut Vec<Verdict>) {
    let (waits, blocks): (Vec<&LongPoll>, Vec<&LongPoll>) =
        ctx.long_polls.iter().partition(|p| p.waited);
    blocked_thread(ctx, &blocks, out);
    if let Some(first) = waits.first() {
        let total: u64 = waits.iter().map(|p| p.wall_ms).sum();
        // Where the system said how the thread spent the wait: on a CPU is no wait on the
        // outside, but something else on the run's thread that never awaited.
        let busy = first.spent.is_some_and(|s| s.on_cpu_ms > s.asleep_ms);
        let what = if busy {
            "the run's thread was busy outside the client's calls, while virtual time stood \
             still: a task the client spawned (tokio::spawn) that loops or computes without \
             awaiting. The time it took was no virtual time, so gaps follow wall time \
             instead of the trace. Await inside the task's loop, or move the computation to \
             spawn_blocking"
        } else {
            "on something outside the simulation, while virtual time stood still: a \
             std::thread::sleep or blocking call inside spawn_blocking, a std channel fed by \
             another thread, or real IO. The pause took no virtual time, so gaps follow wall \
             time instead of the trace. Sleep with tokio::time::sleep on the client's task"
        };
        out.push(Verdict::fail(
            "stopped_clock",
            format!(
                "the client waited {} times for {} of real time in all (the first {} long{}, \
                 at virtual t={}{}) {what}",
                waits.len(),
                seconds(total),
                seconds(first.wall_ms),
                spent(first),
                seconds(first.at_ms),
                place(ctx, first),
            ),
        ));
    }
}

fn blocked_thread(ctx: &Ctx<'_>, blocks: &[&LongPoll], out: &mut Vec<Verdict>) {
    let Some(first) = blocks.first() else {
        return;
    };
    let total: u64 = blocks.iter().map(|p| p.wall_ms).sum();
    out.push(Verdict::fail(
        "stopped_clock",
        format!(
            "the client blocked its thread {} times for {} of real time in all (the first \
             {} long{}, at virtual t={}{place}): virtual time stands still while a thread \
             blocks, so gaps follow wall time instead of the trace. Sleep with \
             tokio::time::sleep and move blocking work off the client's task \
             (std::thread::sleep, blocking IO and busy loops are the usual causes)",
            blocks.len(),
            seconds(total),
            seconds(first.wall_ms),
            spent(first),
            seconds(first.at_ms),
            place = place(ctx, first),
        ),
    ));
}

/// How the run's thread spent a stop, where the system said: `, asleep for 0.800s of it`.
/// Only the thread's own time is filed (on a CPU or asleep, not waiting for a CPU), so the
/// larger of the two is what happened.
fn spent(poll: &LongPoll) -> String {
    match poll.spent {
        Some(spent) if spent.asleep_ms >= spent.on_cpu_ms => format!(
            ", asleep for {} of it",
            seconds(spent.asleep_ms.min(poll.wall_ms))
        ),
        Some(spent) => format!(
            ", busy on a CPU for {} of it",
            seconds(spent.on_cpu_ms.min(poll.wall_ms))
        ),
        None => String::new(),
    }
}

/// Where in the timeline the clock stopped: `, between attempt 2 and attempt 3, whose gap
/// shows 0.000s of virtual time`.
fn place(ctx: &Ctx<'_>, poll: &LongPoll) -> String {
    // Attempt ids are in start order: the clock stopped after the last attempt started
    // before it, and before the first one started during it or after it.
    let by_id = |id: u32| ctx.trace.attempts.iter().find(|a| a.id == id);
    let (started_before, started_after) = poll.attempts;
    match (by_id(started_before), by_id(started_before + 1)) {
        (Some(b), Some(a))
            if (started_after > started_before || poll.waited)
                && (a.client_id, a.call_id) == (b.client_id, b.call_id) =>
        {
            format!(
                ", between attempt {} and attempt {}, whose gap shows {} of virtual time",
                b.n,
                a.n,
                seconds(a.start_ms.saturating_sub(b.end_ms.unwrap_or(a.start_ms)))
            )
        }
        (Some(b), _) => format!(", after attempt {}", b.n),
        (None, Some(a)) => format!(", before attempt {}", a.n),
        (None, None) => String::new(),
    }
}
