//! The AWS retry modes against literal numbers from docs/retry-behaviours.md#2-aws-sdk-retry-modes, the reference
//! decision inside its envelope, and wrong clients (written here from scratch, with literal
//! constants and no call into the policy code) rejected by [`Conformance`].

use std::time::Duration;

use super::{AwsConfig, AwsJitter, AwsMode, AwsSdk};
use crate::policy::tests::support::{
    Client, Reply, Sim, reset, retry_window, share_caught, st, timeout, view, with,
};
use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Conformance, Decision, Envelope, Observed,
    Policy, StopReason, Violation, ViolationKind,
};
use crate::rng::Stream;

// ---------------------------------------------------------------- timelines

/// A status whose response carries the service error `code`.
fn coded(status: u16, code: &'static str) -> Reply {
    Reply {
        error_code: Some(code),
        ..st(status)
    }
}

/// The same reply with an `x-amz-retry-after` of `ms`.
fn with_ra(reply: Reply, ms: &'static str) -> Reply {
    with(reply, "x-amz-retry-after", ms)
}

/// `calls` calls of at most 40 attempts, 1 s apart, a client under test drawing on its own
/// stream.
fn client_sim(calls: u32) -> Sim {
    Sim::calls(calls).clients_drawing_on("test/aws/client")
}

/// `calls` calls of at most 40 attempts, numbered, the reference waiting the policy's
/// `wait_before_call` before each and its `wait_after_stop` (then 1 s) after each.
fn reference_sim(calls: u32) -> Sim {
    Sim::calls(calls)
        .numbered()
        .waiting_before_each()
        .waiting_after_stop()
}

/// Every violation over the calls, checked in order by one [`Conformance`].
fn check(policy: &dyn Policy, calls: &[Vec<AttemptView>]) -> Vec<Violation> {
    let mut c = Conformance::new(policy.clone_box());
    calls.iter().flat_map(|call| c.check_call(call)).collect()
}

fn config(mode: AwsMode) -> AwsConfig {
    AwsConfig {
        mode,
        ..Default::default()
    }
}

fn no_jitter(mode: AwsMode) -> AwsConfig {
    AwsConfig {
        mode,
        jitter: AwsJitter::None,
        ..Default::default()
    }
}

fn window(e: Envelope) -> (u64, u64) {
    let (min_ms, max_ms, from) = retry_window(e);
    assert_eq!(
        from,
        Anchor::End,
        "AWS delays run from the end of an attempt"
    );
    (min_ms, max_ms)
}

/// The windows after attempts 1..=count of one call, each answered `reply` (state replayed).
fn windows(config: AwsConfig, reply: &Reply, count: u32) -> Vec<(u64, u64)> {
    let mut policy = config.into_policy();
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for n in 1..=count {
        let v = view(n, start, reply);
        let h = CallHistory::new(&call, &client);
        let (lo, hi) = window(policy.envelope(&v, &h));
        out.push((lo, hi));
        start = v.end_ms + hi;
        policy.record(&v, &h, crate::policy::Next::Retried { start_ms: start });
        call.push(v);
    }
    out
}

/// The `describe_state` after each decided attempt of one call.
fn states(policy: &mut dyn Policy, script: &[Reply]) -> Vec<String> {
    let mut rng = Stream::new(1, "x");
    let client = ClientHistory::default();
    let mut call = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, r) in script.iter().enumerate() {
        let v = view(i as u32 + 1, start, r);
        let d = policy.decide(&v, &CallHistory::new(&call, &client), &mut rng);
        out.push(policy.describe_state().unwrap_or_default());
        start = v.end_ms + 100;
        call.push(v);
        if matches!(d, Decision::Stop(_)) {
            break;
        }
    }
    out
}

// ---------------------------------------------------------------- published numbers

#[test]
fn standard_2_0_backoff_is_1_2_4_8_seconds_capped_at_20() {
    let c = AwsConfig {
        max_attempts: Some(8),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(
        windows(c, &st(503), 7),
        [
            (1000, 1000),
            (2000, 2000),
            (4000, 4000),
            (8000, 8000),
            (16_000, 16_000),
            (20_000, 20_000),
            (20_000, 20_000)
        ]
    );
    // b uniform in [0, 1): the cap applies before the jitter.
    let c = AwsConfig {
        max_attempts: Some(7),
        ..config(AwsMode::Standard)
    };
    assert_eq!(
        windows(c, &st(503), 6),
        [
            (0, 1000),
            (0, 2000),
            (0, 4000),
            (0, 8000),
            (0, 16_000),
            (0, 20_000)
        ]
    );
    // A throttle or a timeout backs off the same in 2.0.
    let c = AwsConfig {
        max_attempts: Some(4),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(
        windows(c.clone(), &coded(400, "ThrottlingException"), 3),
        [(1000, 1000), (2000, 2000), (4000, 4000)]
    );
    assert_eq!(windows(c, &timeout(2000), 2), [(1000, 1000), (2000, 2000)]);
}

#[test]
fn standard_2_1_bases() {
    let c = AwsConfig {
        max_attempts: Some(6),
        ..no_jitter(AwsMode::Standard21)
    };
    assert_eq!(
        windows(c.clone(), &st(503), 5),
        [(50, 50), (100, 100), (200, 200), (400, 400), (800, 800)]
    );
    assert_eq!(
        windows(c.clone(), &coded(400, "Throttling"), 5),
        [
            (1000, 1000),
            (2000, 2000),
            (4000, 4000),
            (8000, 8000),
            (16_000, 16_000)
        ]
    );
    let dynamo = AwsConfig {
        service: Some("DynamoDB".into()),
        ..no_jitter(AwsMode::Standard21)
    };
    assert_eq!(dynamo.effective_max_attempts(), 4);
    assert_eq!(
        windows(dynamo.clone(), &st(500), 3),
        [(25, 25), (50, 50), (100, 100)]
    );
    assert_eq!(
        windows(
            dynamo.clone(),
            &coded(400, "ProvisionedThroughputExceededException"),
            3
        ),
        [(1000, 1000), (2000, 2000), (4000, 4000)]
    );
    // The fourth attempt is the last.
    let p = dynamo.into_policy();
    let v = view(4, 0, &st(500));
    assert_eq!(
        p.envelope(&v, &CallHistory::empty()),
        Envelope::MustStop(StopReason::MaxAttemptsExceeded)
    );
    // DynamoDB's rule is 2.1's only.
    let v2_0 = AwsConfig {
        service: Some("dynamodb".into()),
        ..no_jitter(AwsMode::Standard)
    };
    assert_eq!(v2_0.effective_max_attempts(), 3);
    assert_eq!(windows(v2_0, &st(500), 1), [(1000, 1000)]);
}

#[test]
fn quota_costs_and_refunds_2_0() {
    let mut p = config(AwsMode::Standard).into_policy();
    // A 503 costs 5, a timeout 10; the call fails after its third attempt.
    assert_eq!(
        states(p.as_mut(), &[st(503), timeout(2000), st(503)]),
        ["quota 495/500", "quota 485/500", "quota 485/500"]
    );
    // A first-attempt success adds 1.
    assert_eq!(states(p.as_mut(), &[st(200)]), ["quota 486/500"]);
    // A success refunds the last retry's cost: 10 after a timeout, not the 15 paid.
    assert_eq!(
        states(p.as_mut(), &[st(503), timeout(2000), st(200)]),
        ["quota 481/500", "quota 471/500", "quota 481/500"]
    );
    // An I/O error and a throttle cost 5.
    assert_eq!(
        states(p.as_mut(), &[reset(), coded(400, "SlowDown"), st(200)]),
        ["quota 476/500", "quota 471/500", "quota 476/500"]
    );
    // A bare 429 and a 404 are not retried and change nothing.
    assert_eq!(states(p.as_mut(), &[st(429)]), ["quota 476/500"]);
    assert_eq!(states(p.as_mut(), &[st(404)]), ["quota 476/500"]);
    // Never above the maximum.
    let mut full = config(AwsMode::Standard).into_policy();
    assert_eq!(states(full.as_mut(), &[st(200)]), ["quota 500/500"]);
}

#[test]
fn quota_costs_2_1() {
    let mut p = AwsConfig {
        max_attempts: Some(4),
        ..config(AwsMode::Standard21)
    }
    .into_policy();
    assert_eq!(
        states(
            p.as_mut(),
            &[
                st(503),
                timeout(2000),
                coded(400, "ThrottlingException"),
                st(200)
            ]
        ),
        [
            "quota 486/500",
            "quota 472/500",
            "quota 467/500",
            "quota 472/500"
        ]
    );
    assert_eq!(states(p.as_mut(), &[st(200)]), ["quota 473/500"]);
}

/// botocore 1.44.18's default, as its source reads (botocore/retries/standard.py): a bare
/// 429 is a throttle (base 1 s, cost 5) in `aws_standard` and `aws_standard_2_1` alike, a
/// bare 503 a transient error (base 50 ms, cost 14), and `dynamodb-streams` gets `DynamoDB`'s
/// 25 ms and 4 attempts.
#[test]
fn botocore_1_44_is_2_1_with_a_bare_429_as_a_throttle() {
    for mode in [AwsMode::Standard, AwsMode::Standard21] {
        let botocore = AwsConfig {
            sdk: AwsSdk::Botocore1_44,
            ..no_jitter(mode)
        };
        assert!(botocore.validate().is_ok());
        assert_eq!(
            windows(botocore.clone(), &st(429), 2),
            [(1000, 1000), (2000, 2000)],
            "{mode:?}"
        );
        assert_eq!(
            windows(botocore.clone(), &st(503), 2),
            [(50, 50), (100, 100)],
            "{mode:?}"
        );
        let mut p = botocore.clone().into_policy();
        assert_eq!(
            states(p.as_mut(), &[st(429), st(503), st(200)]),
            ["quota 495/500", "quota 481/500", "quota 495/500"]
        );
        let streams = AwsConfig {
            service: Some("dynamodb-streams".into()),
            ..botocore
        };
        assert_eq!(streams.effective_max_attempts(), 4);
        assert_eq!(windows(streams, &st(503), 1), [(25, 25)]);
    }
    // The specification's 2.1, and smithy-rs, retry no bare 429.
    for sdk in [AwsSdk::Botocore, AwsSdk::SmithyRs] {
        let spec = AwsConfig {
            sdk,
            ..no_jitter(AwsMode::Standard21)
        };
        let mut p = spec.into_policy();
        assert_eq!(states(p.as_mut(), &[st(429)]), ["quota 500/500"]);
        let d = p.decide(
            &view(1, 0, &st(429)),
            &CallHistory::new(&[], &ClientHistory::default()),
            &mut Stream::new(1, "x"),
        );
        assert_eq!(d, Decision::Stop(StopReason::NotRetryable), "{sdk:?}");
    }
    // The limiter is 2.0's: botocore 1.44.18's adaptive mode is refused, saying why.
    let adaptive = AwsConfig {
        sdk: AwsSdk::Botocore1_44,
        ..config(AwsMode::Adaptive)
    };
    let error = adaptive.validate().unwrap_err();
    assert_eq!(error.field, "sdk");
    assert!(error.message.contains("2.1"), "{}", error.message);
}

#[test]
fn smithy_rs_charges_10_for_a_bare_500() {
    let smithy = AwsConfig {
        sdk: AwsSdk::SmithyRs,
        ..config(AwsMode::Standard)
    };
    let mut p = smithy.clone().into_policy();
    assert_eq!(
        states(p.as_mut(), &[st(500), st(200)]),
        ["quota 490/500", "quota 500/500"]
    );
    let mut p = smithy.into_policy();
    assert_eq!(
        states(p.as_mut(), &[reset(), coded(503, "SlowDown"), st(503)]),
        ["quota 490/500", "quota 485/500", "quota 485/500"]
    );
    let mut botocore = config(AwsMode::Standard).into_policy();
    assert_eq!(states(botocore.as_mut(), &[st(500)]), ["quota 495/500"]);
}

#[test]
fn an_empty_quota_stops_the_call() {
    let mut p = AwsConfig {
        initial_tokens: 12,
        ..config(AwsMode::Standard)
    }
    .into_policy();
    // 12 -> 7 -> 2, then a 503 cannot be paid for.
    let mut rng = Stream::new(3, "x");
    let calls = reference_sim(2).run_reference(p.as_mut(), &[st(503)], 3);
    assert_eq!(calls[0].len(), 3);
    assert_eq!(calls[1].len(), 1);
    assert_eq!(p.describe_state().as_deref(), Some("quota 2/12"));
    let v = view(1, 0, &st(503));
    assert_eq!(
        p.decide(&v, &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    // The order of the checks: not retryable, then attempts, then the quota.
    assert_eq!(
        p.decide(&view(1, 0, &st(400)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::NotRetryable)
    );
    assert_eq!(
        p.decide(&view(3, 0, &st(503)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::MaxAttemptsExceeded)
    );
}

#[test]
fn a_quota_of_zero_tokens_never_pays_for_a_retry() {
    // `initial_tokens: 0` is an empty bucket whose size is 0: every retryable failure
    // stops with retry_quota_exceeded, and successes cannot refill it (refunds stop at the
    // bucket's size), in every mode.
    for mode in [AwsMode::Standard, AwsMode::Standard21, AwsMode::Adaptive] {
        let empty = AwsConfig {
            initial_tokens: 0,
            ..config(mode)
        };
        assert_eq!(empty.validate(), Ok(()), "{mode:?}");
        let mut p = empty.into_policy();
        let calls = reference_sim(3).run_reference(p.as_mut(), &[st(200)], 1);
        assert!(calls.iter().all(|c| c.len() == 1), "{mode:?}");
        assert!(
            p.describe_state()
                .is_some_and(|s| s.starts_with("quota 0/0")),
            "{mode:?}: {:?}",
            p.describe_state()
        );
        let calls = reference_sim(2).run_reference(p.as_mut(), &[st(503), st(200)], 1);
        assert!(calls.iter().all(|c| c.len() == 1), "{mode:?}");
        let mut rng = Stream::new(1, "x");
        for reply in [st(503), timeout(2000), coded(400, "ThrottlingException")] {
            assert_eq!(
                p.decide(&view(1, 0, &reply), &CallHistory::empty(), &mut rng),
                Decision::Stop(StopReason::RetryQuotaExceeded),
                "{mode:?} {reply:?}"
            );
            assert_eq!(
                p.envelope(&view(1, 0, &reply), &CallHistory::empty()),
                Envelope::MustStop(StopReason::RetryQuotaExceeded),
                "{mode:?} {reply:?}"
            );
        }
    }
    // 2.1 with long polling still sleeps the backoff before failing, as with any empty quota.
    let mut p = AwsConfig {
        initial_tokens: 0,
        long_polling: true,
        ..no_jitter(AwsMode::Standard21)
    }
    .into_policy();
    let mut rng = Stream::new(1, "x");
    assert_eq!(
        p.decide(&view(1, 0, &st(503)), &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    assert_eq!(p.wait_after_stop(), Duration::from_millis(50));
}

#[test]
fn x_amz_retry_after() {
    // 2.1: clamped to [t_i, t_i + 5 s]; with b = 1, t_1 = 50 ms.
    let c = no_jitter(AwsMode::Standard21);
    for (ra, expected) in [
        ("3000", (3000, 3000)),
        ("7000", (5050, 5050)),
        ("10", (50, 50)),
        ("-5", (50, 50)),
        ("1.5", (50, 50)),
        ("soon", (50, 50)),
    ] {
        assert_eq!(
            windows(c.clone(), &with_ra(st(503), ra), 1),
            [expected],
            "{ra}"
        );
    }
    // With b random, t_1 in [0, 50 ms]: clamp(RA, t, t + 5 s) over that range.
    let c = config(AwsMode::Standard21);
    assert_eq!(
        windows(c.clone(), &with_ra(st(503), "3000"), 1),
        [(3000, 3000)]
    );
    assert_eq!(
        windows(c.clone(), &with_ra(st(503), "7000"), 1),
        [(5000, 5050)]
    );
    assert_eq!(windows(c.clone(), &with_ra(st(503), "20"), 1), [(20, 50)]);
    assert_eq!(windows(c, &with_ra(st(503), "-1"), 1), [(0, 50)]);
    // 2.0: botocore ignores it; smithy-rs takes it, capped at MAX_BACKOFF.
    let boto = no_jitter(AwsMode::Standard);
    assert_eq!(windows(boto, &with_ra(st(503), "3000"), 1), [(1000, 1000)]);
    let smithy = AwsConfig {
        sdk: AwsSdk::SmithyRs,
        ..config(AwsMode::Standard)
    };
    assert_eq!(
        windows(smithy.clone(), &with_ra(st(503), "3000"), 1),
        [(3000, 3000)]
    );
    assert_eq!(
        windows(smithy.clone(), &with_ra(st(503), "30000"), 1),
        [(20_000, 20_000)]
    );
    assert_eq!(windows(smithy, &with_ra(st(503), "x"), 1), [(0, 1000)]);
}

#[test]
fn long_polling_sleeps_before_failing() {
    let mut p = AwsConfig {
        initial_tokens: 3,
        long_polling: true,
        ..no_jitter(AwsMode::Standard21)
    }
    .into_policy();
    let mut rng = Stream::new(1, "x");
    let throttled = view(1, 0, &coded(400, "ThrottlingException"));
    assert_eq!(
        p.decide(&throttled, &CallHistory::empty(), &mut rng),
        Decision::Stop(StopReason::RetryQuotaExceeded)
    );
    assert_eq!(p.wait_after_stop(), Duration::from_secs(1));
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 3/3, long-poll wait 1.000s")
    );
    p.decide(&view(1, 0, &st(503)), &CallHistory::empty(), &mut rng);
    assert_eq!(p.wait_after_stop(), Duration::from_millis(50));
    // Without long polling, or in 2.0, the call fails at once.
    let mut q = AwsConfig {
        initial_tokens: 3,
        long_polling: true,
        ..no_jitter(AwsMode::Standard)
    }
    .into_policy();
    q.decide(&throttled, &CallHistory::empty(), &mut rng);
    assert_eq!(q.wait_after_stop(), Duration::ZERO);
}

#[test]
fn adaptive_limiter_delays_after_a_throttle() {
    // A throttle ending at 10 ms enables the limiter: measured rate 0 (its first half-second
    // bucket has not closed), so the rate is 0 -> fill 0.5 token/s, capacity 1; the bucket
    // filled 0.01 token at 1/s since 0, so the next token is (1 - 0.01) / 0.5 = 1.98 s away.
    let mut p = AwsConfig {
        max_attempts: Some(5),
        ..no_jitter(AwsMode::Adaptive)
    }
    .into_policy();
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 500/500, limiter off")
    );
    let throttle = coded(400, "ThrottlingException");
    let v = view(1, 0, &throttle);
    assert_eq!(window(p.envelope(&v, &CallHistory::empty())), (1980, 1980));
    let mut rng = Stream::new(1, "x");
    assert_eq!(
        p.decide(&v, &CallHistory::empty(), &mut rng),
        Decision::Retry {
            delay: Duration::from_millis(1980),
            measured_from: Anchor::End
        }
    );
    assert_eq!(
        p.describe_state().as_deref(),
        Some("quota 495/500, send rate 0.500/s (measured 0.000/s)")
    );
    // Not enabled by a plain 503: the backoff alone.
    let q = no_jitter(AwsMode::Adaptive).into_policy();
    assert_eq!(
        window(q.envelope(&view(1, 0, &st(503)), &CallHistory::empty())),
        (1000, 1000)
    );
    assert_eq!(q.wait_before_call(5000), Duration::ZERO);
}

// ---------------------------------------------------------------- properties

fn all_configs() -> Vec<AwsConfig> {
    let mut out = Vec::new();
    for mode in [AwsMode::Standard, AwsMode::Standard21, AwsMode::Adaptive] {
        for jitter in [AwsJitter::Random, AwsJitter::None] {
            for sdk in [AwsSdk::Botocore, AwsSdk::SmithyRs, AwsSdk::Botocore1_44] {
                // Refused by validation: the limiter over 2.1 is not modelled.
                if mode == AwsMode::Adaptive && sdk == AwsSdk::Botocore1_44 {
                    continue;
                }
                out.push(AwsConfig {
                    mode,
                    jitter,
                    sdk,
                    max_attempts: Some(5),
                    initial_tokens: 60,
                    max_backoff: Duration::from_millis(3500),
                    long_polling: mode == AwsMode::Standard21,
                    service: (sdk == AwsSdk::SmithyRs).then(|| "dynamodb".to_string()),
                });
            }
        }
    }
    out
}

fn scripts() -> Vec<Vec<Reply>> {
    let fast_throttle = Reply {
        latency_ms: 1,
        ..coded(400, "ThrottlingException")
    };
    vec![
        vec![st(503)],
        vec![st(500), st(502), st(200)],
        vec![timeout(2000), reset(), st(504), st(200)],
        vec![
            with_ra(st(503), "2500"),
            with_ra(coded(400, "Throttling"), "9000"),
            st(200),
        ],
        vec![fast_throttle.clone(), fast_throttle.clone(), st(200)],
        vec![fast_throttle, st(200)],
        vec![st(429)],
        vec![coded(400, "RequestTimeoutException"), st(404)],
        vec![st(200)],
    ]
}

#[test]
fn decide_stays_inside_the_envelope_and_conforms() {
    let mut checked = 0;
    for c in all_configs() {
        let policy = c.clone().into_policy();
        for script in scripts() {
            for seed in 0..25 {
                let mut reference = policy.clone_box();
                // 14 calls: the 60-token quota runs out on the failing scripts.
                let calls = reference_sim(14).run_reference(reference.as_mut(), &script, seed);
                let violations = check(policy.as_ref(), &calls);
                assert!(violations.is_empty(), "{c:?} seed {seed}: {violations:#?}");
                // Replaying with `record` reaches the state `decide` reached.
                let mut replay = Conformance::new(policy.clone_box());
                for call in &calls {
                    replay.check_call(call);
                }
                assert_eq!(
                    replay
                        .policy()
                        .describe_state()
                        .map(|s| s.replace(", long-poll", "")),
                    reference.describe_state().map(|s| s
                        .split(", long-poll")
                        .next()
                        .unwrap()
                        .to_string()),
                    "{c:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 2000);
}

#[test]
fn the_quota_runs_out_across_calls() {
    // 500 tokens, 10 per failed call (two 503 retries): the 51st call stops after its
    // first attempt, with retry_quota_exceeded.
    let mut p = config(AwsMode::Standard).into_policy();
    let calls = reference_sim(52).run_reference(p.as_mut(), &[st(503)], 9);
    assert!(calls[..50].iter().all(|c| c.len() == 3));
    assert_eq!(calls[50].len(), 1);
    assert_eq!(p.describe_state().as_deref(), Some("quota 0/500"));
}

// ---------------------------------------------------------------- mutation tests

/// An AWS client written from scratch with literal constants. Each flag is one mistake.
#[derive(Clone, Copy, Default)]
struct Mistakes {
    cap_after_jitter: bool,
    no_refund: bool,
    refund_all: bool,
    ignore_quota: bool,
    timeout_costs_5: bool,
    base_1s_in_2_1: bool,
    retry_bare_429: bool,
}

/// botocore 2.0 (`v2_1` false) or 2.1, max backoff `cap_ms`; `b` random unless `fixed_b`.
fn aws_client<'a>(
    v2_1: bool,
    max_attempts: u32,
    cap_ms: u64,
    fixed_b: bool,
    m: Mistakes,
) -> Box<Client<'a>> {
    let mut quota: i64 = 500;
    let mut paid: Vec<i64> = Vec::new();
    Box::new(
        move |v: &AttemptView, _prev: &[AttemptView], rng: &mut Stream| {
            if v.n == 1 {
                paid.clear();
            }
            let throttle = matches!(
                v.error_code.as_deref(),
                Some("ThrottlingException" | "Throttling" | "SlowDown")
            );
            let retryable = match v.outcome {
                Observed::Status(200..=299) => {
                    let refund = if m.no_refund {
                        0
                    } else if m.refund_all {
                        paid.iter().sum()
                    } else {
                        paid.last().copied().unwrap_or(1)
                    };
                    quota = (quota + refund).min(500);
                    return None;
                }
                Observed::Status(500 | 502 | 503 | 504) => true,
                Observed::Status(429) => throttle || m.retry_bare_429,
                Observed::Status(_) => throttle,
                _ => true,
            };
            if !retryable || v.n >= max_attempts {
                return None;
            }
            let timed_out = v.outcome == Observed::Timeout;
            let cost = match (v2_1, throttle, timed_out) {
                (true, true, _) => 5,
                (true, false, _) => 14,
                (false, _, true) if !m.timeout_costs_5 => 10,
                (false, _, _) => 5,
            };
            if cost > quota && !m.ignore_quota {
                return None;
            }
            quota -= cost;
            paid.push(cost);
            let base: u64 = if !v2_1 || throttle || m.base_1s_in_2_1 {
                1000
            } else {
                50
            };
            let raw = base << (v.n - 1);
            let b = if fixed_b { 1.0 } else { rng.uniform_f64() };
            let delay = if m.cap_after_jitter {
                ((b * raw as f64) as u64).min(cap_ms)
            } else {
                (b * raw.min(cap_ms) as f64) as u64
            };
            Some(delay)
        },
    )
}

const SEEDS: u64 = 60;

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
        assert!(v.is_empty(), "seed {seed}: {v:#?}");
    }
}

#[test]
fn correct_aws_clients_are_accepted() {
    let p = config(AwsMode::Standard).into_policy();
    for script in [
        vec![st(503)],
        vec![st(503), st(503), st(200)],
        vec![timeout(2000), st(200)],
        vec![st(503), timeout(2000), st(503)],
        vec![st(429)],
    ] {
        accepted(p.as_ref(), &script, 70, || {
            aws_client(false, 3, 20_000, false, Mistakes::default())
        });
    }
    let p21 = config(AwsMode::Standard21).into_policy();
    for script in [
        vec![st(503)],
        vec![coded(400, "ThrottlingException"), st(503), st(200)],
    ] {
        accepted(p21.as_ref(), &script, 50, || {
            aws_client(true, 3, 20_000, false, Mistakes::default())
        });
    }
}

#[test]
fn cap_applied_after_jitter_is_caught() {
    let p = AwsConfig {
        max_attempts: Some(10),
        max_backoff: Duration::from_secs(2),
        ..config(AwsMode::Standard)
    }
    .into_policy();
    let wrong = Mistakes {
        cap_after_jitter: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(503)],
        1,
        || aws_client(false, 10, 2000, false, wrong),
        ViolationKind::PinnedAtBound,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    assert!(message.contains("exactly at the maximum"), "{message}");
    // The right order passes on the same policy.
    accepted(p.as_ref(), &[st(503)], 1, || {
        aws_client(false, 10, 2000, false, Mistakes::default())
    });
}

#[test]
fn missing_refund_runs_out_too_early() {
    // [503, 503, 200]: 10 paid, 5 refunded, so 100 calls drain the quota; without refunds
    // 50 do, and the 51st call stops where the policy still has quota.
    let p = config(AwsMode::Standard).into_policy();
    let script = [st(503), st(503), st(200)];
    let (rate, message) = rejection(
        p.as_ref(),
        &script,
        60,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    no_refund: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::StoppedEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(
        message.starts_with("attempt 1: the call stopped after a retryable 503"),
        "{message}"
    );
    accepted(p.as_ref(), &script, 110, || {
        aws_client(false, 3, 20_000, false, Mistakes::default())
    });
}

#[test]
fn refunding_every_retry_runs_out_too_late() {
    // Refunding the whole call's 10 instead of the last retry's 5 never drains the quota;
    // the policy's drops 5 a call, so the 100th call pays its first retry with the last 5
    // tokens and must stop after its second attempt.
    let p = config(AwsMode::Standard).into_policy();
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(503), st(503), st(200)],
        105,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    refund_all: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 3 was made after a 503 but the retry quota could not pay for it (quota 0/500)"
    );
}

#[test]
fn ignored_quota_is_caught() {
    let p = config(AwsMode::Standard).into_policy();
    let ignore = Mistakes {
        ignore_quota: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &[st(503)],
        55,
        || aws_client(false, 3, 20_000, false, ignore),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    // A timeout charged 5 instead of 10 drains the quota half as fast.
    let cheap = Mistakes {
        timeout_costs_5: true,
        ..Default::default()
    };
    let (rate, _) = rejection(
        p.as_ref(),
        &[timeout(2000)],
        30,
        || aws_client(false, 3, 20_000, false, cheap),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
    // A botocore client judged as smithy-rs (10 for a bare 500) runs out too late as well.
    let smithy = AwsConfig {
        sdk: AwsSdk::SmithyRs,
        ..config(AwsMode::Standard)
    }
    .into_policy();
    let (rate, _) = rejection(
        smithy.as_ref(),
        &[st(500)],
        30,
        || aws_client(false, 3, 20_000, false, Mistakes::default()),
        ViolationKind::RetriedAfterStop(StopReason::RetryQuotaExceeded),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn wrong_bases_and_classes_are_caught() {
    // 2.1 with 2.0's 1 s base for a 503.
    let exact = no_jitter(AwsMode::Standard21).into_policy();
    let slow = Mistakes {
        base_1s_in_2_1: true,
        ..Default::default()
    };
    let (rate, message) = rejection(
        exact.as_ref(),
        &[st(503)],
        1,
        || aws_client(true, 3, 20_000, true, slow),
        ViolationKind::TooLate,
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 2 started 1.000s after the end of attempt 1, a 503 (needed exactly 0.050s)"
    );
    let random = config(AwsMode::Standard21).into_policy();
    let (rate, _) = rejection(
        random.as_ref(),
        &[st(503)],
        1,
        || aws_client(true, 3, 20_000, false, slow),
        ViolationKind::TooLate,
    );
    assert!(rate >= 0.95, "caught on {rate}");
    // A bare 429 is not retryable.
    let p = config(AwsMode::Standard).into_policy();
    let (rate, message) = rejection(
        p.as_ref(),
        &[st(429)],
        1,
        || {
            aws_client(
                false,
                3,
                20_000,
                false,
                Mistakes {
                    retry_bare_429: true,
                    ..Default::default()
                },
            )
        },
        ViolationKind::RetriedAfterStop(StopReason::NotRetryable),
    );
    assert_eq!(rate, 1.0);
    assert_eq!(
        message,
        "attempt 2 was made after a 429, which the policy does not retry"
    );
    // Off by one attempt.
    let (rate, _) = rejection(
        p.as_ref(),
        &[st(503)],
        1,
        || aws_client(false, 4, 20_000, false, Mistakes::default()),
        ViolationKind::RetriedAfterStop(StopReason::MaxAttemptsExceeded),
    );
    assert_eq!(rate, 1.0);
}

#[test]
fn adaptive_client_ignoring_the_limiter_is_caught() {
    // Throttles answered in 1 ms: the limiter holds the next send ~2 s, the backoff alone
    // is at most 1 s. `aws_client` has no limiter at all: it is a standard-mode client.
    let p = config(AwsMode::Adaptive).into_policy();
    let throttle = Reply {
        latency_ms: 1,
        ..coded(400, "ThrottlingException")
    };
    let (rate, message) = rejection(
        p.as_ref(),
        &[throttle],
        1,
        || aws_client(false, 3, 20_000, false, Mistakes::default()),
        ViolationKind::TooEarly,
    );
    assert_eq!(rate, 1.0);
    assert!(message.contains("(needed exactly 1.998s)"), "{message}");
}

// ---------------------------------------------------------------- end to end

/// The reference client over the sim backend: the error code comes from the body, the
/// decision and the quota reach the trace.
#[test]
fn reference_client_reads_error_codes_end_to_end() {
    let yaml = r#"
version: 1
name: aws throttle then success
endpoints:
  api:
    script:
      - { status: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}' }
      - { status: 503, headers: { x-amz-retry-after: "1500" } }
      - { status: 200 }
operation: { endpoint: api }
client:
  aws_standard_2_1: { jitter: none }
expect:
  outcome: success
  attempts: 3
  gaps: [ { within: [1s, 1s] }, { within: [1.5s, 1.5s] } ]
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "aws.yaml").unwrap();
    assert!(scenario.unsupported().is_empty());
    let report = scenario.run_builtin();
    let text = report.snapshot_text();
    assert!(report.passed(), "{}\n{text}", report.summary());
    // 2.1: the throttle costs 5, the 503 14; the success refunds 14.
    assert!(text.contains("[quota 495/500]"), "{text}");
    assert!(text.contains("[quota 481/500]"), "{text}");
    assert!(text.contains("=> stop: success [quota 495/500]"), "{text}");
    // `conforms_to` judges from the trace, which keeps neither error codes nor
    // `x-amz-retry-after`: statuses only, as here (503s under smithy-rs cost 10 each).
    let yaml = r#"
version: 1
name: aws 503s
endpoints:
  api:
    script:
      - { status: 503, times: 2 }
      - { status: 200 }
operation: { endpoint: api, calls: 2 }
client:
  aws_standard: { sdk: smithy_rs }
expect:
  outcomes: [success, success]
  conforms_to: { aws_standard: { sdk: smithy_rs } }
"#;
    let scenario = crate::scenario::Scenario::from_yaml_str(yaml, "aws.yaml").unwrap();
    let report = scenario.run_builtin();
    let text = report.snapshot_text();
    assert!(report.passed(), "{}\n{text}", report.summary());
    assert!(text.contains("[quota 480/500]"), "{text}");
    // Call 0 refunds its last retry's 10; call 1 succeeds at once and adds 1.
    assert!(text.contains("=> stop: success [quota 490/500]"), "{text}");
    assert!(text.contains("=> stop: success [quota 491/500]"), "{text}");
}
