//! Over every backoff model, jitter and throttle and many seeds: the reference decision stays
//! inside its envelope and its timelines conform.

use std::time::Duration;

use super::{check, reference_sim};
use crate::policy::sns::{SnsBackoff, SnsConfig};
use crate::policy::tests::support::{Reply, refused, st, timeout};

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
