//! Per-attempt request checks, on what the endpoints received: `same_idempotency_key`,
//! `same_body`, `header: { name, values }`.

use std::collections::BTreeMap;

use retrylab_endpoints::RequestRecord;

use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::HeaderCheckSpec;
use retrylab_endpoints::wire::attempt_tag;

/// The received requests of each call, by (client, call), in arrival order.
struct ByCall<'a> {
    calls: BTreeMap<(u32, u32), Vec<&'a RequestRecord>>,
    /// Requests no call could be found for (rebuilt ones that arrived before any call of
    /// their client started): left out, rather than counted for some call they were not.
    unattributed: usize,
}

/// The requests of each call, as the trace attributed them to their client and call: by the
/// harness's tags, or for a client of its own by the call of its client running when each
/// started.
///
/// A ledger without its list of calls, or with a list of another length, is an error of the
/// harness, not requests no call could be found for: the check `check` fails naming the
/// endpoint, rather than passing on requests it left out.
fn by_call<'a>(ctx: &'a Ctx<'_>, check: &str) -> Result<ByCall<'a>, Verdict> {
    let mut calls: BTreeMap<(u32, u32), Vec<&RequestRecord>> = BTreeMap::new();
    let mut unattributed = 0;
    for (index, (name, ledger)) in ctx.ledgers.iter().enumerate() {
        // Hand-offs to a dead-letter endpoint are not requests of the operation.
        if ctx.is_dead_letter(name) {
            continue;
        }
        let of = match ctx.request_calls.get(index) {
            Some(of) if of.len() == ledger.requests.len() => of,
            other => {
                return Err(Verdict::fail(
                    check,
                    format!(
                        "internal error: endpoint {name} received {} requests but the trace \
                         attributed {} of them to calls (or to none); not judged on a partial \
                         attribution",
                        ledger.requests.len(),
                        other.map_or(0, Vec::len)
                    ),
                ));
            }
        };
        for (request, call) in ledger.requests.iter().zip(of) {
            match *call {
                Some(call) => calls.entry(call).or_default().push(request),
                None => unattributed += 1,
            }
        }
    }
    for requests in calls.values_mut() {
        requests.sort_by_key(|r| (r.at_ms, r.conn_id, attempt_tag(&r.headers).unwrap_or(0)));
    }
    Ok(ByCall {
        calls,
        unattributed,
    })
}

impl ByCall<'_> {
    /// The requests attributed to a call.
    fn requests(&self) -> usize {
        self.calls.values().map(Vec::len).sum()
    }

    /// `; 2 requests no call could be found for were left out`, or nothing.
    fn left_out(&self) -> String {
        match self.unattributed {
            0 => String::new(),
            1 => "; 1 request no call could be found for was left out".to_owned(),
            n => format!("; {n} requests no call could be found for were left out"),
        }
    }

    /// How many calls sent two requests or more: what `same_*` compares needs a second.
    fn retried(&self) -> usize {
        self.calls
            .values()
            .filter(|requests| requests.len() > 1)
            .count()
    }
}

/// `same_idempotency_key: true`: every request of a call carried the same key (and one).
pub(super) fn same_idempotency_key(ctx: &Ctx<'_>, expected: bool) -> Verdict {
    let header = ctx
        .scenario
        .operation
        .idempotency_key
        .as_ref()
        .map(|k| k.header.clone())
        .or_else(|| {
            ctx.scenario
                .endpoints
                .values()
                .find_map(|e| e.dedupe.as_ref().map(|d| d.header.clone()))
        })
        .unwrap_or_else(|| "Idempotency-Key".to_owned());
    let mut problems = Vec::new();
    let by = match by_call(ctx, "same_idempotency_key") {
        Ok(by) => by,
        Err(verdict) => return verdict,
    };
    let requests = by.requests();
    let left_out = by.left_out();
    let retried = by.retried();
    for (&(client, call), requests) in &by.calls {
        let keys: Vec<Option<&[u8]>> = requests
            .iter()
            .map(|r| r.headers.get_bytes(header.as_str()))
            .collect();
        let same = keys
            .first()
            .is_some_and(|first| first.is_some() && keys.iter().all(|k| k == first));
        if same != expected {
            let shown: Vec<String> = keys
                .iter()
                .map(|k| {
                    k.map_or("(none)".to_owned(), |k| {
                        String::from_utf8_lossy(k).into_owned()
                    })
                })
                .collect();
            problems.push(Finding::call(
                client,
                call,
                format!(
                    "{}: {header} per request was [{}]",
                    ctx.call_name(client, call),
                    shown.join(", ")
                ),
            ));
        }
    }
    ctx.unless_unsettled(verdict_on(
        "same_idempotency_key",
        retried,
        || {
            format!(
                "no call sent a second request ({requests} requests in all{left_out}), so there \
                 was no {header} to compare with a first"
            )
        },
        problems,
        || format!("every call's requests carried one {header} (requests: {requests}{left_out})"),
    ))
}

/// `same_body: true`: every request of a call carried the same body.
pub(super) fn same_body(ctx: &Ctx<'_>, expected: bool) -> Verdict {
    let mut problems = Vec::new();
    let by = match by_call(ctx, "same_body") {
        Ok(by) => by,
        Err(verdict) => return verdict,
    };
    let requests = by.requests();
    let left_out = by.left_out();
    let retried = by.retried();
    for (&(client, call), requests) in &by.calls {
        let same = requests.windows(2).all(|w| w[0].body == w[1].body);
        if same != expected {
            let differs = requests
                .windows(2)
                .position(|w| w[0].body != w[1].body)
                .map_or(String::new(), |i| format!(" (request {} differs)", i + 2));
            problems.push(Finding::call(
                client,
                call,
                format!(
                    "{}: the bodies were {}{differs}",
                    ctx.call_name(client, call),
                    if same {
                        "all the same"
                    } else {
                        "not all the same"
                    }
                ),
            ));
        }
    }
    ctx.unless_unsettled(verdict_on(
        "same_body",
        retried,
        || {
            format!(
                "no call sent a second request ({requests} requests in all{left_out}), so there \
                 was no body to compare with a first"
            )
        },
        problems,
        || format!("bodies as expected (requests: {requests}{left_out})"),
    ))
}

/// `header: { name, values: [...] }`: request i of each call carried `values[i]` (a value
/// of `""` means the header is absent); extra requests are unchecked, and a call that sent
/// fewer requests than there are values fails (the values past its last were never shown).
pub(super) fn header(ctx: &Ctx<'_>, spec: &HeaderCheckSpec) -> Verdict {
    let mut problems = Vec::new();
    let by = match by_call(ctx, "header") {
        Ok(by) => by,
        Err(verdict) => return verdict,
    };
    let requests = by.requests();
    let left_out = by.left_out();
    for (&(client, call), requests) in &by.calls {
        if requests.len() < spec.values.len() {
            problems.push(Finding::call(
                client,
                call,
                format!(
                    "{}: {} requests, fewer than the {} values of {} to compare",
                    ctx.call_name(client, call),
                    requests.len(),
                    spec.values.len(),
                    spec.name
                ),
            ));
        }
        for (i, (request, want)) in requests.iter().zip(&spec.values).enumerate() {
            let got = request
                .headers
                .get_bytes(spec.name.as_str())
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            if &got != want {
                problems.push(Finding::call(
                    client,
                    call,
                    format!(
                        "{}: request {} carried {}: {:?}, expected {:?}",
                        ctx.call_name(client, call),
                        i + 1,
                        spec.name,
                        got,
                        want
                    ),
                ));
            }
        }
    }
    ctx.unless_unsettled(verdict_on(
        "header",
        requests,
        || {
            if left_out.is_empty() {
                format!(
                    "no request reached an endpoint, so no {} to compare",
                    spec.name
                )
            } else {
                format!(
                    "no request of a call reached an endpoint{left_out}, so no {} to compare",
                    spec.name
                )
            }
        },
        problems,
        || format!("{} carried the expected values{left_out}", spec.name),
    ))
}

#[cfg(test)]
mod tests {
    const BURST: &str = include_str!("../../templates/5xx-burst.yaml");

    /// A ledger whose requests have no list of calls (or a shorter one) fails the check as
    /// an error of the harness, rather than counting the requests as left out and passing.
    #[test]
    fn a_missing_attribution_fails_instead_of_leaving_requests_out() {
        let judged =
            super::super::with_edited_report(BURST, |_| {}, |ctx| super::same_body(ctx, true));
        assert!(judged.passed(), "{judged:?}");
        for keep in [0, 1] {
            let verdict = super::super::with_edited_report(
                BURST,
                |report| {
                    report
                        .request_calls
                        .iter_mut()
                        .for_each(|of| of.truncate(keep));
                    if keep == 0 {
                        report.request_calls.clear();
                    }
                },
                |ctx| super::same_body(ctx, true),
            );
            assert!(!verdict.passed(), "{verdict:?}");
            assert!(
                verdict.message.contains("endpoint api received 4 requests")
                    && verdict
                        .message
                        .contains(&format!("attributed {keep} of them")),
                "{verdict:?}"
            );
        }
    }

    /// A request the trace attributed to no call is left out of every call, and the verdict
    /// says how many were.
    #[test]
    fn requests_of_no_call_are_left_out_and_counted() {
        let verdict = super::super::with_edited_report(
            BURST,
            |report| report.request_calls[0][0] = None,
            |ctx| super::same_body(ctx, true),
        );
        assert!(verdict.passed(), "{verdict:?}");
        assert_eq!(
            verdict.message,
            "bodies as expected (requests: 3; 1 request no call could be found for was left out)"
        );
    }
}
