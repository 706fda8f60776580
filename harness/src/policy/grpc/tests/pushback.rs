//! Server pushback (`grpc-retry-pushback-ms`): an exact delay that restarts the backoff; a
//! negative, unparsable or repeated value that stops the call (and costs a token); the
//! reference and correct clients under pushback; and clients that ignore it, do not restart
//! the backoff after it, or read a negative value as "retry now", caught.

use super::{
    A6Mistakes, a6, a6_client, accepted, check, grpc, reference_sim, rejection, throttle_trail,
    throttled,
};
use crate::policy::grpc::A6Jitter;
use crate::policy::tests::support::{Reply, retry_window as window, view, with};
use crate::policy::{CallHistory, ClientHistory, Envelope, StopReason, ViolationKind};

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
