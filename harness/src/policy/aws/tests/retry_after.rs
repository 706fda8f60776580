//! `x-amz-retry-after`: under 2.1 clamped to [t, t + 5 s] of the backoff t (invalid values
//! ignored); under 2.0 ignored by botocore and taken by smithy-rs up to the maximum backoff.

use super::{config, no_jitter, windows, with_ra};
use crate::policy::aws::{AwsConfig, AwsMode, AwsSdk};
use crate::policy::tests::support::st;

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
