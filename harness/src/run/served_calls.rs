//! The calls of a served run. A client outside the process says nothing about where its
//! calls begin and end, so they are read off its requests: by the harness's call tag
//! (`x-retrylab-call: <n>`) when requests carry one, else by the pauses between requests
//! (the `calls - 1` longest pauses separate the calls).

use retrylab_endpoints::{Endpoint, ResponseOutcome, wire};

use crate::trace::{Call, CallResult};

/// The calls of a served run, read off the requests the endpoints received: by call tag when
/// requests carry one, else split at the `calls - 1` longest pauses between requests.
pub(super) fn calls_of(endpoints: &[(String, Endpoint)], calls: u32) -> Vec<Call> {
    // (arrival, end of its answer, tag, the call's result if it was the last) of every
    // request, in arrival order.
    let mut requests: Vec<(u64, u64, Option<u32>, Option<CallResult>)> = Vec::new();
    for (_, endpoint) in endpoints {
        endpoint.ledger().with(|ledger| {
            for request in &ledger.requests {
                let response = ledger.response_to(request.id);
                let end = response.map_or(request.at_ms, |r| r.end_ms.unwrap_or(r.at_ms));
                requests.push((
                    request.at_ms,
                    end,
                    wire::call_tag(&request.headers),
                    response.map(|r| result_of(r.outcome)),
                ));
            }
        });
    }
    requests.sort_by_key(|r| (r.0, r.1));
    if requests.is_empty() {
        return Vec::new();
    }
    let tagged = requests.iter().any(|r| r.2.is_some());
    let mut tag_order: Option<Vec<u32>> = None;
    let groups: Vec<Vec<usize>> = if tagged {
        // In order of each tag's first request; untagged requests join the call before them.
        let mut order: Vec<u32> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            let slot = match request.2 {
                Some(tag) => match order.iter().position(|t| *t == tag) {
                    Some(slot) => slot,
                    None => {
                        order.push(tag);
                        groups.push(Vec::new());
                        groups.len() - 1
                    }
                },
                None if groups.is_empty() => {
                    order.push(u32::MAX);
                    groups.push(Vec::new());
                    0
                }
                None => groups.len() - 1,
            };
            groups[slot].push(i);
        }
        tag_order = Some(order);
        groups
    } else {
        // The pauses between consecutive requests, longest first (earliest first on ties).
        let mut pauses: Vec<(u64, usize)> = requests
            .windows(2)
            .enumerate()
            .map(|(i, pair)| (pair[1].0.saturating_sub(pair[0].1), i + 1))
            .collect();
        pauses.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut cuts: Vec<usize> = pauses
            .iter()
            .take(calls.saturating_sub(1) as usize)
            .map(|(_, at)| *at)
            .collect();
        cuts.sort_unstable();
        let mut groups = Vec::new();
        let mut from = 0;
        for cut in cuts.into_iter().chain([requests.len()]) {
            groups.push((from..cut).collect());
            from = cut;
        }
        groups
    };
    // Tags that can be call numbers are kept as the calls' numbers, so that a request names
    // its call as the trace reads it; any other tag numbers the calls in order.
    let numbered = tag_order
        .as_ref()
        .is_some_and(|order| order.iter().all(|&tag| tag < calls));
    groups
        .into_iter()
        .enumerate()
        .map(|(index, members)| {
            let call_id = match &tag_order {
                Some(order) if numbered => order[index],
                _ => u32::try_from(index).unwrap_or(u32::MAX),
            };
            let first = members.first().map_or(0, |i| requests[*i].0);
            let last = members
                .iter()
                .map(|i| requests[*i].1)
                .max()
                .unwrap_or(first);
            let result = members
                .last()
                .and_then(|i| requests[*i].3.clone())
                .unwrap_or(CallResult::Stopped);
            Call {
                client_id: 0,
                call_id,
                start_ms: first,
                end_ms: Some(last),
                result,
            }
        })
        .collect()
}

/// A served call's outcome is its last answer: a success when that was a 2xx.
fn result_of(outcome: ResponseOutcome) -> CallResult {
    match outcome {
        ResponseOutcome::Sent { status } if status.is_success() => {
            CallResult::Success(format!("last answer {}", status.as_u16()))
        }
        ResponseOutcome::Sent { status } | ResponseOutcome::Truncated { status, .. } => {
            CallResult::Failure(format!("last answer {}", status.as_u16()))
        }
        ResponseOutcome::Failed(fail) => CallResult::Failure(format!("last answer {fail:?}")),
        ResponseOutcome::Abandoned => {
            CallResult::Failure("the client gave up on the last answer".to_owned())
        }
        ResponseOutcome::Crashed => {
            CallResult::Failure("the endpoint crashed before its last answer".to_owned())
        }
    }
}
