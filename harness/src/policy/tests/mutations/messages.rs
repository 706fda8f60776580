//! The wording of violations, on the cases of the issue: a `Retry-After` ignored, a call
//! stopped with attempts left, and an attempt past the limit (later attempts not judged
//! again).

use std::time::Duration;

use super::{all_503, generic_client, violations};
use crate::policy::FixedConfig;
use crate::policy::tests::support::{st, with_ra};

#[test]
fn messages_from_the_issue() {
    // A 503, then a 429 with Retry-After: 2 that the client ignores, waiting its 1.2 s.
    let p = FixedConfig {
        max_attempts: 5,
        delay: Duration::from_millis(1200),
        ..Default::default()
    }
    .into_policy();
    let script = [st(503), with_ra(429, "2"), st(200)];
    let v = violations(
        p.as_ref(),
        &script,
        0,
        generic_client(5, false, |_, _, _| 1200),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].attempt, 3);
    assert_eq!(
        v[0].message,
        "attempt 3 started 1.200s after the head of a 429 with Retry-After: 2 (needed >= 2.000s)"
    );
    // Stopping after the fourth of five allowed attempts.
    let v = violations(
        p.as_ref(),
        &all_503(),
        0,
        generic_client(4, true, |_, _, _| 1200),
    );
    assert_eq!(
        v[0].message,
        "attempt 4: the call stopped after a retryable 503 with attempts left (policy allows 5 \
         attempts)"
    );
    // A fourth attempt under a three-attempt policy.
    let three = FixedConfig {
        delay: Duration::from_millis(1200),
        ..Default::default()
    }
    .into_policy();
    let v = violations(
        three.as_ref(),
        &all_503(),
        0,
        generic_client(4, true, |_, _, _| 1200),
    );
    assert_eq!(
        v[0].message,
        "attempt 4 was made but the policy allows at most 3 attempts"
    );
    assert_eq!(v.len(), 1, "later attempts are not judged again: {v:#?}");
}
