//! The gRPC policies against literal numbers from docs/retry-behaviours.md#3-grpc, the
//! reference decision inside its envelope, and wrong clients (written here from scratch,
//! with literal constants and no call into the policy code) rejected by [`Conformance`].

use std::io;
use std::time::Duration;

use super::GrpcConnectionConfig;
use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Conformance, Decision, Envelope, Observed,
    Policy, StopReason, Violation, ViolationKind,
};
use crate::rng::Stream;

// ---------------------------------------------------------------- timelines

/// What the fake server does with one request.
#[derive(Debug, Clone)]
struct Reply {
    outcome: Observed,
    /// Response headers, as scripted.
    headers: Vec<(&'static str, &'static str)>,
    /// start -> end.
    latency_ms: u64,
}

/// An HTTP status after 10 ms.
fn http(status: u16) -> Reply {
    Reply {
        outcome: Observed::Status(status),
        headers: Vec::new(),
        latency_ms: 10,
    }
}

/// A refused connect after `latency_ms`.
fn refused(latency_ms: u64) -> Reply {
    Reply {
        outcome: Observed::Refused,
        headers: Vec::new(),
        latency_ms,
    }
}

/// A connect that never completed, given up after `latency_ms`.
fn timeout(latency_ms: u64) -> Reply {
    Reply {
        outcome: Observed::Timeout,
        ..refused(latency_ms)
    }
}

fn reset() -> Reply {
    Reply {
        outcome: Observed::Transport(io::ErrorKind::ConnectionReset),
        ..refused(5)
    }
}

fn view(n: u32, start: u64, r: &Reply) -> AttemptView {
    let end = start + r.latency_ms;
    let head = matches!(r.outcome, Observed::Status(_)).then_some(end);
    let mut v = AttemptView::new(n, r.outcome, start, head, end);
    for (name, value) in &r.headers {
        v = v.with_header(name, value);
    }
    v
}

/// A client under test: the attempt just made and the earlier ones of its call; the start
/// of the next attempt (virtual ms), or `None` to stop. Its state across calls lives in the
/// closure.
type Client<'a> = dyn FnMut(&AttemptView, &[AttemptView], &mut Stream) -> Option<u64> + 'a;

/// Runs `calls` calls of `client` one after another (1 s apart), each against `script`
/// (its last reply repeats), at most 40 attempts a call.
fn run_client(
    script: &[Reply],
    calls: u32,
    seed: u64,
    client: &mut Client<'_>,
) -> Vec<Vec<AttemptView>> {
    let mut rng = Stream::new(seed, "test/grpc/client");
    let mut start = 0;
    let mut out = Vec::new();
    for _ in 0..calls {
        let mut call: Vec<AttemptView> = Vec::new();
        for n in 1..=40u32 {
            let v = view(n, start, &script[(n as usize - 1).min(script.len() - 1)]);
            let next = client(&v, &call, &mut rng);
            let end = v.end_ms;
            call.push(v);
            match next {
                Some(at) => start = at.max(end),
                None => {
                    start = end + 1000;
                    break;
                }
            }
        }
        out.push(call);
    }
    out
}

/// Runs the policy's own `decide` the same way, asserting at every step that the decision
/// lies inside the envelope computed just before it.
fn run_reference(
    policy: &mut dyn Policy,
    script: &[Reply],
    calls: u32,
    seed: u64,
) -> Vec<Vec<AttemptView>> {
    let mut rng = Stream::new(seed, "client/0/jitter");
    let mut start = 0;
    let mut out = Vec::new();
    for call_index in 0..calls {
        let client = ClientHistory {
            call_index,
            ..Default::default()
        };
        let mut call: Vec<AttemptView> = Vec::new();
        for n in 1..=40u32 {
            let v = view(n, start, &script[(n as usize - 1).min(script.len() - 1)]);
            let history = CallHistory::new(&call, &client);
            let envelope = policy.envelope(&v, &history);
            let decision = policy.decide(&v, &history, &mut rng);
            assert!(
                envelope.admits(&v, &decision),
                "{} seed {seed}: {decision:?} outside {envelope:?} after {v:?}",
                policy.name()
            );
            let end = v.end_ms;
            call.push(v.clone());
            match decision {
                Decision::Retry {
                    delay,
                    measured_from,
                } => start = v.anchor_ms(measured_from) + delay.as_millis() as u64,
                Decision::Stop(_) => {
                    start = end + 1000;
                    break;
                }
            }
        }
        out.push(call);
    }
    out
}

/// Every violation over the calls, checked in order by one [`Conformance`].
fn check(policy: &dyn Policy, calls: &[Vec<AttemptView>]) -> Vec<Violation> {
    let mut c = Conformance::new(policy.clone_box());
    calls.iter().flat_map(|call| c.check_call(call)).collect()
}

const SEEDS: u64 = 100;

/// The share of seeds on which `kind` is reported, and the first such message.
fn rejection<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    calls: u32,
    mut make: impl FnMut() -> Box<Client<'a>>,
    kind: ViolationKind,
) -> (f64, String) {
    let mut caught = 0;
    let mut first = String::new();
    for seed in 0..SEEDS {
        let timeline = run_client(script, calls, seed, make().as_mut());
        if let Some(v) = check(policy, &timeline)
            .into_iter()
            .find(|v| v.kind == kind)
        {
            caught += 1;
            if first.is_empty() {
                first = v.message;
            }
        }
    }
    (caught as f64 / SEEDS as f64, first)
}

fn accepted<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    calls: u32,
    mut make: impl FnMut() -> Box<Client<'a>>,
) {
    for seed in 0..SEEDS {
        let timeline = run_client(script, calls, seed, make().as_mut());
        let v = check(policy, &timeline);
        assert!(v.is_empty(), "seed {seed}: {v:#?}\n{timeline:#?}");
    }
}

/// The window of a retry envelope, and what it counts from.
fn window(e: Envelope) -> (u64, u64, Anchor) {
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

// ---------------------------------------------------------------- connection backoff

/// The envelope after attempt `n` of a call of refused connects (20 ms each).
fn connect_window(policy: &dyn Policy, n: u32) -> (u64, u64, Anchor) {
    let v = view(n, 0, &refused(20));
    window(policy.envelope(&v, &CallHistory::empty()))
}

#[test]
fn connection_backoff_is_1_then_1_6_then_2_56_seconds_start_to_start() {
    let p = GrpcConnectionConfig::default().into_policy();
    // D(1) = INITIAL_BACKOFF exactly; then x1.6 with +-20 %, from the start of the attempt.
    assert_eq!(connect_window(p.as_ref(), 1), (1000, 1000, Anchor::Start));
    assert_eq!(connect_window(p.as_ref(), 2), (1280, 1920, Anchor::Start));
    assert_eq!(connect_window(p.as_ref(), 3), (2048, 3072, Anchor::Start));
    assert_eq!(connect_window(p.as_ref(), 4), (3277, 4915, Anchor::Start));
    // 1.6^10 = 109.95 s, 1.6^11 = 175.9 s: capped at MAX_BACKOFF before the jitter.
    assert_eq!(
        connect_window(p.as_ref(), 11),
        (87_961, 131_941, Anchor::Start)
    );
    assert_eq!(
        connect_window(p.as_ref(), 12),
        (96_000, 144_000, Anchor::Start)
    );
    assert_eq!(
        connect_window(p.as_ref(), 40),
        (96_000, 144_000, Anchor::Start)
    );
    // Every connect may run MIN_CONNECT_TIMEOUT, or to its deadline when that is later.
    assert_eq!(p.attempt_timeout(1), Some(Duration::from_secs(20)));
    assert_eq!(p.attempt_timeout(12), Some(Duration::from_secs(144)));
}

#[test]
fn a_connect_past_its_deadline_is_followed_at_once() {
    let p = GrpcConnectionConfig::default().into_policy();
    // A black-holed connect cut at MIN_CONNECT_TIMEOUT: its 1 s deadline passed long ago.
    let v = view(1, 0, &timeout(20_000));
    let e = p.envelope(&v, &CallHistory::empty());
    assert_eq!(window(e.clone()), (20_000, 20_000, Anchor::Start));
    let mut rng = Stream::new(1, "x");
    let mut reference = p.clone_box();
    let d = reference.decide(&v, &CallHistory::empty(), &mut rng);
    assert_eq!(
        d,
        Decision::Retry {
            delay: Duration::from_secs(20),
            measured_from: Anchor::Start
        }
    );
    // A connect that got an answer has connected: no connection backoff after it.
    let answered = view(1, 0, &http(503));
    assert_eq!(
        p.envelope(&answered, &CallHistory::empty()),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    assert_eq!(
        p.envelope(&view(1, 0, &http(200)), &CallHistory::empty()),
        Envelope::MustStop(StopReason::Success)
    );
}

#[test]
fn the_reference_draws_each_deadline_before_its_connect() {
    let mut p = GrpcConnectionConfig {
        max_attempts: Some(14),
        ..Default::default()
    }
    .into_policy();
    let mut rng = Stream::new(3, "client/0/jitter");
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut start = 0;
    for n in 1..=13u32 {
        let v = view(n, start, &refused(20));
        let Decision::Retry { delay, .. } =
            p.decide(&v, &CallHistory::new(&call, &client), &mut rng)
        else {
            panic!("attempt {n} stopped");
        };
        // The next connect may run to its drawn deadline when that is past 20 s.
        let next = p.attempt_timeout(n + 1).unwrap_or_default();
        assert!(next >= Duration::from_secs(20), "{next:?}");
        assert!(next <= Duration::from_secs(144), "{next:?}");
        start += delay.as_millis() as u64;
        call.push(v);
    }
    // Attempt 13's deadline lies in [96 s, 144 s], so its connect timeout is that deadline.
    let timeout = p.attempt_timeout(13).unwrap_or_default();
    assert!(timeout >= Duration::from_secs(96), "{timeout:?}");
    let v = view(14, start, &refused(20));
    assert_eq!(
        p.decide(&v, &CallHistory::new(&call, &client), &mut rng),
        Decision::Stop(StopReason::MaxAttemptsExceeded)
    );
}

fn connection_configs() -> Vec<GrpcConnectionConfig> {
    vec![
        GrpcConnectionConfig {
            max_attempts: Some(14),
            ..Default::default()
        },
        GrpcConnectionConfig {
            initial_backoff: Duration::from_millis(100),
            multiplier: 2.0,
            jitter: 0.5,
            max_backoff: Duration::from_millis(900),
            max_attempts: Some(9),
            ..Default::default()
        },
        GrpcConnectionConfig {
            jitter: 0.0,
            max_attempts: Some(5),
            ..Default::default()
        },
    ]
}

#[test]
fn connection_reference_stays_inside_its_envelope_and_conforms() {
    for config in connection_configs() {
        let policy = config.into_policy();
        for script in [
            vec![refused(20)],
            vec![refused(3), reset(), timeout(20_000), http(200)],
            vec![timeout(1500), refused(1), http(503)],
        ] {
            for seed in 0..60 {
                let timeline = run_reference(policy.clone_box().as_mut(), &script, 2, seed);
                let v = check(policy.as_ref(), &timeline);
                assert!(v.is_empty(), "seed {seed}: {v:#?}\n{timeline:#?}");
            }
        }
    }
}

/// A connection-backoff client written from scratch: integer ms, `jitter_first` jitters the
/// first deadline too, `from_end` sleeps the backoff after the failure instead of until the
/// deadline, `multiplier_tenths` is the growth (16 for 1.6); it stops after 14 attempts.
fn connect_client<'a>(
    jitter_first: bool,
    from_end: bool,
    multiplier_tenths: u64,
) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        if v.n >= 14
            || !matches!(
                v.outcome,
                Observed::Refused | Observed::Timeout | Observed::Transport(_)
            )
        {
            return None;
        }
        let mut b = 1000u64;
        for _ in 1..v.n {
            b = (b * multiplier_tenths / 10).min(120_000);
        }
        let d = if v.n == 1 && !jitter_first {
            b
        } else {
            // uniform in [0.8 b, 1.2 b]
            rng.uniform_u64(b * 8 / 10, b * 12 / 10)
        };
        Some(if from_end {
            v.end_ms + d
        } else {
            (v.start_ms + d).max(v.end_ms)
        })
    })
}

#[test]
fn correct_connection_clients_are_accepted() {
    let p = GrpcConnectionConfig {
        max_attempts: Some(14),
        ..Default::default()
    }
    .into_policy();
    for script in [
        vec![refused(20)],
        vec![refused(2), timeout(20_000), reset(), http(200)],
    ] {
        accepted(p.as_ref(), &script, 2, || connect_client(false, false, 16));
    }
}

#[test]
fn wrong_connection_clients_are_caught() {
    let p = GrpcConnectionConfig::default().into_policy();
    // Backoff measured from the failure, not from the connect's start: with 300 ms connects
    // the first retry comes 300 ms past its exact 1 s deadline.
    let (rate, message) = rejection(
        p.as_ref(),
        &[refused(300)],
        1,
        || connect_client(false, true, 16),
        ViolationKind::TooLate,
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 2 started 1.300s after the start of attempt 1, a refused connection \
         (needed exactly 1.000s)"
    );
    // The first deadline jittered as well.
    let (rate, _) = rejection(
        p.as_ref(),
        &[refused(20)],
        1,
        || connect_client(true, false, 16),
        ViolationKind::TooEarly,
    );
    let (late, _) = rejection(
        p.as_ref(),
        &[refused(20)],
        1,
        || connect_client(true, false, 16),
        ViolationKind::TooLate,
    );
    assert!(rate + late >= 0.95, "caught on {rate} + {late}");
    // Doubling instead of x1.6: the third connect's window [2.048s, 3.072s] is missed.
    let (rate, _) = rejection(
        p.as_ref(),
        &[refused(20)],
        1,
        || connect_client(false, false, 20),
        ViolationKind::TooLate,
    );
    assert!(rate >= 0.95, "caught on {rate}");
}
