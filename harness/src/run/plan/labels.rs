//! The labels of the seeded streams a run draws from: each random choice has a stream of its
//! own, named after what draws from it, so adding a draw never shifts another's values.

/// The label of the stream route `route` of endpoint `endpoint` draws its random steps from.
pub(crate) fn draws_label(endpoint: &str, route: usize) -> String {
    format!("endpoint/{endpoint}/route/{route}/p")
}

/// The label of the stream client `client` of a fleet draws its start (`operation.start`)
/// from: one per client, so adding clients never changes when the others start.
pub(crate) fn client_start_label(client: u32) -> String {
    format!("client/{client}/start")
}

/// The label of the stream the sim network draws the latency of every segment and SYN to
/// or from `endpoint` from, when its latency is a distribution.
pub(crate) fn network_latency_label(endpoint: &str) -> String {
    format!("network/{endpoint}/latency")
}

/// The label of the stream route `route` of endpoint `endpoint` draws its sampled step
/// latencies from: apart from the random steps' stream, so adding a latency distribution
/// does not shift their choices.
pub(crate) fn latency_draws_label(endpoint: &str, route: usize) -> String {
    format!("endpoint/{endpoint}/route/{route}/latency")
}
