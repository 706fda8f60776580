//! The `grpc-previous-rpc-attempts` header: every retry of the A6 policy carries the number of
//! attempts before it; the connection backoff sends nothing of its own.

use super::a6;
use crate::policy::grpc::{A6Jitter, GrpcConnectionConfig};

#[test]
fn every_retry_carries_grpc_previous_rpc_attempts() {
    let p = a6(5, A6Jitter::Current).into_policy();
    let sent: Vec<Vec<(String, String)>> = (1..=4)
        .map(|n| {
            p.request_headers(n)
                .into_iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        value.to_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .collect();
    let header = |v: &str| vec![("grpc-previous-rpc-attempts".to_owned(), v.to_owned())];
    assert_eq!(sent, [vec![], header("1"), header("2"), header("3")]);
    // The connection backoff sends nothing of its own.
    let c = GrpcConnectionConfig::default().into_policy();
    assert!(c.request_headers(2).is_empty());
}
