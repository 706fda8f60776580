//! The fault schedule of one run: a task per planned fault, on virtual time.

use std::time::Duration;

use retrylab_endpoints::Endpoint;

use crate::backend::sim::Network;

use super::plan::PlannedFault;

/// Starts a task per scheduled fault. `endpoints` are the run's, by name: a crash stops the
/// endpoint's own work as well as its connections.
///
/// A fault at 0s starts here, before the client is started, so that it is in force for the
/// whole run (a task woken at 0s could run after the client's first attempt).
pub(super) fn schedule(
    network: &Network,
    endpoints: &[(String, Endpoint)],
    faults: &[PlannedFault],
) {
    let start = network.start();
    for fault in faults {
        let target = Target {
            network: network.clone(),
            endpoint: endpoints
                .iter()
                .find(|(name, _)| name == fault.endpoint())
                .map(|(_, endpoint)| endpoint.clone()),
        };
        let fault = fault.clone();
        let at = fault.at();
        if at.is_zero() {
            target.begin(&fault);
        }
        tokio::spawn(async move {
            if !at.is_zero() {
                tokio::time::sleep_until(start + at).await;
                target.begin(&fault);
            }
            if let Some(lasts) = fault.lasts() {
                tokio::time::sleep(lasts).await;
                target.end(&fault);
            }
        });
    }
}

/// What a fault acts on. The endpoint name was validated when the plan was made, so the
/// network knows it and the endpoint is there.
struct Target {
    network: Network,
    endpoint: Option<Endpoint>,
}

impl Target {
    fn begin(&self, fault: &PlannedFault) {
        match fault {
            PlannedFault::Partition { endpoint, .. } => {
                let _ = self.network.partition(endpoint);
            }
            PlannedFault::Crash { endpoint, .. } => {
                // The endpoint first, then its connections, with nothing in between: no step
                // can commit or answer once the resets are on the wire.
                if let Some(e) = &self.endpoint {
                    e.crash();
                }
                let _ = self.network.crash(endpoint);
            }
        }
    }

    fn end(&self, fault: &PlannedFault) {
        match fault {
            PlannedFault::Partition { endpoint, .. } => {
                let _ = self.network.heal(endpoint);
            }
            PlannedFault::Crash {
                endpoint, scripts, ..
            } => {
                if let Some(e) = &self.endpoint {
                    e.restart(*scripts);
                }
                let _ = self.network.restart(endpoint);
            }
        }
    }
}

impl PlannedFault {
    /// The name of the endpoint the fault hits.
    fn endpoint(&self) -> &str {
        match self {
            PlannedFault::Partition { endpoint, .. } | PlannedFault::Crash { endpoint, .. } => {
                endpoint
            }
        }
    }

    /// When the fault starts, relative to the run's start.
    fn at(&self) -> Duration {
        match self {
            PlannedFault::Partition { at, .. } | PlannedFault::Crash { at, .. } => *at,
        }
    }

    /// How long it lasts (`None`: for good).
    fn lasts(&self) -> Option<Duration> {
        match self {
            PlannedFault::Partition { lasts, .. } => Some(*lasts),
            PlannedFault::Crash { restart_after, .. } => *restart_after,
        }
    }
}
