//! The simulation every policy family's tests share: a server script of [`Reply`]s, a client
//! under test written as a function of the attempt it just made, and the reference client
//! (the policy's own `decide`, asserted inside its envelope at every step), walked over one
//! or more calls into attempt views. No network, no runtime: an attempt lasts its reply's
//! latency.
//!
//! What varies between families is a [`Sim`], built as a sentence from the common case
//! ([`Sim::default`]): how many calls (`Sim::calls(3)`), the attempt limit
//! (`.of_at_most(60)`), the gap between calls (`.ms_apart(1)`), the policy's waits
//! (`.waiting_before_each()`, `.waiting_after_stop()`), numbered calls (`.numbered()`),
//! who reads error codes (`.codes_read_by(policy)`), and a client under test's stream and
//! answer (`.clients_drawing_on(label)`, `.clients_answering(Answer::StartOfNext)`).
//! Stream labels are the families' own: the tests' expected values depend on the draws.

use std::io;

use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Conformance, Decision, Envelope, Observed,
    Policy, RetryAfterValue, Violation, ViolationKind,
};
use crate::rng::Stream;

// ---------------------------------------------------------------- replies

/// What the server does with one request.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) outcome: Observed,
    /// start -> head (or -> end when there is no head).
    pub(crate) latency_ms: u64,
    /// head -> end.
    pub(crate) body_ms: u64,
    /// Response headers, as scripted, in order.
    pub(crate) headers: Vec<(&'static str, &'static str)>,
    /// A `Retry-After`, parsed as a client would, set on the view as such.
    pub(crate) retry_after: Option<RetryAfterValue>,
    /// A service error code, as a recorder would have extracted it.
    pub(crate) error_code: Option<&'static str>,
    /// The response body, for a recorder that reads error codes from it.
    pub(crate) body: &'static str,
}

/// `outcome` after `latency_ms`, with nothing else.
fn bare(outcome: Observed, latency_ms: u64) -> Reply {
    Reply {
        outcome,
        latency_ms,
        body_ms: 0,
        headers: Vec::new(),
        retry_after: None,
        error_code: None,
        body: "",
    }
}

/// A status after 10 ms.
pub(crate) fn st(status: u16) -> Reply {
    bare(Observed::Status(status), 10)
}

/// A status with a `Retry-After` (raw header text, parsed as a client would).
pub(crate) fn with_ra(status: u16, raw: &str) -> Reply {
    Reply {
        retry_after: Some(RetryAfterValue::parse(raw)),
        ..st(status)
    }
}

/// The same reply with one more response header.
pub(crate) fn with(reply: Reply, name: &'static str, value: &'static str) -> Reply {
    let mut headers = reply.headers;
    headers.push((name, value));
    Reply { headers, ..reply }
}

/// A failure without a head (a transport outcome) after `latency_ms`.
pub(crate) fn failure(outcome: Observed, latency_ms: u64) -> Reply {
    bare(outcome, latency_ms)
}

/// A refused connect after `latency_ms`.
pub(crate) fn refused(latency_ms: u64) -> Reply {
    failure(Observed::Refused, latency_ms)
}

/// A request that never completed, given up after `latency_ms`.
pub(crate) fn timeout(latency_ms: u64) -> Reply {
    failure(Observed::Timeout, latency_ms)
}

/// A connection reset after 5 ms.
pub(crate) fn reset() -> Reply {
    failure(Observed::Transport(io::ErrorKind::ConnectionReset), 5)
}

/// The reply to attempt `n` (1-based) of a call: the script's `n`-th, its last repeating.
pub(crate) fn reply(script: &[Reply], n: u32) -> &Reply {
    &script[(n as usize - 1).min(script.len() - 1)]
}

/// The view of attempt `n` served `reply`, starting at `start`.
pub(crate) fn view(n: u32, start: u64, reply: &Reply) -> AttemptView {
    let has_head = matches!(reply.outcome, Observed::Status(_));
    let head = start + reply.latency_ms;
    let end = head + if has_head { reply.body_ms } else { 0 };
    // The virtual wall clock is the default epoch + the head (or the end without one).
    let mut v = AttemptView::new(n, reply.outcome, start, has_head.then_some(head), end);
    for (name, value) in &reply.headers {
        v = v.with_header(name, value);
    }
    if let Some(code) = reply.error_code {
        v = v.with_error_code(code);
    }
    if let Some(retry_after) = &reply.retry_after {
        v = v.with_retry_after(retry_after.clone());
    }
    v
}

/// The view of attempt `n` served `reply`, starting at `start`, as the harness records it
/// for `recorder`: with the service error code its `error_code` reads from the body of a
/// response (`RocketMQ`'s broker codes).
pub(crate) fn recorded_view(
    recorder: &dyn Policy,
    n: u32,
    start: u64,
    reply: &Reply,
) -> AttemptView {
    let mut v = view(n, start, reply);
    if let Observed::Status(status) = reply.outcome {
        if let Some(code) = recorder.error_code(status, &v.headers, reply.body.as_bytes()) {
            v = v.with_error_code(&code);
        }
    }
    v
}

// ---------------------------------------------------------------- runs

/// A client under test: given the attempt just made and the earlier attempts of its call, its
/// [`Answer`] (by default the delay in ms from the attempt's end), or `None` to stop. Its
/// state across calls lives in the closure.
pub(crate) type Client<'a> =
    dyn FnMut(&AttemptView, &[AttemptView], &mut Stream) -> Option<u64> + 'a;

/// What the number a client under test answers means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The delay in ms from the end of the attempt just made.
    DelayFromEnd,
    /// The virtual instant its next attempt starts; one before the end of the attempt just
    /// made counts as that end.
    StartOfNext,
}

/// How calls are simulated: how many, how long each may go on, how far apart, what the
/// reference waits, who reads error codes, and how a client under test draws and answers.
/// [`Sim::default`] is the common case: one call of at most 40 attempts (calls 1 s apart),
/// no waits, every call call 0, error codes as scripted, a client under test drawing on
/// `test/client/jitter` and answering delays from the attempt's end.
#[derive(Debug)]
pub(crate) struct Sim {
    calls: u32,
    attempts: u32,
    gap_ms: u64,
    wait_before_call: bool,
    wait_after_stop: bool,
    numbered: bool,
    stream: &'static str,
    answer: Answer,
    recorder: Option<Box<dyn Policy>>,
}

impl Default for Sim {
    fn default() -> Self {
        Sim {
            calls: 1,
            attempts: 40,
            gap_ms: 1000,
            wait_before_call: false,
            wait_after_stop: false,
            numbered: false,
            stream: "test/client/jitter",
            answer: Answer::DelayFromEnd,
            recorder: None,
        }
    }
}

/// Who decides after each attempt: a client under test, or the reference.
enum Decider<'c, 'a> {
    Client(&'c mut Client<'a>),
    Reference(&'c mut dyn Policy),
}

impl Sim {
    /// `count` calls one after another, 1 s apart unless [`Sim::ms_apart`] says otherwise:
    /// the next starts 1 s after the end of the last attempt of the one before.
    pub(crate) fn calls(count: u32) -> Sim {
        Sim {
            calls: count,
            ..Sim::default()
        }
    }

    /// At most `attempts` attempts a call: a client still retrying after the last one is cut
    /// off there.
    pub(crate) fn of_at_most(self, attempts: u32) -> Sim {
        Sim { attempts, ..self }
    }

    /// The next call starts `gap_ms` after the end of the last attempt of the one before.
    pub(crate) fn ms_apart(self, gap_ms: u64) -> Sim {
        Sim { gap_ms, ..self }
    }

    /// The reference waits the policy's `wait_before_call` before each call, the first too
    /// (a limit on the rate of call starts). A client under test has no such wait.
    pub(crate) fn waiting_before_each(self) -> Sim {
        Sim {
            wait_before_call: true,
            ..self
        }
    }

    /// After a call stops, the reference also waits the policy's `wait_after_stop` before
    /// the gap to the next call (a limiter's hold on a failing client).
    pub(crate) fn waiting_after_stop(self) -> Sim {
        Sim {
            wait_after_stop: true,
            ..self
        }
    }

    /// The reference's calls are numbered: each has its `ClientHistory::call_index` (0, 1,
    /// ...), for policies that keep state per call. Otherwise every call is call 0.
    pub(crate) fn numbered(self) -> Sim {
        Sim {
            numbered: true,
            ..self
        }
    }

    /// A client under test draws on the stream `label` (seeded per run). The reference
    /// always draws on `client/0/jitter`, the stream of the harness's first client.
    pub(crate) fn clients_drawing_on(self, label: &'static str) -> Sim {
        Sim {
            stream: label,
            ..self
        }
    }

    /// A client under test answers `answer` (by default [`Answer::DelayFromEnd`]).
    pub(crate) fn clients_answering(self, answer: Answer) -> Sim {
        Sim { answer, ..self }
    }

    /// Every attempt is recorded by a copy of `recorder`, which reads the service error
    /// code from the body of a response ([`recorded_view`]); without one, a view carries
    /// the code scripted on its reply.
    pub(crate) fn codes_read_by(self, recorder: &dyn Policy) -> Sim {
        Sim {
            recorder: Some(recorder.clone_box()),
            ..self
        }
    }

    /// The calls of `client` against `script` (its last reply repeating), on `seed`.
    pub(crate) fn run_client(
        &self,
        script: &[Reply],
        seed: u64,
        client: &mut Client<'_>,
    ) -> Vec<Vec<AttemptView>> {
        self.run(script, seed, Decider::Client(client))
    }

    /// The calls of the reference client, the policy's own `decide` (see [`reference_next`]),
    /// against `script` on `seed`.
    pub(crate) fn run_reference(
        &self,
        policy: &mut dyn Policy,
        script: &[Reply],
        seed: u64,
    ) -> Vec<Vec<AttemptView>> {
        self.run(script, seed, Decider::Reference(policy))
    }

    /// The only call of [`Sim::run_client`].
    pub(crate) fn client_call(
        &self,
        script: &[Reply],
        seed: u64,
        client: &mut Client<'_>,
    ) -> Vec<AttemptView> {
        only(self.run_client(script, seed, client))
    }

    /// The only call of [`Sim::run_reference`].
    pub(crate) fn reference_call(
        &self,
        policy: &mut dyn Policy,
        script: &[Reply],
        seed: u64,
    ) -> Vec<AttemptView> {
        only(self.run_reference(policy, script, seed))
    }

    fn run(
        &self,
        script: &[Reply],
        seed: u64,
        mut decider: Decider<'_, '_>,
    ) -> Vec<Vec<AttemptView>> {
        let label = match decider {
            Decider::Client(_) => self.stream,
            Decider::Reference(_) => "client/0/jitter",
        };
        let mut rng = Stream::new(seed, label);
        let mut start = 0;
        let mut out = Vec::new();
        for call_index in 0..self.calls {
            if let (true, Decider::Reference(policy)) = (self.wait_before_call, &decider) {
                start += policy.wait_before_call(start).as_millis() as u64;
            }
            let history = ClientHistory {
                call_index: if self.numbered { call_index } else { 0 },
                ..ClientHistory::default()
            };
            let mut call: Vec<AttemptView> = Vec::new();
            for n in 1..=self.attempts {
                let v = match &self.recorder {
                    Some(recorder) => recorded_view(recorder.as_ref(), n, start, reply(script, n)),
                    None => view(n, start, reply(script, n)),
                };
                let end = v.end_ms;
                let next = match &mut decider {
                    Decider::Client(client) => {
                        client(&v, &call, &mut rng).map(|answer| match self.answer {
                            Answer::DelayFromEnd => end + answer,
                            Answer::StartOfNext => answer.max(end),
                        })
                    }
                    // The reference starts its next attempt where it decided, inside the
                    // envelope (asserted).
                    Decider::Reference(policy) => reference_next(
                        &mut **policy,
                        &v,
                        &CallHistory::new(&call, &history),
                        &mut rng,
                        seed,
                    ),
                };
                call.push(v);
                match next {
                    Some(at) => start = at,
                    None => {
                        let held = match &decider {
                            Decider::Reference(policy) if self.wait_after_stop => {
                                policy.wait_after_stop().as_millis() as u64
                            }
                            _ => 0,
                        };
                        start = end + held + self.gap_ms;
                        break;
                    }
                }
            }
            out.push(call);
        }
        out
    }
}

/// The attempts of a run of one call.
fn only(mut calls: Vec<Vec<AttemptView>>) -> Vec<AttemptView> {
    assert_eq!(calls.len(), 1, "a run of one call");
    calls.remove(0)
}

// ---------------------------------------------------------------- the reference

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

/// Every violation over the calls, checked in order by one [`Conformance`]: what one client
/// carries from call to call (a quota, a token count) is judged as it is in a run.
pub(crate) fn violations(policy: &dyn Policy, calls: &[Vec<AttemptView>]) -> Vec<Violation> {
    let mut c = Conformance::new(policy.clone_box());
    calls.iter().flat_map(|call| c.check_call(call)).collect()
}

impl Sim {
    /// Over seeds `0..seeds`, the share on which the client `make` builds, run on this
    /// simulation against `script`, is reported with a violation `kind` accepts, and the
    /// first such message: how reliably a wrong client is caught.
    pub(crate) fn share_rejected<'a>(
        &self,
        seeds: u64,
        policy: &dyn Policy,
        script: &[Reply],
        mut make: impl FnMut() -> Box<Client<'a>>,
        kind: impl Fn(ViolationKind) -> bool,
    ) -> (f64, String) {
        share_caught(
            seeds,
            |seed| violations(policy, &self.run_client(script, seed, make().as_mut())),
            kind,
        )
    }

    /// Asserts that on every seed of `0..seeds` the client `make` builds, run on this
    /// simulation against `script`, breaks none of `policy`'s promises.
    pub(crate) fn assert_accepted<'a>(
        &self,
        seeds: u64,
        policy: &dyn Policy,
        script: &[Reply],
        mut make: impl FnMut() -> Box<Client<'a>>,
    ) {
        for seed in 0..seeds {
            let calls = self.run_client(script, seed, make().as_mut());
            let v = violations(policy, &calls);
            assert!(v.is_empty(), "seed {seed}: {v:#?}\n{calls:#?}");
        }
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
