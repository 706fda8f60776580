//! Retry throttling (`retryThrottling`): grpc-go's token bucket vector (maxTokens 10,
//! tokenRatio 0.5) step by step, the throttled reference across calls, and throttled clients
//! written from scratch, right and wrong (retrying on an empty bucket, or at exactly half).

use super::{
    accepted, check, grpc, reference_sim, rejection, retry_scripts, throttle_trail, throttled,
};
use crate::policy::grpc::{GrpcRetryConfig, RetryThrottling};
use crate::policy::tests::support::Client;
use crate::policy::{StopReason, ViolationKind};

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
