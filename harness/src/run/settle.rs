//! Settling a run before it is judged: after the last call returns, requests the client
//! already sent may still be on their way, and endpoints may still be working on requests
//! whose client gave up (a `before_response` commit behind a long latency). Judging effects
//! then would judge a truncated ledger, so the run waits, on virtual time, until nothing is
//! in flight and no endpoint is processing a request, bounded by `limits.max_virtual_time`.

use tokio::time::Instant;

use retrylab_endpoints::Endpoint;

use crate::backend::Net;
use crate::backend::sim::InFlight;

/// Passes through the scheduler after the network went quiet, so that a host whose data
/// was delivered at this very instant reads it and admits its request before the run
/// decides nothing is left (the reader and this task wake at the same instant, in an order
/// the runtime chooses). A read, a parse and an admission take a few polls at most.
const QUIET_PASSES: usize = 8;

/// On the real backend, how long the run waits with every endpoint idle before it believes
/// nothing more is coming: a request the client wrote just before its call returned crosses
/// loopback to the endpoints' thread in well under a millisecond, even on a loaded machine.
const REAL_QUIET: std::time::Duration = std::time::Duration::from_millis(20);

/// What was still going on when settling ran out of time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsettled {
    /// Requests endpoints were still processing.
    pub(crate) steps: usize,
    /// Whether client data was still on its way to a host.
    pub(crate) in_flight: bool,
}

impl Unsettled {
    /// Why effects cannot be judged, as a verdict says it.
    pub(crate) fn why(&self) -> String {
        let mut what = Vec::new();
        if self.steps > 0 {
            what.push(format!(
                "{} request(s) were still being processed by endpoints",
                self.steps
            ));
        }
        if self.in_flight {
            what.push("requests were still on their way to an endpoint".to_owned());
        }
        format!(
            "the run reached limits.max_virtual_time while {}, so commits may be missing",
            what.join(" and ")
        )
    }
}

/// Waits until nothing the clients sent is in flight and every endpoint is idle, or until
/// `deadline`. `heals` are the instants at which partitions heal (held data moves then).
pub(crate) async fn settle(
    network: &Net,
    endpoints: &[(String, Endpoint)],
    heals: &[Instant],
    deadline: Instant,
) -> Result<(), Unsettled> {
    let work = async {
        loop {
            for (_, endpoint) in endpoints {
                endpoint.idle().await;
            }
            match network.in_flight_to_hosts() {
                InFlight::Arriving(at) => tokio::time::sleep_until(at).await,
                InFlight::Held => {
                    let now = Instant::now();
                    match heals.iter().copied().filter(|h| *h > now).min() {
                        Some(heal) => tokio::time::sleep_until(heal).await,
                        // Held with no heal to come: it never arrives; the deadline says so.
                        None => std::future::pending::<()>().await,
                    }
                }
                InFlight::Nothing => {
                    for _ in 0..QUIET_PASSES {
                        tokio::task::yield_now().await;
                    }
                    match network {
                        Net::Real(_) => tokio::time::sleep(REAL_QUIET).await,
                        // turmoil's queues are not visible from a host: wait as long as a
                        // message written just now may take.
                        #[cfg(feature = "turmoil")]
                        Net::Turmoil(net) => tokio::time::sleep(net.crossing()).await,
                        Net::Sim(_) => {}
                    }
                    let busy = endpoints.iter().any(|(_, e)| e.steps_in_progress() > 0);
                    if !busy && network.in_flight_to_hosts() == InFlight::Nothing {
                        return;
                    }
                }
            }
        }
    };
    tokio::time::timeout_at(deadline, work)
        .await
        .map_err(|_| Unsettled {
            steps: endpoints.iter().map(|(_, e)| e.steps_in_progress()).sum(),
            in_flight: network.in_flight_to_hosts() != InFlight::Nothing,
        })
}
