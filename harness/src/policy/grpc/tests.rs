//! The gRPC policies against literal numbers from docs/retry-behaviours.md#3-grpc, the
//! reference decision inside its envelope, and wrong clients (written here from scratch,
//! with literal constants and no call into the policy code) rejected by [`Conformance`].

use std::time::Duration;

use super::{A6Jitter, GrpcConnectionConfig, GrpcRetryConfig, RetryThrottling};
use crate::policy::tests::support::{
    Answer, Client, Reply, Sim, refused, reset, retry_window as window, share_caught, st, timeout,
    view, with,
};
use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Conformance, Decision, Envelope,
    NO_CLIENT_HISTORY, Observed, Policy, StopReason, Violation, ViolationKind,
};
use crate::rng::Stream;

// ---------------------------------------------------------------- timelines

/// An HTTP 200 carrying `grpc-status: code`, after 10 ms.
fn grpc(code: &'static str) -> Reply {
    with(st(200), "grpc-status", code)
}

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream and answering the start of its next attempt.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls)
        .clients_drawing_on("test/grpc/client")
        .clients_answering(Answer::StartOfNext)
}

/// `calls` calls of at most 40 attempts, 1 s apart, numbered (the connection backoff draws
/// a deadline per call).
fn reference_sim(calls: u32) -> Sim {
    Sim::calls(calls).numbered()
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
    share_caught(
        SEEDS,
        |seed| {
            check(
                policy,
                &client_sim(calls).run_client(script, seed, make().as_mut()),
            )
        },
        |k| k == kind,
    )
}

fn accepted<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    calls: u32,
    mut make: impl FnMut() -> Box<Client<'a>>,
) {
    for seed in 0..SEEDS {
        let timeline = client_sim(calls).run_client(script, seed, make().as_mut());
        let v = check(policy, &timeline);
        assert!(v.is_empty(), "seed {seed}: {v:#?}\n{timeline:#?}");
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
    assert_eq!(
        p.attempt_timeout(&NO_CLIENT_HISTORY, 1),
        Some(Duration::from_secs(20))
    );
    assert_eq!(
        p.attempt_timeout(&NO_CLIENT_HISTORY, 12),
        Some(Duration::from_secs(144))
    );
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
    let answered = view(1, 0, &st(503));
    assert_eq!(
        p.envelope(&answered, &CallHistory::empty()),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    assert_eq!(
        p.envelope(&view(1, 0, &st(200)), &CallHistory::empty()),
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
    let mut thirteenth = None;
    for n in 1..=13u32 {
        let v = view(n, start, &refused(20));
        let Decision::Retry { delay, .. } =
            p.decide(&v, &CallHistory::new(&call, &client), &mut rng)
        else {
            panic!("attempt {n} stopped");
        };
        // The next connect may run to its drawn deadline when that is past 20 s.
        let next = p.attempt_timeout(&client, n + 1).unwrap_or_default();
        assert!(next >= Duration::from_secs(20), "{next:?}");
        assert!(next <= Duration::from_secs(144), "{next:?}");
        if n + 1 == 13 {
            thirteenth = Some(next);
        }
        start += delay.as_millis() as u64;
        call.push(v);
    }
    // Attempt 13's deadline, drawn when attempt 12 failed, lies in [96 s, 144 s], so its
    // connect timeout is that deadline.
    let timeout = thirteenth.unwrap_or_default();
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
            vec![refused(3), reset(), timeout(20_000), st(200)],
            vec![timeout(20_000), refused(1), st(503)],
        ] {
            for seed in 0..60 {
                let timeline =
                    reference_sim(2).run_reference(policy.clone_box().as_mut(), &script, seed);
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
        vec![refused(2), timeout(20_000), reset(), st(200)],
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

// ---------------------------------------------------------------- retry policy (A6)

/// The service config of docs/scenario-format.md's example: 0.1s doubling to 1s, retrying
/// `UNAVAILABLE`.
fn a6(max_attempts: u32, jitter: A6Jitter) -> GrpcRetryConfig {
    GrpcRetryConfig {
        max_attempts,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(1),
        backoff_multiplier: 2.0,
        retryable_status_codes: vec![14],
        jitter,
        throttling: None,
    }
}

/// The windows after attempts 1..=count of one call, each answered `reply` (state
/// replayed, the client retrying at the top of each window).
fn retry_windows(policy: &mut dyn Policy, reply: &Reply, count: u32) -> Vec<Envelope> {
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for n in 1..=count {
        let v = view(n, start, reply);
        let h = CallHistory::new(&call, &client);
        let e = policy.envelope(&v, &h);
        start = match &e {
            Envelope::Retry { max_ms, .. } => v.end_ms + max_ms,
            Envelope::MustStop(_) => v.end_ms + 1000,
        };
        policy.record(&v, &h, crate::policy::Next::Retried { start_ms: start });
        out.push(e);
        call.push(v);
    }
    out
}

#[test]
fn a6_2024_backoff_is_the_capped_exponential_times_0_8_to_1_2() {
    let mut p = a6(5, A6Jitter::Current).into_policy();
    let w: Vec<_> = retry_windows(p.as_mut(), &grpc("14"), 5)
        .into_iter()
        .take(4)
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (80, 120, Anchor::End),
            (160, 240, Anchor::End),
            (320, 480, Anchor::End),
            (640, 960, Anchor::End)
        ]
    );
    // 0.1s x 2^4 = 1.6s is capped at maxBackoff 1s before the jitter: [0.8s, 1.2s].
    let long = GrpcRetryConfig {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(200),
        backoff_multiplier: 3.0,
        ..a6(5, A6Jitter::Current)
    };
    let w: Vec<_> = retry_windows(long.into_policy().as_mut(), &grpc("14"), 4)
        .into_iter()
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (160, 240, Anchor::End),
            (480, 720, Anchor::End),
            (800, 1200, Anchor::End),
            (800, 1200, Anchor::End)
        ]
    );
}

#[test]
fn a6_legacy_backoff_is_uniform_from_zero() {
    let mut p = a6(5, A6Jitter::Legacy).into_policy();
    let w: Vec<_> = retry_windows(p.as_mut(), &st(503), 4)
        .into_iter()
        .map(window)
        .collect();
    assert_eq!(
        w,
        [
            (0, 100, Anchor::End),
            (0, 200, Anchor::End),
            (0, 400, Anchor::End),
            (0, 800, Anchor::End)
        ]
    );
}

#[test]
fn max_attempts_above_5_is_treated_as_5() {
    let mut p = a6(9, A6Jitter::Current).into_policy();
    assert_eq!(p.max_attempts(), Some(5));
    let w = retry_windows(p.as_mut(), &grpc("14"), 6);
    assert!(matches!(w[3], Envelope::Retry { .. }));
    assert_eq!(w[4], Envelope::MustStop(StopReason::MaxAttemptsExceeded));
    let mut two = a6(2, A6Jitter::Current).into_policy();
    let w = retry_windows(two.as_mut(), &grpc("14"), 2);
    assert_eq!(w[1], Envelope::MustStop(StopReason::MaxAttemptsExceeded));
}

#[test]
fn the_status_comes_from_grpc_status_else_from_the_http_status() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let after = |reply: Reply| p.envelope(&view(1, 0, &reply), &CallHistory::empty());
    let retried = |e: Envelope| matches!(e, Envelope::Retry { .. });
    // grpc-status wins over the HTTP status.
    assert!(retried(after(grpc("14"))));
    assert!(retried(after(with(st(500), "grpc-status", "14"))));
    assert_eq!(
        after(with(st(503), "grpc-status", "0")),
        Envelope::MustStop(StopReason::Success)
    );
    assert_eq!(
        after(grpc("3")),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    // A malformed status is INTERNAL, not retried here.
    assert_eq!(
        after(grpc("fourteen")),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    // Without grpc-status: gRPC's HTTP mapping (503 and 429 are UNAVAILABLE), 2xx is OK.
    assert!(retried(after(st(503))));
    assert!(retried(after(st(429))));
    assert_eq!(after(st(500)), Envelope::MustStop(StopReason::NotRetryable));
    assert_eq!(after(st(200)), Envelope::MustStop(StopReason::Success));
    // A broken or refused connection is UNAVAILABLE; a timeout is DEADLINE_EXCEEDED.
    assert!(retried(after(reset())));
    assert!(retried(after(refused(3))));
    assert_eq!(
        after(timeout(2000)),
        Envelope::MustStop(StopReason::NotRetryable)
    );
}

fn retry_configs() -> Vec<GrpcRetryConfig> {
    vec![
        a6(5, A6Jitter::Current),
        a6(9, A6Jitter::Legacy),
        GrpcRetryConfig {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(7),
            max_backoff: Duration::from_millis(50),
            backoff_multiplier: 1.3,
            retryable_status_codes: vec![14, 4, 8],
            jitter: A6Jitter::Current,
            throttling: None,
        },
    ]
}

fn retry_scripts() -> Vec<Vec<Reply>> {
    vec![
        vec![grpc("14")],
        vec![st(503), grpc("14"), grpc("0")],
        vec![grpc("8"), timeout(2000), grpc("3")],
        vec![reset(), refused(2), grpc("14")],
    ]
}

#[test]
fn retry_reference_stays_inside_its_envelope_and_conforms() {
    for config in retry_configs() {
        let policy = config.into_policy();
        for script in retry_scripts() {
            for seed in 0..60 {
                let timeline =
                    reference_sim(3).run_reference(policy.clone_box().as_mut(), &script, seed);
                let v = check(policy.as_ref(), &timeline);
                assert!(v.is_empty(), "seed {seed}: {v:#?}\n{timeline:#?}");
            }
        }
    }
}

/// What an A6 client written from scratch gets wrong.
#[derive(Debug, Clone, Copy, Default)]
struct A6Mistakes {
    /// Honours `maxAttempts` above 5 literally.
    no_cap: bool,
    /// Draws `uniform(0, b)` (the legacy rule) where `b × uniform(0.8, 1.2)` is due.
    legacy_jitter: bool,
    /// Reads only the HTTP status: a 200 is a success whatever its `grpc-status`.
    http_status_only: bool,
    /// Never reads `grpc-retry-pushback-ms`.
    ignore_pushback: bool,
    /// Keeps counting the backoff's exponent through a pushback retry.
    no_reset: bool,
    /// Reads a negative pushback as "retry now" instead of "do not retry".
    negative_as_zero: bool,
}

/// A pushback as the A6 client under test reads it: `Some(Some(ms))` to wait `ms`,
/// `Some(None)` to stop, `None` without one.
fn client_pushback(v: &AttemptView, m: A6Mistakes) -> Option<Option<u64>> {
    if m.ignore_pushback {
        return None;
    }
    let values: Vec<&str> = v
        .headers
        .iter()
        .filter(|(n, _)| n == "grpc-retry-pushback-ms")
        .map(|(_, value)| value.as_str())
        .collect();
    match values.as_slice() {
        [] => None,
        [one] => match one.parse::<i64>() {
            Ok(ms) if ms >= 0 => Some(Some(ms as u64)),
            Ok(_) if m.negative_as_zero => Some(Some(0)),
            _ => Some(None),
        },
        _ => Some(None),
    }
}

/// An A6 client for 0.1s doubling to 1s, retrying UNAVAILABLE (14), in integer ms.
fn a6_client<'a>(max_attempts: u32, m: A6Mistakes) -> Box<Client<'a>> {
    Box::new(move |v, previous, rng| {
        let code = match (v.outcome, v.header("grpc-status")) {
            (Observed::Status(200), _) if m.http_status_only => 0,
            (Observed::Status(_), Some(code)) => code.parse().unwrap_or(13),
            (Observed::Status(s), None) if (200..300).contains(&s) => 0,
            (Observed::Status(429 | 502 | 503 | 504), None) => 14,
            (Observed::Status(_), None) => 2,
            (Observed::Refused | Observed::Transport(_), _) => 14,
            (Observed::Timeout, _) => 4,
        };
        if code == 0 {
            return None;
        }
        let pushback = client_pushback(v, m);
        if pushback == Some(None) {
            return None;
        }
        let cap = if m.no_cap {
            max_attempts
        } else {
            max_attempts.min(5)
        };
        if code != 14 || v.n >= cap {
            return None;
        }
        if let Some(Some(ms)) = pushback {
            return Some(v.end_ms + ms);
        }
        // Retries since the last pushback retry.
        let k = if m.no_reset {
            v.n - 1
        } else {
            previous
                .iter()
                .rev()
                .take_while(|a| !matches!(client_pushback(a, m), Some(Some(_))))
                .count() as u32
        };
        let b = (100u64 << k).min(1000);
        let d = if m.legacy_jitter {
            rng.uniform_u64(0, b)
        } else {
            rng.uniform_u64(b * 8 / 10, b * 12 / 10)
        };
        Some(v.end_ms + d)
    })
}

#[test]
fn correct_a6_clients_are_accepted() {
    let p = a6(9, A6Jitter::Current).into_policy();
    for script in retry_scripts() {
        accepted(p.as_ref(), &script, 3, || {
            a6_client(9, A6Mistakes::default())
        });
    }
}

#[test]
fn max_attempts_9_honoured_literally_is_caught() {
    let p = a6(9, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        no_cap: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[grpc("14")],
        1,
        || a6_client(9, wrong),
        ViolationKind::RetriedAfterStop(StopReason::MaxAttemptsExceeded),
    );
    assert_eq!(rate, 1.0);
    assert!(message.starts_with("attempt 6 was made"), "{message}");
}

#[test]
fn legacy_jitter_judged_as_a6_2024_is_caught() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        legacy_jitter: true,
        ..Default::default()
    };
    // Each of the 4 retries falls below 0.8 b with probability 0.8.
    let (rate, _) = rejection(
        p.as_ref(),
        &[grpc("14")],
        1,
        || a6_client(5, wrong),
        ViolationKind::TooEarly,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    // And the legacy rule accepts it.
    accepted(
        a6(5, A6Jitter::Legacy).into_policy().as_ref(),
        &[grpc("14")],
        1,
        || a6_client(5, wrong),
    );
}

#[test]
fn a_client_reading_only_the_http_status_is_caught() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let wrong = A6Mistakes {
        http_status_only: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[grpc("14"), grpc("0")],
        1,
        || a6_client(5, wrong),
        ViolationKind::StoppedEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.starts_with("attempt 1: the call stopped"),
        "{message}"
    );
}

// ---------------------------------------------------------------- retry throttling

/// `a6(5)` with grpc-go's example throttle: `maxTokens` 10, `tokenRatio` 0.5.
fn throttled() -> GrpcRetryConfig {
    GrpcRetryConfig {
        throttling: Some(RetryThrottling {
            max_tokens: 10.0,
            token_ratio: 0.5,
        }),
        ..a6(5, A6Jitter::Current)
    }
}

/// Runs the reference over one call per script, 1 s apart; per attempt the state it
/// describes after deciding and whether it retried.
fn throttle_trail(policy: &mut dyn Policy, calls: &[Vec<Reply>]) -> Vec<Vec<String>> {
    let mut rng = Stream::new(5, "client/0/jitter");
    let mut out = Vec::new();
    let mut start = 0;
    for (i, script) in calls.iter().enumerate() {
        let client = ClientHistory {
            call_index: i as u32,
            ..Default::default()
        };
        let mut call: Vec<AttemptView> = Vec::new();
        let mut trail = Vec::new();
        for (n, reply) in script.iter().enumerate() {
            let v = view(n as u32 + 1, start, reply);
            let d = policy.decide(&v, &CallHistory::new(&call, &client), &mut rng);
            let state = policy.describe_state().unwrap_or_default();
            let end = v.end_ms;
            call.push(v);
            match d {
                Decision::Retry { delay, .. } => {
                    trail.push(format!("{state} -> retry"));
                    start = end + delay.as_millis() as u64;
                }
                Decision::Stop(reason) => {
                    trail.push(format!("{state} -> {reason}"));
                    start = end + 1000;
                    break;
                }
            }
        }
        out.push(trail);
    }
    out
}

#[test]
fn grpc_go_throttling_vector_max_tokens_10_ratio_0_5() {
    let mut p = throttled().into_policy();
    let unavailable = || vec![grpc("14"); 5];
    let ok = || vec![grpc("0")];
    let mut calls = vec![unavailable(), unavailable()];
    calls.extend((0..5).map(|_| ok()));
    calls.push(unavailable());
    calls.push(vec![grpc("3")]);
    calls.extend((0..12).map(|_| ok()));
    let trail = throttle_trail(p.as_mut(), &calls);
    let u = "UNAVAILABLE";
    // Each UNAVAILABLE costs a token; a retry needs more than 10 / 2 = 5 left. The fifth
    // failure leaves 5: the throttle stops the call before maxAttempts would have.
    assert_eq!(
        trail[0],
        [
            format!("{u}, tokens 9/10 -> retry"),
            format!("{u}, tokens 8/10 -> retry"),
            format!("{u}, tokens 7/10 -> retry"),
            format!("{u}, tokens 6/10 -> retry"),
            format!("{u}, tokens 5/10 -> retry_quota_exceeded"),
        ]
    );
    // Below half, a first failure stops at once.
    assert_eq!(
        trail[1],
        [format!("{u}, tokens 4/10 -> retry_quota_exceeded")]
    );
    // Each successful call adds 0.5.
    let oks: Vec<&str> = trail[2..7].iter().map(|t| t[0].as_str()).collect();
    assert_eq!(
        oks,
        [
            "OK, tokens 4.5/10 -> success",
            "OK, tokens 5/10 -> success",
            "OK, tokens 5.5/10 -> success",
            "OK, tokens 6/10 -> success",
            "OK, tokens 6.5/10 -> success",
        ]
    );
    // 6.5 - 1 = 5.5 is above half: one retry; 4.5 is not.
    assert_eq!(
        trail[7],
        [
            format!("{u}, tokens 5.5/10 -> retry"),
            format!("{u}, tokens 4.5/10 -> retry_quota_exceeded"),
        ]
    );
    // A code that is not retried costs nothing.
    assert_eq!(
        trail[8],
        ["INVALID_ARGUMENT, tokens 4.5/10 -> not_retryable"]
    );
    // Successes refill up to maxTokens and no further: 4.5 + 11 x 0.5 = 10, then 10.
    assert_eq!(trail[19], ["OK, tokens 10/10 -> success"]);
    assert_eq!(trail[20], ["OK, tokens 10/10 -> success"]);
}

#[test]
fn throttled_reference_conforms_across_calls() {
    let policy = throttled().into_policy();
    for script in retry_scripts() {
        for seed in 0..30 {
            let timeline =
                reference_sim(12).run_reference(policy.clone_box().as_mut(), &script, seed);
            let v = check(policy.as_ref(), &timeline);
            assert!(v.is_empty(), "seed {seed}: {v:#?}");
        }
    }
}

/// A throttled A6 client written from scratch (`max` tokens, `ratio` thousandths of a token
/// per success, counted in thousandths); `ignore` never stops for the throttle,
/// `strict_below` retries while the count is at least half instead of above it.
fn throttled_client<'a>(max: u64, ratio: u64, ignore: bool, strict_below: bool) -> Box<Client<'a>> {
    let max = max * 1000;
    let mut tokens: u64 = max;
    Box::new(move |v, _previous, rng| {
        let code = v
            .header("grpc-status")
            .map_or(2, |c| c.parse().unwrap_or(13));
        if code == 0 {
            tokens = (tokens + ratio).min(max);
            return None;
        }
        if code != 14 {
            return None;
        }
        tokens = tokens.saturating_sub(1000);
        let throttled = if strict_below {
            tokens * 2 < max
        } else {
            tokens * 2 <= max
        };
        if (throttled && !ignore) || v.n >= 5 {
            return None;
        }
        let b = (100u64 << (v.n - 1)).min(1000);
        Some(v.end_ms + rng.uniform_u64(b * 8 / 10, b * 12 / 10))
    })
}

#[test]
fn throttling_clients_right_and_wrong() {
    let p = throttled().into_policy();
    let script = [grpc("14"), grpc("14"), grpc("0")];
    accepted(p.as_ref(), &script, 12, || {
        throttled_client(10, 500, false, false)
    });
    accepted(p.as_ref(), &[grpc("14")], 6, || {
        throttled_client(10, 500, false, false)
    });
    // Retrying on an empty bucket.
    let (rate, message) = rejection(
        p.as_ref(),
        &[grpc("14")],
        3,
        || throttled_client(10, 500, true, false),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    // The first call spends 5 tokens in its 5 attempts; the second retries on 4.
    assert!(
        message.starts_with("attempt 2 was made after a 200 but the retry quota could not pay"),
        "{message}"
    );
    // Retrying at exactly half: with maxTokens 4, the second failure leaves 2, which stops.
    let small = GrpcRetryConfig {
        throttling: Some(RetryThrottling {
            max_tokens: 4.0,
            token_ratio: 1.0,
        }),
        ..throttled()
    }
    .into_policy();
    accepted(small.as_ref(), &script, 8, || {
        throttled_client(4, 1000, false, false)
    });
    let (rate, message) = rejection(
        small.as_ref(),
        &[grpc("14")],
        1,
        || throttled_client(4, 1000, false, true),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    assert!(message.starts_with("attempt 3 was made"), "{message}");
}

// ---------------------------------------------------------------- pushback

#[test]
fn pushback_sets_the_exact_delay_and_restarts_the_backoff() {
    let mut p = a6(5, A6Jitter::Current).into_policy();
    let script = [
        grpc("14"),
        with(grpc("14"), "grpc-retry-pushback-ms", "1500"),
        grpc("14"),
        grpc("14"),
    ];
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut windows = Vec::new();
    let mut start = 0;
    for (i, reply) in script.iter().enumerate() {
        let v = view(i as u32 + 1, start, reply);
        let h = CallHistory::new(&call, &client);
        let e = p.envelope(&v, &h);
        if i == 1 {
            let Envelope::Retry { not_before, .. } = &e else {
                panic!("{e:?}");
            };
            let floor = not_before.as_ref().map(|nb| (nb.header, nb.at_ms));
            assert_eq!(floor, Some(("grpc-retry-pushback-ms", v.end_ms + 1500)));
        }
        let (lo, hi, _) = window(e);
        windows.push((lo, hi));
        start = v.end_ms + hi;
        p.record(&v, &h, crate::policy::Next::Retried { start_ms: start });
        call.push(v);
    }
    // 0.1s x[0.8, 1.2]; exactly 1.5s; then 0.1s again, not 0.4s; then 0.2s.
    assert_eq!(windows, [(80, 120), (1500, 1500), (80, 120), (160, 240)]);
}

#[test]
fn a_negative_unparsable_or_repeated_pushback_stops_the_call() {
    let p = throttled().into_policy();
    let after = |reply: Reply| p.envelope(&view(1, 0, &reply), &CallHistory::empty());
    let stop = Envelope::MustStop(StopReason::Pushback);
    assert_eq!(
        after(with(grpc("14"), "grpc-retry-pushback-ms", "-1")),
        stop
    );
    assert_eq!(
        after(with(grpc("14"), "grpc-retry-pushback-ms", "1s")),
        stop
    );
    let twice = with(
        with(grpc("14"), "grpc-retry-pushback-ms", "10"),
        "grpc-retry-pushback-ms",
        "10",
    );
    assert_eq!(after(twice), stop);
    // Read before the status, as grpc-go does: even a code that is not retried.
    assert_eq!(after(with(grpc("3"), "grpc-retry-pushback-ms", "-1")), stop);
    // A valid pushback does not make a code retryable, nor lift maxAttempts.
    assert_eq!(
        after(with(grpc("3"), "grpc-retry-pushback-ms", "10")),
        Envelope::MustStop(StopReason::NotRetryable)
    );
    let last = view(5, 0, &with(grpc("14"), "grpc-retry-pushback-ms", "10"));
    assert_eq!(
        p.envelope(&last, &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    // A pushback that stops the call costs a token.
    let mut q = throttled().into_policy();
    let trail = throttle_trail(
        q.as_mut(),
        &[vec![with(grpc("14"), "grpc-retry-pushback-ms", "-1")]],
    );
    assert_eq!(trail[0], ["UNAVAILABLE, tokens 9/10 -> pushback"]);
}

fn pushback_scripts() -> Vec<Vec<Reply>> {
    vec![
        vec![with(grpc("14"), "grpc-retry-pushback-ms", "2000")],
        vec![
            grpc("14"),
            with(grpc("14"), "grpc-retry-pushback-ms", "700"),
            grpc("14"),
            grpc("14"),
            grpc("0"),
        ],
        vec![
            grpc("14"),
            with(grpc("14"), "grpc-retry-pushback-ms", "0"),
            with(grpc("14"), "grpc-retry-pushback-ms", "-5"),
        ],
    ]
}

#[test]
fn pushback_reference_conforms_and_correct_clients_are_accepted() {
    for config in [
        a6(5, A6Jitter::Current),
        a6(5, A6Jitter::Legacy),
        throttled(),
    ] {
        let policy = config.into_policy();
        for script in pushback_scripts() {
            for seed in 0..30 {
                let timeline =
                    reference_sim(3).run_reference(policy.clone_box().as_mut(), &script, seed);
                let v = check(policy.as_ref(), &timeline);
                assert!(v.is_empty(), "seed {seed}: {v:#?}");
            }
        }
    }
    let p = a6(5, A6Jitter::Current).into_policy();
    for script in pushback_scripts() {
        accepted(p.as_ref(), &script, 2, || {
            a6_client(5, A6Mistakes::default())
        });
    }
}

#[test]
fn wrong_pushback_clients_are_caught() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let scripts = pushback_scripts();
    // Pushback ignored: the backoff's 0.1s where 2s were asked for.
    let ignore = A6Mistakes {
        ignore_pushback: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &scripts[0],
        1,
        || a6_client(5, ignore),
        ViolationKind::RetryAfterNotHonoured,
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.contains("with grpc-retry-pushback-ms: 2000 (needed >= 2.000s)"),
        "{message}"
    );
    // The backoff not restarted after a pushback retry: 0.4s where 0.1s is due.
    let no_reset = A6Mistakes {
        no_reset: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &scripts[1],
        1,
        || a6_client(5, no_reset),
        ViolationKind::TooLate,
    );
    assert_eq!(rate, 1.0);
    // A negative pushback read as "retry now".
    let negative = A6Mistakes {
        negative_as_zero: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &scripts[2],
        1,
        || a6_client(5, negative),
        ViolationKind::RetriedAfterStop(StopReason::Pushback),
    );
    assert_eq!(rate, 1.0);
    assert!(message.starts_with("attempt 4 was made"), "{message}");
}

// ---------------------------------------------------------------- grpc-previous-rpc-attempts

#[test]
fn every_retry_carries_grpc_previous_rpc_attempts() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let sent: Vec<Vec<(String, String)>> = (1..=4)
        .map(|n| {
            p.request_headers(n)
                .into_iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        value.to_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .collect();
    let header = |v: &str| vec![("grpc-previous-rpc-attempts".to_owned(), v.to_owned())];
    assert_eq!(sent, [vec![], header("1"), header("2"), header("3")]);
    // The connection backoff sends nothing of its own.
    let c = GrpcConnectionConfig::default().into_policy();
    assert!(c.request_headers(2).is_empty());
}

#[test]
fn a_connect_given_up_before_its_minimum_is_caught() {
    let p = GrpcConnectionConfig::default().into_policy();
    // Three black-holed connects given up at 1 s each, then retried on the deadline: the
    // delays fit, but a connect may run until max(D(n), MIN_CONNECT_TIMEOUT) = 20 s.
    let call = [
        view(1, 0, &timeout(1000)),
        view(2, 1000, &timeout(1000)),
        view(3, 2600, &timeout(1000)),
        view(4, 5000, &st(200)),
    ];
    let early: Vec<u32> = Conformance::new(p.clone_box())
        .check_call(&call)
        .iter()
        .filter(|v| v.kind == ViolationKind::GaveUpEarly)
        .map(|v| v.attempt)
        .collect();
    assert_eq!(early, [1, 2, 3]);
    // A client whose own attempt timeout is 1 s cut them there, as it was told to.
    let own = Conformance::new(p.clone_box())
        .with_attempt_timeout_ms(Some(1000))
        .check_call(&call);
    assert!(
        own.iter().all(|v| v.kind != ViolationKind::GaveUpEarly),
        "{own:?}"
    );
    // The reference client's connects run their 20 s and are not flagged.
    let full = [view(1, 0, &timeout(20_000)), view(2, 20_000, &st(200))];
    assert!(Conformance::new(p).check_call(&full).is_empty());
}
