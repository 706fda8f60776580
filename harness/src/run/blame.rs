//! What a run that hit a virtual limit was waiting on, for the verdict that says so.
//!
//! A run stops at `limits.max_virtual_time` (or `max_client_attempts`) for one of a few
//! reasons, and each needs another fix. The verdict names the one the trace shows, in this
//! order:
//!
//! - the built-in client was sleeping towards a retry due after the limit: its schedule is
//!   longer than the limit;
//! - a client of a fleet starts after the limit (`operation.start`);
//! - an attempt was still waiting for its response (a long drawn latency, a hang);
//! - otherwise the client itself was what the run waited on, and the likeliest cause is a
//!   client that reads the real clock for a deadline, so it retries until a limit stops it.
//!
//! On `backend: turmoil`, whose default limit is at most 10 minutes, a verdict on a limit
//! the file did not set says so.

use crate::report::RunEnd;
use crate::scenario::BackendKind;
use crate::trace::{DecisionKind, Trace, seconds};

use super::plan::Plan;

/// What a client whose deadline reads the real clock looks like, and how to tell. It sees
/// almost no time pass in a simulation where weeks take a second, so it retries until a limit
/// stops it, and how far it gets depends on the machine's speed and load.
const REAL_CLOCK_HINT: &str = "Likely cause: the client reads the real clock \
     (SystemTime::now(), std::time::Instant) for a deadline or max_elapsed_time, which barely \
     moves while virtual weeks pass. To check: run it twice, once with the machine busy; a \
     real-clock reader ends after a different number of attempts. Give the client \
     env.std_clock() or env.now_system() instead; if it really retries forever, raise the \
     limit or expect `stopped`";

/// The sentence after a limit's verdict that says what the run was waiting on (with a
/// leading space), or nothing. `real`: the run was on real sockets, where time is real and
/// the real-clock hint would mislead.
pub(super) fn hint(plan: &Plan, trace: &Trace, end: &RunEnd, real: bool) -> String {
    let limit_ms = u64::try_from(plan.max_virtual_time.as_millis()).unwrap_or(u64::MAX);
    let mut out = String::new();
    if *end == RunEnd::VirtualTimeLimit
        && plan.backend == BackendKind::Turmoil
        && !plan.virtual_time_limit_written
    {
        out.push_str(
            " On turmoil, which steps every host each millisecond, the default \
             limits.max_virtual_time is at most 10 minutes: set it in the file for a longer run.",
        );
    }
    // The built-in client records its decisions: a retry it was sleeping towards when the
    // limit came says why the run ran out, better than any guess.
    let due = trace
        .decisions
        .iter()
        .filter_map(|d| match d.kind {
            DecisionKind::Retry { delay_ms, .. } => Some(d.at_ms.saturating_add(delay_ms)),
            DecisionKind::Stop(_) => None,
        })
        .max()
        .filter(|&due| due >= limit_ms);
    if let Some(due) = due {
        out.push_str(&format!(
            " The built-in client's next attempt was due at {}, after the limit: raise \
             limits.max_virtual_time to let it happen.",
            seconds(due)
        ));
        return out;
    }
    if *end == RunEnd::VirtualTimeLimit {
        if let Some(waited) = not_the_client(plan, trace, limit_ms) {
            out.push(' ');
            out.push_str(&waited);
            return out;
        }
    }
    if !real {
        out.push(' ');
        out.push_str(REAL_CLOCK_HINT);
    }
    out
}

/// What the run waited on at the limit, when it was not the client: a fleet's client not
/// started yet, or an attempt waiting for its response.
fn not_the_client(plan: &Plan, trace: &Trace, limit_ms: u64) -> Option<String> {
    let late: Vec<(u32, u64)> = (0..plan.clients)
        .map(|client| (client, super::calls::start_ms(plan, client)))
        .filter(|&(_, start)| start >= limit_ms)
        .collect();
    if let Some(&(client, start)) = late.first() {
        let others = match late.len() {
            1 => String::new(),
            n => format!(" (and {} other clients)", n - 1),
        };
        return Some(format!(
            "Client {client}{others} starts at {} (operation.start), after the limit: raise \
             limits.max_virtual_time past the latest start.",
            seconds(start)
        ));
    }
    // Cut at the limit: the run ended it (or the client's call, dropped then, gave it up).
    let waiting = trace
        .attempts
        .iter()
        .find(|a| a.start_ms < limit_ms && a.end_ms.is_none_or(|end| end >= limit_ms))?;
    Some(format!(
        "Attempt #{} of call {} was still waiting for its response, sent at {}: the \
         endpoint's latency (a long draw of a distribution, a hang) outlasted the limit, not \
         the client. Bound the latency (a distribution's `max`), give the client an attempt \
         timeout, or raise limits.max_virtual_time.",
        waiting.id,
        waiting.call_id,
        seconds(waiting.start_ms)
    ))
}
