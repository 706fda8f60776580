//! What is retried: 5xx, 429 and every transport failure; other statuses stop the delivery,
//! 2xx as a success.

use std::io;

use super::{linear_20_40, window};
use crate::policy::tests::support::{Reply, failure, refused, st, timeout, view};
use crate::policy::{CallHistory, Envelope, Observed, StopReason};

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
