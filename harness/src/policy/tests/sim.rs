//! A tiny pure timeline builder: a server script, a client written as a delay function, and
//! the resulting attempt views. No network, no runtime: latency is a constant.

use crate::policy::{
    Anchor, AttemptView, CallHistory, DEFAULT_EPOCH_UNIX_MS, Decision, Envelope, Observed, Policy,
    RetryAfterValue, Violation, ViolationKind,
};
use crate::rng::Stream;

/// What the server does with one request.
#[derive(Debug, Clone)]
pub(super) struct Reply {
    pub outcome: Observed,
    pub retry_after: Option<RetryAfterValue>,
    /// start -> head (or -> end when there is no head).
    pub latency_ms: u64,
    /// head -> end.
    pub body_ms: u64,
}

/// A status after 10 ms.
pub(super) fn status(code: u16) -> Reply {
    Reply {
        outcome: Observed::Status(code),
        retry_after: None,
        latency_ms: 10,
        body_ms: 0,
    }
}

/// A status with a `Retry-After` (raw header text, parsed as a client would).
pub(super) fn with_ra(code: u16, raw: &str) -> Reply {
    Reply {
        retry_after: Some(RetryAfterValue::parse(raw)),
        ..status(code)
    }
}

/// A failure without a head after `latency_ms`.
pub(super) fn failure(outcome: Observed, latency_ms: u64) -> Reply {
    Reply {
        outcome,
        retry_after: None,
        latency_ms,
        body_ms: 0,
    }
}

/// The view of attempt `n` served `reply`, starting at `start`.
pub(super) fn view(n: u32, start: u64, reply: &Reply) -> AttemptView {
    let has_head = matches!(reply.outcome, Observed::Status(_));
    let head = start + reply.latency_ms;
    let end = head + if has_head { reply.body_ms } else { 0 };
    let mut v = AttemptView::new(n, reply.outcome, start, has_head.then_some(head), end);
    v.retry_after = reply.retry_after.clone();
    // Wall clock = default epoch + virtual instant.
    v.now_system_ms = (DEFAULT_EPOCH_UNIX_MS + head) as i64;
    v
}

/// A client under test: given the attempt just made and the earlier ones, the delay in ms
/// from its end, or `None` to stop.
pub(super) type Client<'a> =
    dyn FnMut(&AttemptView, &[AttemptView], &mut Stream) -> Option<u64> + 'a;

/// Runs `client` against `script` (the last reply repeats), at most `limit` attempts.
pub(super) fn run(
    script: &[Reply],
    seed: u64,
    limit: u32,
    client: &mut Client<'_>,
) -> Vec<AttemptView> {
    let mut rng = Stream::new(seed, "test/client/jitter");
    let mut out: Vec<AttemptView> = Vec::new();
    let mut start = 0;
    for n in 1..=limit {
        let reply = &script[((n - 1) as usize).min(script.len() - 1)];
        let v = view(n, start, reply);
        let delay = client(&v, &out, &mut rng);
        let end = v.end_ms;
        out.push(v);
        match delay {
            Some(d) => start = end + d,
            None => break,
        }
    }
    out
}

/// Runs the reference client: `policy.decide` after each attempt, asserting on the way that
/// every decision lies inside the policy's envelope.
pub(super) fn run_reference(
    policy: &mut dyn Policy,
    script: &[Reply],
    seed: u64,
    limit: u32,
) -> Vec<AttemptView> {
    let mut rng = Stream::new(seed, "client/0/jitter");
    let mut out: Vec<AttemptView> = Vec::new();
    let mut start = 0;
    let client = crate::policy::ClientHistory::default();
    for n in 1..=limit {
        let reply = &script[((n - 1) as usize).min(script.len() - 1)];
        let v = view(n, start, reply);
        let next = reference_next(policy, &v, &CallHistory::new(&out, &client), &mut rng, seed);
        out.push(v);
        match next {
            Some(s) => start = s,
            None => break,
        }
    }
    out
}

/// The reference client's next attempt after `v`: the policy's own `decide`, asserted to
/// lie inside the envelope computed just before it; the instant the next attempt starts, or
/// `None` when it stops. Every family's reference-client tests walk their calls with it.
pub(crate) fn reference_next(
    policy: &mut dyn Policy,
    v: &AttemptView,
    history: &CallHistory<'_>,
    rng: &mut Stream,
    seed: u64,
) -> Option<u64> {
    let envelope = policy.envelope(v, history);
    let decision = policy.decide(v, history, rng);
    assert!(
        envelope.admits(v, &decision),
        "{} seed {seed}: {decision:?} outside {envelope:?} after {v:?}",
        policy.name()
    );
    match decision {
        Decision::Retry {
            delay,
            measured_from,
        } => Some(v.anchor_ms(measured_from) + delay.as_millis() as u64),
        Decision::Stop(_) => None,
    }
}

/// `(min, max, from)` of an envelope that requires a retry.
///
/// # Panics
/// If the envelope is not a required retry window (a test's expectation failed).
pub(crate) fn retry_window(e: Envelope) -> (u64, u64, Anchor) {
    match e {
        Envelope::Retry {
            min_ms,
            max_ms,
            from,
            optional: false,
            ..
        } => (min_ms, max_ms, from),
        other => panic!("expected a retry window, got {other:?}"),
    }
}

/// Over `seeds`, the share of seeds whose violations include one `kind` accepts, and the
/// first such message (for assertions on the wording): how reliably a wrong client is caught.
pub(crate) fn share_caught(
    seeds: u64,
    mut violations: impl FnMut(u64) -> Vec<Violation>,
    kind: impl Fn(ViolationKind) -> bool,
) -> (f64, String) {
    let mut caught = 0;
    let mut first = String::new();
    for seed in 0..seeds {
        if let Some(v) = violations(seed).into_iter().find(|v| kind(v.kind)) {
            caught += 1;
            if first.is_empty() {
                first = v.message;
            }
        }
    }
    (caught as f64 / seeds as f64, first)
}

/// A generic client written independently of the policy code: stops on 2xx, on 4xx other
/// than 429, and after `max_attempts`; otherwise sleeps `backoff(n, prev_delay, rng)` ms,
/// raised to the `Retry-After` when `honour` is set.
pub(super) fn generic_client<'a>(
    max_attempts: u32,
    honour: bool,
    mut backoff: impl FnMut(u32, Option<u64>, &mut Stream) -> u64 + 'a,
) -> Box<Client<'a>> {
    Box::new(
        move |v: &AttemptView, prev: &[AttemptView], rng: &mut Stream| {
            if let Observed::Status(s) = v.outcome {
                if (200..300).contains(&s) || ((400..500).contains(&s) && s != 429) {
                    return None;
                }
            }
            if v.n >= max_attempts {
                return None;
            }
            let prev_delay = prev.last().map(|p| v.start_ms - p.end_ms);
            let mut delay = backoff(v.n, prev_delay, rng);
            if honour {
                let head = v.head_ms.unwrap_or(v.end_ms) as i64;
                let not_before = match &v.retry_after {
                    Some(RetryAfterValue::Seconds(s)) => head + *s as i64 * 1000,
                    Some(RetryAfterValue::Date(d)) => head + (d * 1000 - v.now_system_ms).max(0),
                    _ => 0,
                };
                delay = delay.max((not_before - v.end_ms as i64).max(0) as u64);
            }
            Some(delay)
        },
    )
}
