//! `attempts` (per call), `total_attempts` and `requests_received`.

use super::{Ctx, count_text, verdict};
use crate::report::{Finding, Verdict};
use crate::scenario::CountSpec;

/// `attempts:` bounds every call's attempt count.
pub(super) fn per_call(ctx: &Ctx<'_>, count: CountSpec) -> Verdict {
    let problems = ctx
        .calls()
        .filter_map(|(client, call)| {
            let n = ctx.attempts_of(client, call).len() as u64;
            (!count.contains(n)).then(|| {
                Finding::call(
                    client,
                    call,
                    format!(
                        "{} made {n} attempts, expected {}",
                        ctx.call_name(client, call),
                        count_text(count)
                    ),
                )
            })
        })
        .collect();
    verdict("attempts", problems, || {
        format!("every call made {} attempts", count_text(count))
    })
}

/// `total_attempts:` bounds the attempts of the whole run.
pub(super) fn total(ctx: &Ctx<'_>, count: CountSpec) -> Verdict {
    let n = ctx.trace.attempts.len() as u64;
    let problems = if count.contains(n) {
        vec![]
    } else {
        vec![format!(
            "the run made {n} attempts, expected {}",
            count_text(count)
        )]
    };
    verdict("total_attempts", problems, || {
        format!("{n} attempts in all")
    })
}

/// `requests_received:` counts what reached the endpoints (a request the client wrote but
/// the network lost, or that was still in flight at the end, is not received; hand-offs to
/// dead-letter endpoints are counted by `dead_lettered`).
pub(super) fn requests_received(ctx: &Ctx<'_>, count: CountSpec) -> Verdict {
    // Hand-offs to a dead-letter endpoint are not requests of the operation.
    let n: u64 = ctx
        .ledgers
        .iter()
        .filter(|(name, _)| !ctx.is_dead_letter(name))
        .map(|(_, ledger)| ledger.requests.len() as u64)
        .sum();
    let problems = if count.contains(n) {
        vec![]
    } else {
        let hint = if n == 0 {
            " (no request reached an endpoint: did the client use env.http_client() or \
             env.connector(), and env.url()?)"
        } else {
            ""
        };
        vec![format!(
            "the endpoints received {n} requests, expected {}{hint}",
            count_text(count)
        )]
    };
    // What endpoints receive after the run's calls returned may still be on its way.
    ctx.unless_unsettled(verdict("requests_received", problems, || {
        format!("the endpoints received {n} requests")
    }))
}
