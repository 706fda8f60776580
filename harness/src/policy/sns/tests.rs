//! The SNS delivery policy against literal numbers from docs/retry-behaviours.md#1-amazon-sns-delivery-policies, the reference
//! decision inside its envelope, and wrong clients (written here from scratch, with literal
//! formulas and no call into the policy code) rejected by [`Conformance`].

use std::io;
use std::time::Duration;

use super::{SnsBackoff, SnsConfig, SnsPhase};
use crate::policy::tests::support::{
    Client, Reply, Sim, failure, refused, retry_window, share_caught, st, timeout, view,
};
use crate::policy::{
    Anchor, AttemptView, CallHistory, Conformance, Envelope, Observed, Policy, StopReason,
    Violation, ViolationKind,
};
use crate::rng::Stream;

const S: fn(u64) -> Duration = Duration::from_secs;

// ---------------------------------------------------------------- timelines

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls).clients_drawing_on("test/sns/client")
}

/// `calls` calls of at most `limit` attempts, 1 ms apart, the reference waiting the
/// policy's `wait_before_call` before each.
fn reference_sim(calls: u32, limit: u32) -> Sim {
    Sim::calls(calls)
        .of_at_most(limit)
        .ms_apart(1)
        .waiting_before_each()
}

/// To the nearest ms, halves up (the policy's single rounding).
fn rounded_ms(d: Duration) -> u64 {
    (d.as_nanos() as u64 + 500_000) / 1_000_000
}

fn check(policy: &dyn Policy, calls: &[Vec<AttemptView>]) -> Vec<Violation> {
    let mut c = Conformance::new(policy.clone_box());
    calls.iter().flat_map(|call| c.check_call(call)).collect()
}

fn window(e: Envelope) -> (u64, u64) {
    let (min_ms, max_ms, from) = retry_window(e);
    assert_eq!(
        from,
        Anchor::End,
        "SNS delays run from the end of an attempt"
    );
    (min_ms, max_ms)
}

/// The windows after attempts 1..=count, each a 503 10 ms long.
fn windows(config: SnsConfig, count: u32) -> Vec<(u64, u64)> {
    let p = config.into_policy();
    (1..=count)
        .map(|n| window(p.envelope(&view(n, 0, &st(503)), &CallHistory::empty())))
        .collect()
}

fn linear_20_40(jitter: f64) -> SnsConfig {
    SnsConfig {
        min_delay: S(20),
        max_delay: S(40),
        num_retries: 3,
        jitter,
        ..Default::default()
    }
}

// ---------------------------------------------------------------- published numbers

#[test]
fn linear_20_30_40() {
    assert_eq!(
        windows(linear_20_40(0.0), 3),
        [(20_000, 20_000), (30_000, 30_000), (40_000, 40_000)]
    );
    // ±10 % by default, inclusive.
    assert_eq!(
        windows(linear_20_40(0.1), 3),
        [(18_000, 22_000), (27_000, 33_000), (36_000, 44_000)]
    );
    let p = linear_20_40(0.1).into_policy();
    assert_eq!(p.max_attempts(), Some(4));
    assert_eq!(
        p.envelope(&view(4, 0, &st(503)), &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    // SNS's default policy: 3 retries at 20 s.
    assert_eq!(
        windows(
            SnsConfig {
                jitter: 0.0,
                ..Default::default()
            },
            3
        ),
        [(20_000, 20_000); 3]
    );
}

#[test]
fn aws_managed_preset_has_100_015_retries() {
    let c = SnsConfig::aws_managed();
    assert_eq!(c.num_retries, 100_015);
    assert_eq!(
        (
            c.num_no_delay_retries,
            c.num_min_delay_retries,
            c.backoff_retries(),
            c.num_max_delay_retries
        ),
        (3, 2, 10, 100_000)
    );
    assert_eq!(c.phase(3), Some(SnsPhase::Immediate));
    assert_eq!(c.phase(4), Some(SnsPhase::PreBackoff));
    assert_eq!(c.phase(5), Some(SnsPhase::PreBackoff));
    assert_eq!(c.phase(6), Some(SnsPhase::Backoff { i: 1, n: 10 }));
    assert_eq!(c.phase(15), Some(SnsPhase::Backoff { i: 10, n: 10 }));
    assert_eq!(c.phase(16), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(100_015), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(100_016), None);
    let nominal: Vec<u64> = (1..=17)
        .map(|r| rounded_ms(c.nominal_delay(r).unwrap()))
        .collect();
    // 1 s..20 s exponential: 1 + 19 × (e^(i-1) - 1) / (e^9 - 1), rounded to ms.
    assert_eq!(
        nominal,
        [
            0, 0, 0, 1000, 1000, 1000, 1004, 1015, 1045, 1126, 1346, 1944, 3569, 7988, 20_000,
            20_000, 20_000
        ]
    );
    // About 23 days: 2,000,042.036 s.
    assert_eq!(rounded_ms(c.total_retry_time()), 2_000_042_036);
    // The whole delivery: 100,016 attempts, then max_attempts_exceeded.
    let mut p = c.clone().into_policy();
    assert_eq!(p.max_attempts(), Some(100_016));
    let calls = reference_sim(1, 200_000).run_reference(p.as_mut(), &[st(503)], 5);
    assert_eq!(calls[0].len(), 100_016);
    let last = calls[0].last().unwrap();
    assert_eq!(
        p.envelope(last, &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    assert!(check(c.into_policy().as_ref(), &calls).is_empty());
    // Presets are exempt from the custom-policy limits.
    assert!(SnsConfig::aws_managed().validate().is_ok());
    assert!(SnsConfig::aws_managed().validate_custom_http().is_err());
}

#[test]
fn customer_managed_preset_has_50_retries() {
    let c = SnsConfig::customer_managed();
    assert_eq!(c.num_retries, 50);
    assert_eq!(
        (
            c.num_no_delay_retries,
            c.num_min_delay_retries,
            c.backoff_retries(),
            c.num_max_delay_retries
        ),
        (0, 2, 10, 38)
    );
    let nominal: Vec<u64> = (1..=13)
        .map(|r| rounded_ms(c.nominal_delay(r).unwrap()))
        .collect();
    assert_eq!(
        nominal,
        [
            10_000, 10_000, 10_000, 10_125, 10_465, 11_390, 13_903, 20_735, 39_305, 89_785,
            227_003, 600_000, 600_000
        ]
    );
    assert_eq!(c.phase(50), Some(SnsPhase::PostBackoff));
    assert_eq!(c.phase(51), None);
    // About 6.6 hours.
    assert_eq!(rounded_ms(c.total_retry_time()), 23_852_711);
    let mut p = c.into_policy();
    assert_eq!(p.max_attempts(), Some(51));
    let calls = reference_sim(1, 100).run_reference(p.as_mut(), &[st(500)], 2);
    assert_eq!(calls[0].len(), 51);
}

#[test]
fn backoff_models_at_two_points() {
    // min 10 s, max 100 s, 4 backoff retries: i = 2 and 3 (the ends are 10 s and 100 s).
    let at = |f: SnsBackoff, i| f.delay(S(10), S(100), i, 4).as_nanos() as u64;
    assert_eq!(
        (at(SnsBackoff::Linear, 2), at(SnsBackoff::Linear, 3)),
        (40_000_000_000, 70_000_000_000)
    );
    // 10 + 90 × (1/3)², 10 + 90 × (2/3)²
    assert_eq!(
        (at(SnsBackoff::Arithmetic, 2), at(SnsBackoff::Arithmetic, 3)),
        (20_000_000_000, 50_000_000_000)
    );
    // 10 × 10^(1/3), 10 × 10^(2/3)
    assert_eq!(
        (at(SnsBackoff::Geometric, 2), at(SnsBackoff::Geometric, 3)),
        (21_544_346_900, 46_415_888_336)
    );
    // 10 + 90 × (e - 1)/(e³ - 1), 10 + 90 × (e² - 1)/(e³ - 1)
    assert_eq!(
        (
            at(SnsBackoff::Exponential, 2),
            at(SnsBackoff::Exponential, 3)
        ),
        (18_102_751_585, 40_128_313_980)
    );
    for f in [
        SnsBackoff::Linear,
        SnsBackoff::Arithmetic,
        SnsBackoff::Geometric,
        SnsBackoff::Exponential,
    ] {
        assert_eq!(at(f, 1), 10_000_000_000, "{f:?}");
        assert_eq!(at(f, 4), 100_000_000_000, "{f:?}");
        // N = 1: the single delay is min.
        assert_eq!(f.delay(S(10), S(100), 1, 1), S(10), "{f:?}");
    }
}

#[test]
fn phases_in_order() {
    // 2 immediate, 1 at min, 3 backoff (linear 2 s -> 8 s), 2 at max.
    let c = SnsConfig {
        min_delay: S(2),
        max_delay: S(8),
        num_retries: 8,
        num_no_delay_retries: 2,
        num_min_delay_retries: 1,
        num_max_delay_retries: 2,
        jitter: 0.0,
        ..Default::default()
    };
    let w: Vec<u64> = windows(c, 8).into_iter().map(|(lo, _)| lo).collect();
    assert_eq!(w, [0, 0, 2000, 2000, 5000, 8000, 8000, 8000]);
}

#[test]
fn what_is_retried() {
    let p = linear_20_40(0.1).into_policy();
    let e = |r: Reply| p.envelope(&view(1, 0, &r), &CallHistory::empty());
    for s in [500, 503, 599, 429] {
        assert_eq!(window(e(st(s))), (18_000, 22_000), "{s}");
    }
    for s in [400, 403, 404, 301, 100] {
        assert_eq!(
            e(st(s)),
            Envelope::MustStop(StopReason::NotRetryable),
            "{s}"
        );
    }
    assert_eq!(e(st(204)), Envelope::MustStop(StopReason::Success));
    for r in [
        timeout(15_000),
        refused(1),
        failure(Observed::Transport(io::ErrorKind::ConnectionReset), 1),
    ] {
        assert_eq!(window(e(r)), (18_000, 22_000));
    }
}

#[test]
fn throttle_policy_spaces_attempt_starts() {
    // 3 per second: starts at least 334 ms apart. Immediate retries of 10 ms attempts wait
    // 324 ms after the end.
    let c = SnsConfig {
        num_retries: 4,
        num_no_delay_retries: 3,
        max_receives_per_second: Some(3),
        ..Default::default()
    };
    assert_eq!(c.spacing_ms(), Some(334));
    assert_eq!(windows(c.clone(), 4)[..3], [(324, 324); 3]);
    // A 20 s delay is far above the spacing.
    assert_eq!(windows(c.clone(), 4)[3], (18_000, 22_000));
    // Across calls: the reference waits before a first attempt.
    let mut p = c.into_policy();
    let calls = reference_sim(3, 10).run_reference(p.as_mut(), &[st(503), st(200)], 1);
    for pair in calls.concat().windows(2) {
        assert!(pair[1].start_ms - pair[0].start_ms >= 334, "{pair:?}");
    }
    assert_eq!(
        p.wait_before_call(calls[2][1].start_ms + 100),
        Duration::from_millis(234)
    );
}

#[test]
fn total_retry_time_limit() {
    // 100 retries linear from 20 s to 60 s: 100 × 40 s = 4000 s.
    let long = SnsConfig {
        min_delay: S(20),
        max_delay: S(60),
        num_retries: 100,
        ..Default::default()
    };
    assert_eq!(long.total_retry_time(), S(4000));
    let e = long.validate_custom_http().unwrap_err();
    assert_eq!(
        e.to_string(),
        "healthyRetryPolicy: the total retry time is 4000.000s, above SNS's limit of 3600s for HTTP/S"
    );
    let at_limit = SnsConfig {
        min_delay: S(60),
        max_delay: S(60),
        num_retries: 60,
        ..Default::default()
    };
    assert!(at_limit.validate_custom_http().is_ok());
}

#[test]
fn scenario_validation_rejects_more_than_3600_s() {
    let yaml = "version: 1\nname: x\nendpoints:\n  api:\n    script: [ { status: 200 } ]\n\
                operation: { endpoint: api }\nclient:\n  sns_delivery:\n    delivery_policy:\n      \
                healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 60, numRetries: 100 }\n";
    let errors = crate::scenario::Scenario::from_yaml_str(yaml, "x.yaml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        errors,
        "x.yaml:10:7 client.sns_delivery.delivery_policy: the delivery policy's retries add up to \
         4000.000s (the sum of the delays of its 100 retries, before jitter), above SNS's limit \
         for HTTP/S endpoints, expected a total retry time of at most 3600s"
    );
    // The presets are exempt; a policy at the limit passes.
    let ok = yaml.replace(
        "maxDelayTarget: 60, numRetries: 100",
        "maxDelayTarget: 60, numRetries: 90",
    );
    assert!(crate::scenario::Scenario::from_yaml_str(&ok, "x.yaml").is_ok());
}

// ---------------------------------------------------------------- properties

fn all_configs() -> Vec<SnsConfig> {
    let mut out = Vec::new();
    for backoff in [
        SnsBackoff::Linear,
        SnsBackoff::Arithmetic,
        SnsBackoff::Geometric,
        SnsBackoff::Exponential,
    ] {
        for jitter in [0.0, 0.1, 0.5] {
            for rate in [None, Some(2)] {
                out.push(SnsConfig {
                    min_delay: Duration::from_millis(1300),
                    max_delay: Duration::from_millis(9100),
                    num_retries: 9,
                    num_no_delay_retries: 2,
                    num_min_delay_retries: 1,
                    num_max_delay_retries: 2,
                    backoff,
                    jitter,
                    max_receives_per_second: rate,
                });
            }
        }
    }
    out.push(SnsConfig::customer_managed());
    out
}

#[test]
fn decide_stays_inside_the_envelope_and_conforms() {
    let scripts: Vec<Vec<Reply>> = vec![
        vec![st(503)],
        vec![st(429), st(500), st(200)],
        vec![timeout(15_000), refused(1), st(404)],
        vec![st(503), st(503), st(503), st(503), st(200)],
    ];
    let mut checked = 0;
    for c in all_configs() {
        let policy = c.clone().into_policy();
        for script in &scripts {
            for seed in 0..30 {
                let calls =
                    reference_sim(3, 60).run_reference(policy.clone_box().as_mut(), script, seed);
                let v = check(policy.as_ref(), &calls);
                assert!(v.is_empty(), "{c:?} seed {seed}: {v:#?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 2500);
}

// ---------------------------------------------------------------- mutation tests

/// A delivery client written from scratch: 2 immediate, 1 at 2 s, 3 exponential backoff
/// retries 2 s -> 20 s, 2 at 20 s (8 retries), ±10 % jitter; each field of `Wrong` is one
/// mistake.
#[derive(Clone, Copy, Default)]
struct Wrong {
    permanent_429: bool,
    immediate: i32,
    retries: i32,
    linear_curve: bool,
    jitter: Option<f64>,
}

fn policy_under_test() -> Box<dyn Policy> {
    SnsConfig {
        min_delay: S(2),
        max_delay: S(20),
        num_retries: 8,
        num_no_delay_retries: 2,
        num_min_delay_retries: 1,
        num_max_delay_retries: 2,
        backoff: SnsBackoff::Exponential,
        jitter: 0.1,
        max_receives_per_second: None,
    }
    .into_policy()
}

fn sns_client<'a>(w: Wrong) -> Box<Client<'a>> {
    Box::new(move |v, _previous, rng| {
        match v.outcome {
            Observed::Status(200..=299) => return None,
            Observed::Status(429) if w.permanent_429 => return None,
            Observed::Status(s) if s != 429 && s < 500 => return None,
            _ => {}
        }
        let retries = 8 + w.retries;
        let r = v.n as i32;
        if r > retries {
            return None;
        }
        let a = 2 + w.immediate;
        let (min, max) = (2000.0f64, 20_000.0f64);
        let d = if r <= a {
            0.0
        } else if r <= a + 1 {
            min
        } else if r <= a + 1 + 3 {
            let i = f64::from(r - a - 1);
            if w.linear_curve {
                min + (max - min) * (i - 1.0) / 2.0
            } else {
                min + (max - min) * (libm::exp(i - 1.0) - 1.0) / (libm::exp(2.0) - 1.0)
            }
        } else {
            max
        };
        let j = w.jitter.unwrap_or(0.1);
        let u = rng.uniform_f64() * 2.0 - 1.0;
        Some(libm::round(d * (1.0 + j * u)) as u64)
    })
}

const SEEDS: u64 = 60;

fn rejection<'a>(
    script: &[Reply],
    make: impl Fn() -> Box<Client<'a>>,
    kind: impl Fn(ViolationKind) -> bool,
) -> (f64, String) {
    let policy = policy_under_test();
    share_caught(
        SEEDS,
        |seed| {
            check(
                policy.as_ref(),
                &client_sim(1).run_client(script, seed, make().as_mut()),
            )
        },
        kind,
    )
}

fn is(kind: ViolationKind) -> impl Fn(ViolationKind) -> bool {
    move |k| k == kind
}

#[test]
fn correct_sns_client_is_accepted() {
    let policy = policy_under_test();
    for script in [
        vec![st(503)],
        vec![st(429)],
        vec![st(503), st(429), timeout(15_000), st(200)],
        vec![st(404)],
    ] {
        for seed in 0..SEEDS {
            let calls =
                client_sim(2).run_client(&script, seed, sns_client(Wrong::default()).as_mut());
            let v = check(policy.as_ref(), &calls);
            assert!(v.is_empty(), "seed {seed}: {v:#?}");
        }
    }
}

#[test]
fn permanent_429_is_caught() {
    let (rate, message) = rejection(
        &[st(429)],
        || {
            sns_client(Wrong {
                permanent_429: true,
                ..Default::default()
            })
        },
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 1: the call stopped after a retryable 429 with attempts left (policy allows 9 attempts)"
    );
}

#[test]
fn phases_off_by_one_are_caught() {
    // One immediate retry too many: retry 3 comes at once instead of after ~2 s.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                immediate: 1,
                ..Default::default()
            })
        },
        is(ViolationKind::TooEarly),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 4 started 0.000s after the end of attempt 3, a 503 (needed 1.800s to 2.200s)"
    );
    // One too few: retry 2 waits ~2 s instead of none.
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                immediate: -1,
                ..Default::default()
            })
        },
        is(ViolationKind::TooLate),
    );
    assert_eq!(rate, 1.0);
    // numRetries off by one, both ways.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                retries: 1,
                ..Default::default()
            })
        },
        is(ViolationKind::RetriedAfterStop(
            StopReason::MaxAttemptsExceeded,
        )),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 10 was made but the policy allows at most 9 attempts"
    );
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                retries: -1,
                ..Default::default()
            })
        },
        is(ViolationKind::StoppedEarly),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn wrong_curve_and_jitter_are_caught() {
    // Linear instead of exponential: the middle backoff retry is 11 s instead of 6.84 s.
    let (rate, message) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                linear_curve: true,
                ..Default::default()
            })
        },
        is(ViolationKind::TooLate),
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.contains("after the end of attempt 5, a 503 (needed 6.157s to 7.525s)"),
        "{message}"
    );
    // ±30 % instead of ±10 %: over 6 delayed retries, nearly always outside.
    let (rate, _) = rejection(
        &[st(503)],
        || {
            sns_client(Wrong {
                jitter: Some(0.3),
                ..Default::default()
            })
        },
        |k| matches!(k, ViolationKind::TooEarly | ViolationKind::TooLate),
    );
    assert!(rate >= 0.95, "caught on {rate}");
}

#[test]
fn ignored_throttle_policy_is_caught() {
    let throttled = SnsConfig {
        num_retries: 3,
        num_no_delay_retries: 3,
        max_receives_per_second: Some(1),
        ..Default::default()
    }
    .into_policy();
    for seed in 0..SEEDS {
        // Immediate retries as fast as the server answers.
        let calls = client_sim(1).run_client(
            &[st(503)],
            seed,
            &mut |v: &AttemptView, _: &[AttemptView], _: &mut Stream| (v.n <= 3).then_some(0),
        );
        let v = check(throttled.as_ref(), &calls);
        // Every immediate retry is early.
        assert_eq!(v.len(), 3, "{v:#?}");
        assert_eq!(
            v[0].message,
            "attempt 2 started 0.000s after the end of attempt 1, a 503 (needed exactly 0.990s)"
        );
    }
}

#[test]
fn reference_client_end_to_end() {
    let yaml = r#"
version: 1
name: sns linear 20/30/40
endpoints:
  api:
    script:
      - { status: 503, times: 3 }
      - { status: 200 }
operation: { endpoint: api }
client:
  sns_delivery:
    jitter: 0
    delivery_policy:
      healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 40, numRetries: 3 }
expect:
  outcome: success
  attempts: 4
  gaps: [ { within: [20s, 20s] }, { within: [30s, 30s] }, { within: [40s, 40s] } ]
  conforms_to:
    sns_delivery:
      jitter: 0
      delivery_policy:
        healthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 40, numRetries: 3 }
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "sns.yaml").unwrap();
    assert!(scenario.unsupported().is_empty());
    let report = scenario.run_builtin();
    assert!(
        report.passed(),
        "{}\n{}",
        report.summary(),
        report.snapshot_text()
    );
}
