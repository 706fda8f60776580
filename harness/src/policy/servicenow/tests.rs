//! The `ServiceNow` policies against the numbers of docs/retry-behaviours.md#5-servicenow
//! (the vendor's worked example with a 400 ms base), the reference decision inside its
//! envelope, and wrong clients (written here from scratch, with literal formulas and no call
//! into the policy code) rejected by [`Conformance`].

use std::io;
use std::time::Duration;

use super::{DelayUnit, ServicenowExponentialConfig, ServicenowHeaderConfig};
use crate::policy::tests::support::{
    Client, Reply, Sim, failure, retry_window as window, st, view, with,
};
use crate::policy::{
    Anchor, AttemptView, CallHistory, Conformance, Envelope, Observed, Policy, StopReason,
    Violation, ViolationKind,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

// ---------------------------------------------------------------- timelines

/// One call of at most 20 attempts, a client under test drawing on its own stream.
fn sim() -> Sim {
    Sim::calls(1)
        .of_at_most(20)
        .clients_drawing_on("test/servicenow/client")
}

fn check(policy: &dyn Policy, call: &[AttemptView]) -> Vec<Violation> {
    Conformance::new(policy.clone_box()).check_call(call)
}

fn stop(e: Envelope) -> StopReason {
    match e {
        Envelope::MustStop(reason) => reason,
        other => panic!("expected a stop, got {other:?}"),
    }
}

/// The vendor's worked example: a 400 ms base, and (the format's example) a 1500 ms window.
fn example(window_ms: u64) -> ServicenowExponentialConfig {
    ServicenowExponentialConfig {
        base_delay: MS(400),
        additional_delay_window: MS(window_ms),
        ..Default::default()
    }
}

const SEEDS: u64 = 100;

/// The share of seeds on which `client` is reported with a violation `kind` accepts, and the
/// first such message.
fn rejection<'a>(
    policy: &dyn Policy,
    script: &[Reply],
    make: impl Fn() -> Box<Client<'a>>,
    kind: impl Fn(ViolationKind) -> bool,
) -> (f64, String) {
    sim().share_rejected(SEEDS, policy, script, make, kind)
}

fn is(kind: ViolationKind) -> impl Fn(ViolationKind) -> bool {
    move |k| k == kind
}

// ---------------------------------------------------------------- published numbers

#[test]
fn worked_example_400_1200_2800_plus_the_window() {
    let bounds: Vec<Duration> = (1..=3).map(|n| example(0).backoff_bound(n)).collect();
    assert_eq!(bounds, [MS(400), MS(1200), MS(2800)]);
    for (window_ms, tops) in [(0, [400, 1200, 2800]), (1500, [1900, 2700, 4300])] {
        let p = example(window_ms).into_policy();
        let windows: Vec<(u64, u64, Anchor)> = (1..=3)
            .map(|n| window(p.envelope(&view(n, 0, &st(429)), &CallHistory::empty())))
            .collect();
        assert_eq!(
            windows,
            tops.map(|top| (0, top, Anchor::End)),
            "window {window_ms}"
        );
    }
    // After the third retry (max_retries 3) the call stops.
    let p = example(1500).into_policy();
    assert_eq!(
        stop(p.envelope(&view(4, 0, &st(429)), &CallHistory::empty())),
        StopReason::MaxAttemptsExceeded
    );
}

#[test]
fn the_cap_applies_before_the_window() {
    let config = ServicenowExponentialConfig {
        max_delay: MS(1000),
        ..example(1500)
    };
    let p = config.clone().into_policy();
    let w = |n| window(p.envelope(&view(n, 0, &st(429)), &CallHistory::empty()));
    assert_eq!(w(2), (0, 2500, Anchor::End));
    assert_eq!(w(3), (0, 2500, Anchor::End));
    assert_eq!(config.backoff_bound(40), MS(1000));
    // A huge retry number saturates instead of wrapping.
    assert_eq!(config.backoff_bound(200), MS(1000));
}

#[test]
fn reference_draws_cover_the_window() {
    // Retry 3 of the example, window 1500: the draws sum two uniforms over [0, 2800] and
    // [0, 1500]; over many seeds they reach near both ends and stay inside.
    let (mut lo, mut hi) = (u64::MAX, 0);
    for seed in 0..400 {
        let mut p = example(1500).into_policy();
        let call = sim().reference_call(p.as_mut(), &[st(429)], seed);
        assert_eq!(call.len(), 4);
        let gap = call[3].start_ms - call[2].end_ms;
        lo = lo.min(gap);
        hi = hi.max(gap);
    }
    assert!(lo < 500 && hi > 3800, "{lo}..{hi}");
}

#[test]
fn what_is_retried() {
    let p = example(0).into_policy();
    let e = |r: &Reply| p.envelope(&view(1, 0, r), &CallHistory::empty());
    assert_eq!(stop(e(&st(200))), StopReason::Success);
    assert_eq!(stop(e(&st(503))), StopReason::NotRetryable);
    for outcome in [
        Observed::Timeout,
        Observed::Refused,
        Observed::Transport(io::ErrorKind::ConnectionReset),
    ] {
        let r = failure(outcome, 10);
        assert_eq!(stop(e(&r)), StopReason::NotRetryable, "{outcome:?}");
    }
    let listed = ServicenowExponentialConfig {
        response_codes: vec![429, 503],
        ..example(0)
    }
    .into_policy();
    assert!(matches!(
        listed.envelope(&view(1, 0, &st(503)), &CallHistory::empty()),
        Envelope::Retry { .. }
    ));
    assert_eq!(p.max_attempts(), Some(4));
}

#[test]
fn validation() {
    let bad = ServicenowExponentialConfig {
        base_delay: MS(2000),
        max_delay: MS(1000),
        ..Default::default()
    };
    assert_eq!(bad.validate().unwrap_err().field, "base_delay");
    assert!(example(1500).validate().is_ok());
}

#[test]
fn header_delay_in_its_unit_plus_the_window() {
    let seconds = ServicenowHeaderConfig {
        additional_delay_window: MS(1500),
        ..Default::default()
    }
    .into_policy();
    let e = |p: &dyn Policy, r: &Reply| p.envelope(&view(1, 0, r), &CallHistory::empty());
    assert_eq!(
        window(e(seconds.as_ref(), &with(st(429), "Retry-After", "2"))),
        (2000, 3500, Anchor::End)
    );
    let millis = ServicenowHeaderConfig {
        header: "X-RateLimit-Reset-Ms".to_string(),
        unit: DelayUnit::Milliseconds,
        additional_delay_window: MS(1500),
        ..Default::default()
    }
    .into_policy();
    assert_eq!(
        window(e(
            millis.as_ref(),
            &with(st(429), "x-ratelimit-reset-ms", " 250 ")
        )),
        (250, 1750, Anchor::End)
    );
    // No header, or one that is no number: nothing to wait for, no retry.
    for r in [
        st(429),
        with(st(429), "X-RateLimit-Reset-Ms", "soon"),
        with(st(429), "X-RateLimit-Reset-Ms", "-5"),
        with(st(429), "X-RateLimit-Reset-Ms", "1.5"),
        with(st(429), "Retry-After", "250"),
    ] {
        assert_eq!(
            stop(e(millis.as_ref(), &r)),
            StopReason::NotRetryable,
            "{r:?}"
        );
    }
    // The parsed Retry-After is what counts for that header, as the conformance check
    // rebuilds it.
    let parsed = view(1, 0, &st(429)).with_retry_after(crate::policy::RetryAfterValue::parse("3"));
    assert_eq!(
        window(seconds.envelope(&parsed, &CallHistory::empty())),
        (3000, 4500, Anchor::End)
    );
    // Lines that disagree: the first one counts.
    let repeated = view(1, 0, &st(429)).with_retry_after(
        crate::policy::RetryAfterValue::from_field_values(["2", "5"])
            .unwrap_or(crate::policy::RetryAfterValue::Seconds(0)),
    );
    assert_eq!(
        window(seconds.envelope(&repeated, &CallHistory::empty())),
        (2000, 3500, Anchor::End)
    );
    let date = view(1, 0, &st(429)).with_retry_after(crate::policy::RetryAfterValue::parse(
        "Thu, 01 Jan 2026 00:00:03 GMT",
    ));
    assert_eq!(
        stop(seconds.envelope(&date, &CallHistory::empty())),
        StopReason::NotRetryable
    );
    assert_eq!(
        stop(e(seconds.as_ref(), &with(st(404), "Retry-After", "2"))),
        StopReason::NotRetryable
    );
    assert_eq!(
        stop(seconds.envelope(
            &view(4, 0, &with(st(429), "Retry-After", "2")),
            &CallHistory::empty()
        )),
        StopReason::MaxAttemptsExceeded
    );
}

#[test]
fn header_reference_stays_inside_and_conforms() {
    let config = ServicenowHeaderConfig {
        additional_delay_window: MS(1500),
        ..Default::default()
    };
    for seed in 0..SEEDS {
        let mut p = config.clone().into_policy();
        let call = sim().reference_call(
            p.as_mut(),
            &[
                with(st(429), "Retry-After", "1"),
                with(st(429), "Retry-After", "2"),
            ],
            seed,
        );
        assert_eq!(call.len(), 4);
        assert!(check(config.clone().into_policy().as_ref(), &call).is_empty());
    }
}

// ---------------------------------------------------------------- wrong clients

/// A `servicenow_exponential` client for the example (400 ms base, 1500 ms window, 60 s cap,
/// retrying 429s up to 3 times), written from the vendor's formula, with `wrong` applied.
#[derive(Default, Clone, Copy)]
struct Wrong {
    retries_503: bool,
    extra_retry: bool,
    no_randomness: bool,
    exponent_plus_one: bool,
}

fn exponential_client<'a>(w: Wrong) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        let retried = match v.outcome {
            Observed::Status(429) => true,
            Observed::Status(503) => w.retries_503,
            _ => false,
        };
        let retries = if w.extra_retry { 4 } else { 3 };
        if !retried || v.n > retries {
            return None;
        }
        let exponent = if w.exponent_plus_one { v.n + 1 } else { v.n };
        let top = f64::from((1u32 << exponent) - 1);
        let (multiplier, jitter) = if w.no_randomness {
            (top, 1500.0)
        } else {
            (rng.uniform_f64() * top, rng.uniform_f64() * 1500.0)
        };
        Some(libm::round((400.0 * multiplier).min(60_000.0) + jitter) as u64)
    })
}

#[test]
fn correct_exponential_client_is_accepted() {
    let p = example(1500).into_policy();
    for script in [
        vec![st(429)],
        vec![st(429), st(503)],
        vec![st(429), st(200)],
    ] {
        for seed in 0..SEEDS {
            let call =
                sim().client_call(&script, seed, exponential_client(Wrong::default()).as_mut());
            let v = check(p.as_ref(), &call);
            assert!(v.is_empty(), "seed {seed}: {v:#?}");
        }
        for seed in 0..SEEDS {
            let mut reference = example(1500).into_policy();
            let call = sim().reference_call(reference.as_mut(), &script, seed);
            assert!(check(p.as_ref(), &call).is_empty());
        }
    }
}

#[test]
fn exponential_wrong_clients_are_caught() {
    let p = example(1500).into_policy();
    let retries_503 = Wrong {
        retries_503: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(429), st(503)],
        || exponential_client(retries_503),
        is(ViolationKind::RetriedAfterStop(StopReason::NotRetryable)),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 3 was made after a 503, which the policy does not retry"
    );
    let extra = Wrong {
        extra_retry: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(429)],
        || exponential_client(extra),
        is(ViolationKind::RetriedAfterStop(
            StopReason::MaxAttemptsExceeded,
        )),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 5 was made but the policy allows at most 4 attempts"
    );
    // Every delay at the top of its window: each is allowed, the repetition is not.
    let fixed = Wrong {
        no_randomness: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(429)],
        || exponential_client(fixed),
        is(ViolationKind::PinnedAtBound),
    );
    assert_eq!(rate, 1.0);
    assert!(message.contains("exactly at the maximum"), "{message}");
    // `2^(n+1) - 1`: about three times the span; over three retries a correct client's draws
    // leave the window about two times in three.
    let plus_one = Wrong {
        exponent_plus_one: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &[st(429)],
        || exponential_client(plus_one),
        is(ViolationKind::TooLate),
    );
    assert!(rate >= 0.5, "caught on {rate}");
}

/// A `servicenow_header` client for `Retry-After` in seconds with a 1500 ms window, written
/// from the vendor's description, with its defect.
#[derive(Clone, Copy, PartialEq)]
enum HeaderDefect {
    None,
    ReadsMilliseconds,
    NoWindow,
    IgnoresHeader,
}

fn header_client<'a>(defect: HeaderDefect) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        if v.outcome != Observed::Status(429) || v.n > 3 {
            return None;
        }
        let value: u64 = v.header("retry-after")?.trim().parse().ok()?;
        let base = match defect {
            HeaderDefect::ReadsMilliseconds => value,
            HeaderDefect::IgnoresHeader => 1000,
            _ => value * 1000,
        };
        let jitter = match defect {
            HeaderDefect::NoWindow => 0,
            _ => rng.uniform_u64(0, 1500),
        };
        Some(base + jitter)
    })
}

#[test]
fn header_wrong_clients_are_caught() {
    let p = ServicenowHeaderConfig {
        additional_delay_window: MS(1500),
        ..Default::default()
    }
    .into_policy();
    let script = [
        with(st(429), "Retry-After", "2"),
        with(st(429), "Retry-After", "3"),
    ];
    for seed in 0..SEEDS {
        let call = sim().client_call(&script, seed, header_client(HeaderDefect::None).as_mut());
        assert_eq!(call.len(), 4);
        let v = check(p.as_ref(), &call);
        assert!(v.is_empty(), "seed {seed}: {v:#?}");
    }
    let (rate, message) = rejection(
        p.as_ref(),
        &script,
        || header_client(HeaderDefect::ReadsMilliseconds),
        is(ViolationKind::TooEarly),
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.starts_with("attempt 2 started ")
            && message.contains("s after the end of attempt 1, a 429")
            && message.ends_with("(needed 2.000s to 3.500s)"),
        "{message}"
    );
    let (rate, message) = rejection(
        p.as_ref(),
        &script,
        || header_client(HeaderDefect::NoWindow),
        is(ViolationKind::PinnedAtBound),
    );
    assert_eq!(rate, 1.0);
    assert!(message.contains("exactly at the minimum"), "{message}");
    let (rate, _) = rejection(
        p.as_ref(),
        &script,
        || header_client(HeaderDefect::IgnoresHeader),
        is(ViolationKind::TooEarly),
    );
    assert!(rate >= 0.9, "caught on {rate}");
}
