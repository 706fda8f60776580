//! The connection backoff: each connect's deadline (1 s, then x1.6 with +-20 % jitter up to
//! `MAX_BACKOFF`, measured start to start), a connect running to `MIN_CONNECT_TIMEOUT` or to its
//! deadline, the reference inside its envelope, and connection clients written from scratch,
//! right and wrong (backoff from the failure, the first deadline jittered, doubling, connects
//! given up before their minimum).

use std::time::Duration;

use super::{accepted, check, reference_sim, rejection};
use crate::policy::grpc::GrpcConnectionConfig;
use crate::policy::tests::support::{
    Client, refused, reset, retry_window as window, st, timeout, view,
};
use crate::policy::{
    Anchor, CallHistory, ClientHistory, Conformance, Decision, Envelope, NO_CLIENT_HISTORY,
    Observed, Policy, StopReason, ViolationKind,
};
use crate::rng::Stream;

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
