//! `trickle: <dur>`: the head goes out after the step's latency, the body is spread over the
//! trickle, and the attempt ends when its last byte arrives. Exact on the sim network, a
//! real slow body on the real backend.

use retrylab::trace::AttemptOutcome;
use retrylab::{RunEnd, Scenario};

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "trickle.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// Latency 1ms each way: the connect's round trip takes 2ms and the request arrives at 3ms;
/// the head leaves after the step's 100ms latency and arrives 1ms later, at 104ms, and the
/// end is the head plus the trickle, to the millisecond.
#[test]
fn the_attempt_ends_exactly_the_trickle_after_its_head() {
    let s = scenario(
        "version: 1\nname: t\n\
         endpoints: { api: { script: [ { status: 200, latency: 100ms, body: '0123456789', trickle: 2s } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n\
         client: no_retry\n\
         expect: { outcome: success, attempts: 1 }\n",
    );
    let report = s.run_builtin_with_seed(0);
    report.assert();
    let trace = report.trace();
    let a = &trace.attempts[0];
    assert_eq!(a.outcome, AttemptOutcome::Status(200));
    let head = a.head_ms.unwrap_or_else(|| panic!("no head: {a:?}"));
    let end = a.end_ms.unwrap_or_else(|| panic!("no end: {a:?}"));
    assert_eq!(head, 104, "{}", report.summary());
    assert_eq!(end, head + 2000, "{}", report.summary());
}

/// An attempt timeout covering the body gives up on a trickle longer than itself, at its
/// own instant; a head-only view of the attempt would have seen a success at 100ms.
#[test]
fn a_timeout_over_the_whole_attempt_cuts_a_long_trickle() {
    let s = scenario(
        "version: 1\nname: t\n\
         endpoints: { api: { script: [ { status: 200, body: 'abcdefghij', trickle: 10s } ] } }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 2, attempt_timeout: 1s, retry_on: [timeout] } }\n\
         expect: { outcome: failure, attempts: 2 }\n",
    );
    let report = s.run_builtin_with_seed(0);
    report.assert();
    let attempts = &report.trace().attempts;
    assert_eq!(attempts[0].head_ms, Some(0));
    assert_eq!(attempts[0].end_ms, Some(1000));
    assert_eq!(attempts[1].start_ms, 1100);
    assert_eq!(attempts[1].end_ms, Some(2100));
}

/// A cut inside a trickled body happens when the chunk carrying its last byte leaves: the
/// head is 39 bytes, so `after_bytes: 44` lets 5 one-byte chunks out, the 5th at 500ms.
#[test]
fn a_cut_in_a_trickled_body_happens_when_its_byte_leaves() {
    let s = scenario(
        "version: 1\nname: t\n\
         endpoints: { api: { script: [ { status: 200, body: '0123456789', trickle: 1s, fail: { reset: { after_bytes: 44 } }, commit: never } ] } }\n\
         operation: { endpoint: api }\n\
         client: no_retry\n\
         expect: { outcome: failure, attempts: 1 }\n",
    );
    let report = s.run_builtin_with_seed(0);
    report.assert();
    let a = &report.trace().attempts[0];
    assert_eq!((a.head_ms, a.end_ms), (Some(0), Some(500)), "{a:?}");
    assert!(a.body_error.is_some(), "{a:?}");
}

/// On real sockets the body is slow for real: the attempt takes the trickle, give or take
/// the machine's scheduling.
#[test]
fn a_real_backend_trickle_is_a_real_slow_body() {
    let s = scenario(
        "version: 1\nname: t\nbackend: real\n\
         endpoints: { api: { script: [ { status: 200, body: '0123456789', trickle: 500ms } ] } }\n\
         operation: { endpoint: api }\n\
         client: no_retry\n\
         expect: { outcome: success, attempts: 1 }\n",
    );
    let report = s.run_builtin();
    assert_eq!(*report.end(), RunEnd::Completed, "{}", report.summary());
    report.assert();
    let a = &report.trace().attempts[0];
    let head = a.head_ms.unwrap_or_else(|| panic!("no head: {a:?}"));
    let end = a.end_ms.unwrap_or_else(|| panic!("no end: {a:?}"));
    let body = end - head;
    assert!((480..3000).contains(&body), "body took {body}ms: {a:?}");
}
