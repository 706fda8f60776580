//! The fault schedule of one run: a task per planned fault, on virtual time.

use crate::backend::sim::Network;

use super::plan::PlannedFault;

/// Starts a task per scheduled fault.
pub(super) fn schedule(network: &Network, faults: &[PlannedFault]) {
    for fault in faults {
        let network = network.clone();
        let fault = fault.clone();
        let start = network.start();
        tokio::spawn(async move {
            match fault {
                PlannedFault::Partition {
                    at,
                    endpoint,
                    lasts,
                } => {
                    tokio::time::sleep_until(start + at).await;
                    // The endpoint name was validated when the plan was made.
                    let _ = network.partition(&endpoint);
                    tokio::time::sleep(lasts).await;
                    let _ = network.heal(&endpoint);
                }
            }
        });
    }
}
