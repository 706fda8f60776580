//! Linear windows: 200 ms plus 300 ms a retry, capped, with no, full and equal jitter.

use std::time::Duration;

use super::{MS, windows};
use crate::policy::{Jitter, LinearConfig};

#[test]
fn linear_vectors() {
    let config = LinearConfig {
        max_attempts: 10,
        initial: MS(200),
        step: MS(300),
        max_delay: Duration::from_secs(1),
        jitter: Jitter::None,
        ..Default::default()
    };
    // 200 + 300 × (n-1) = 200, 500, 800, 1100 -> 1000.
    assert_eq!(
        windows(config.clone().into_policy().as_ref(), 5),
        [
            (200, 200),
            (500, 500),
            (800, 800),
            (1000, 1000),
            (1000, 1000)
        ]
    );
    let full = LinearConfig {
        jitter: Jitter::Full,
        ..config.clone()
    };
    assert_eq!(
        windows(full.into_policy().as_ref(), 4),
        [(0, 200), (0, 500), (0, 800), (0, 1000)]
    );
    let equal = LinearConfig {
        jitter: Jitter::Equal,
        ..config
    };
    assert_eq!(
        windows(equal.into_policy().as_ref(), 4),
        [(100, 200), (250, 500), (400, 800), (500, 1000)]
    );
}
