//! `no_retry` clients: one attempt accepted, a retry caught after a 503 or a timeout.

use super::{accepted, all_503, generic_client, rejected, too_many};
use crate::policy::tests::support::{failure, st};
use crate::policy::{NoRetryConfig, Observed};

#[test]
fn no_retry_clients() {
    let p = NoRetryConfig::default().into_policy();
    accepted(p.as_ref(), &all_503(), || {
        generic_client(1, true, |_, _, _| 0)
    });
    accepted(p.as_ref(), &[st(200)], || {
        generic_client(1, true, |_, _, _| 0)
    });
    let message = rejected(
        p.as_ref(),
        &all_503(),
        || generic_client(2, true, |_, _, _| 100),
        too_many,
    );
    assert_eq!(
        message,
        "attempt 2 was made but the policy allows at most 1 attempt"
    );
    rejected(
        p.as_ref(),
        &[failure(Observed::Timeout, 1000)],
        || generic_client(3, true, |_, _, _| 100),
        too_many,
    );
}
