//! `jitter: present` on timelines written here: what it finds, and that a jittered client is never flagged.

use super::*;
use crate::policy::{AttemptView, CallHistory, ClientHistory, Decision, Observed};
use crate::report::Judgement;
use crate::rng::Stream;
use crate::scenario::ClientSpec;

/// An attempt answered at once, `start_ms` into its call.
fn instant(start_ms: u64) -> Step {
    Step {
        outcome: "503".to_owned(),
        retry_after: None,
        response: None,
        start_ms,
        head_ms: Some(start_ms),
        end_ms: Some(start_ms),
        resent: false,
    }
}

/// A call whose attempts are answered at once, after these delays.
fn call(name: &str, delays: &[u64]) -> Timeline {
    let mut t = 0;
    let mut entries = vec![Entry {
        step: instant(0),
        attempt: 1,
        before: Before::Nothing,
    }];
    for (i, d) in delays.iter().enumerate() {
        t += d;
        entries.push(Entry {
            step: instant(t),
            attempt: i as u32 + 2,
            before: Before::Delay(*d),
        });
    }
    Timeline {
        call: name.to_owned(),
        entries,
    }
}

/// `calls` calls of the reference client of `spec` against 503s answered at once: the
/// timelines the check reads, drawn from the policy's own jitter as the reference client
/// draws it (one stream for the client's calls).
fn reference_run(spec: &ClientSpec, seed: u64, calls: u32) -> Vec<Timeline> {
    let mut policy = spec.policy().expect("a built policy");
    let mut rng = Stream::new(seed, "client/0/jitter");
    (0..calls)
        .map(|call_index| {
            let client = ClientHistory {
                client_index: 0,
                call_index,
                attempts_before: 0,
            };
            let mut views: Vec<AttemptView> = Vec::new();
            let mut delays = Vec::new();
            let mut t = 0;
            loop {
                let n = views.len() as u32 + 1;
                let view = AttemptView::new(n, Observed::Status(503), t, Some(t), t);
                let decision = policy.decide(&view, &CallHistory::new(&views, &client), &mut rng);
                views.push(view);
                match decision {
                    Decision::Retry { delay, .. } => {
                        let d = delay.as_millis() as u64;
                        delays.push(d);
                        t += d;
                    }
                    Decision::Stop(_) => break,
                }
            }
            call(&format!("call {call_index}"), &delays)
        })
        .collect()
}

fn spec(yaml: &str) -> ClientSpec {
    serde_saphyr::from_str(yaml).expect("a policy")
}

/// The library's jitter kinds: every generic jitter, AWS's random factor and SNS's
/// ±10 %, on windows from 10ms wide to seconds, decorrelated on a cap it reaches.
const JITTERED: &[&str] = &[
    "{ exponential: { initial: 100ms, jitter: full, max_attempts: 5 } }",
    "{ exponential: { initial: 10ms, jitter: full, max_attempts: 6 } }",
    "{ exponential: { initial: 100ms, jitter: equal, max_attempts: 5 } }",
    "{ exponential: { initial: 100ms, max_delay: 400ms, jitter: decorrelated, max_attempts: 8 } }",
    "{ linear: { initial: 100ms, step: 100ms, jitter: full, max_attempts: 5 } }",
    "{ fibonacci: { initial: 20ms, jitter: equal, max_attempts: 6 } }",
    "{ aws_standard: { max_attempts: 5 } }",
    "{ aws_standard_2_1: { max_attempts: 5 } }",
    "{ sns_delivery: { delivery_policy: { healthyRetryPolicy: { minDelayTarget: 1, maxDelayTarget: 8, numRetries: 4, backoffFunction: exponential } } } }",
];

/// The false-alarm rate of the library's own jitters, 2,000 runs of 6 calls each per
/// kind: the bound is 1e-6 per run, so over these 18,000 runs the expected number of
/// false alarms is below 0.02, and any one means the bound does not hold. The check must
/// also have the evidence to pass on nearly every run, or the sweep proves nothing.
#[test]
fn the_library_jitters_are_not_flagged() {
    for yaml in JITTERED {
        let spec = spec(yaml);
        let (mut passed, mut failed) = (0, Vec::new());
        for seed in 0..2000 {
            match judge(&compare(&reference_run(&spec, seed, 6)), "").judgement {
                Judgement::Passed => passed += 1,
                Judgement::Failed => failed.push(seed),
                Judgement::NotJudged => {}
            }
        }
        assert_eq!(failed, [0u64; 0], "{yaml}: false alarms on these seeds");
        assert!(
            passed >= 1990,
            "{yaml}: passed on {passed} of 2000 seeds only"
        );
    }
}

/// The same schedules with the jitter off are caught, on every seed.
#[test]
fn the_library_schedules_without_jitter_are_caught() {
    for yaml in JITTERED {
        let plain = spec(yaml).without_jitter().expect("a jittered policy");
        let verdict = judge(&compare(&reference_run(&plain, 7, 6)), "");
        assert_eq!(
            verdict.judgement,
            Judgement::Failed,
            "{yaml}: {}",
            verdict.message
        );
    }
}

#[test]
fn a_match_on_v_ms_is_worth_v_over_6() {
    assert!((evidence(600) - libm::log(100.0)).abs() < 1e-12);
    // At or below 6 ms a match says nothing: a jitter of a few ms hits any value.
    assert_eq!(evidence(6), 0.0);
    assert_eq!(evidence(0), 0.0);
}

#[test]
fn one_differing_delay_passes() {
    let timelines = [call("call 0", &[100, 200]), call("call 1", &[100, 201])];
    let verdict = judge(&compare(&timelines), "");
    assert_eq!(
        (verdict.judgement, verdict.message.as_str()),
        (
            Judgement::Passed,
            "the delays vary: after the same responses at the same instants, call 1's \
                 attempt 3 started 0.201s after attempt 2 ended, call 0's 0.200s (1 of 2 delays \
                 compared differ from an earlier call's)"
        )
    );
}

#[test]
fn a_call_is_compared_with_the_first_call_sharing_its_timeline() {
    // Call 1 diverges at its second delay; call 2 follows call 1 there, not call 0.
    let timelines = [
        call("call 0", &[100, 200, 400]),
        call("call 1", &[100, 300, 400]),
        call("call 2", &[100, 300, 400]),
    ];
    let compared = compare(&timelines);
    let pairs: Vec<(&str, u32, &str)> = compared
        .list
        .iter()
        .map(|c| (c.call.as_str(), c.attempt, c.earlier.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("call 1", 2, "call 0"),
            ("call 1", 3, "call 0"),
            ("call 2", 2, "call 0"),
            ("call 2", 3, "call 0"),
            ("call 2", 4, "call 1"),
        ]
    );
    assert_eq!(compared.delays, 9);
}

#[test]
fn the_value_that_counts_most_is_left_out() {
    // 1s matched 40 times: a capped jitter could do that; 0.100s twice cannot decide.
    let mut timelines = vec![call(
        "call 0",
        &[100; 1]
            .iter()
            .chain(&[1000; 10])
            .copied()
            .collect::<Vec<_>>(),
    )];
    for c in 1..5 {
        timelines.push(call(
            &format!("call {c}"),
            &[100; 1]
                .iter()
                .chain(&[1000; 10])
                .copied()
                .collect::<Vec<_>>(),
        ));
    }
    let evidence = Evidence::of(&compare(&timelines).list);
    assert_eq!(
        (evidence.cap_ms, evidence.cap_count, evidence.counted),
        (1000, 40, 4)
    );
    let verdict = judge(&compare(&timelines), "");
    assert_eq!(
        verdict.judgement,
        Judgement::NotJudged,
        "{}",
        verdict.message
    );
}
