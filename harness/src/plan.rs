//! A plan: a scenario resolved into exactly what one run needs (endpoint configurations,
//! latencies, the operation, limits), with every name checked and every default applied.

use std::time::Duration;

use http::HeaderName;
use retrylab_endpoints::EndpointConfig;

use crate::env::Operation;

/// One endpoint of the run.
#[derive(Debug, Clone)]
pub(crate) struct PlannedEndpoint {
    pub(crate) name: String,
    pub(crate) config: EndpointConfig,
    /// One-way latency, each direction.
    pub(crate) latency: Duration,
}

/// A fault at a fixed virtual instant.
#[derive(Debug, Clone)]
pub(crate) enum PlannedFault {
    /// `network.faults: [{ at, partition, for }]`.
    Partition {
        at: Duration,
        endpoint: String,
        lasts: Duration,
    },
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) epoch_unix_ms: u64,
    pub(crate) default_latency: Duration,
    pub(crate) endpoints: Vec<PlannedEndpoint>,
    pub(crate) faults: Vec<PlannedFault>,
    pub(crate) operation: Operation,
    pub(crate) key_header: Option<HeaderName>,
    pub(crate) calls: u32,
    pub(crate) max_virtual_time: Duration,
    pub(crate) max_attempts: Option<u64>,
    pub(crate) wall: Duration,
    pub(crate) drain: Duration,
    pub(crate) https_as_http: bool,
}
