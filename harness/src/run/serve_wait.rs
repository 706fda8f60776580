//! Waiting for a client served by [`Scenario::serve`](crate::Scenario::serve): until its
//! calls are done and it has been quiet, until serving is told it finished, or until no
//! request came in the time given for the first.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use retrylab_endpoints::wire;
use retrylab_endpoints::{Endpoint, LedgerSnapshot};

/// How often the serving call looks at the endpoints' ledgers for the client's progress:
/// often enough that serving ends well within a second of `idle`.
const POLL: Duration = Duration::from_millis(20);

/// How waiting for a served client ended.
pub(super) enum Waited {
    /// Requests of every call arrived, then the client was quiet; or serving was told the
    /// client is done.
    Done,
    /// No request at all arrived in the time given for the first.
    NoRequest,
    /// Serving was told the client is done before any request arrived.
    ToldBeforeAnyRequest,
}

/// When the wait for a served client ends.
pub(super) struct Until {
    /// Requests of this many calls must arrive (unless told the client is done).
    pub(super) calls: u32,
    /// Then this long without a request ends the wait (unless it ends when told).
    pub(super) idle: Duration,
    /// No request this long after listening ends the wait, failing.
    pub(super) first: Duration,
    /// The caller's word that the client is done ([`ServeOptions::finished_when`](crate::ServeOptions::finished_when)).
    pub(super) finished: Option<Arc<AtomicBool>>,
}

/// Waits until requests of `calls` calls have arrived and the client has then been quiet
/// for `idle` (or, with a `finished` flag, until it is set and no response is still being
/// written, waiting for one at most `idle`), or until the first request's time (`first`)
/// passed without one.
pub(super) async fn wait_for_client(
    endpoints: &[Endpoint],
    until: &Until,
    clock: &retrylab_endpoints::VirtualClock,
) -> Waited {
    let idle_ms = u64::try_from(until.idle.as_millis()).unwrap_or(u64::MAX);
    let first_ms = u64::try_from(until.first.as_millis()).unwrap_or(u64::MAX);
    // When the flag was first seen set.
    let mut told_at: Option<u64> = None;
    loop {
        tokio::time::sleep(POLL).await;
        let mut progress = Progress::default();
        for endpoint in endpoints {
            endpoint.ledger().with(|ledger| progress.add(ledger));
            progress.busy |= endpoint.steps_in_progress() > 0;
        }
        let now = clock.now_ms();
        if let Some(finished) = &until.finished {
            if told_at.is_none() && finished.load(Ordering::SeqCst) {
                told_at = Some(now);
            }
            if let Some(told) = told_at {
                if progress.requests == 0 {
                    return Waited::ToldBeforeAnyRequest;
                }
                if !progress.busy || now.saturating_sub(told) >= idle_ms {
                    return Waited::Done;
                }
            }
        } else {
            let quiet = !progress.busy && now.saturating_sub(progress.last_ms) >= idle_ms;
            if progress.requests > 0 && progress.calls() >= u64::from(until.calls) && quiet {
                return Waited::Done;
            }
        }
        if progress.requests == 0 && !progress.busy && now >= first_ms {
            return Waited::NoRequest;
        }
    }
}

/// What the client has done so far, read off the ledgers.
#[derive(Default)]
struct Progress {
    requests: u64,
    /// Distinct call tags seen (a client that tags its requests).
    tags: std::collections::BTreeSet<u32>,
    /// The last instant anything happened: a request, an answer, a close.
    last_ms: u64,
    busy: bool,
}

impl Progress {
    fn add(&mut self, ledger: &LedgerSnapshot) {
        self.requests += ledger.requests.len() as u64;
        self.tags.extend(
            ledger
                .requests
                .iter()
                .filter_map(|r| wire::call_tag(&r.headers)),
        );
        // Each list is in time order: its last entry is its latest.
        let last = [
            ledger.requests.last().map(|r| r.at_ms),
            ledger.responses.last().map(|r| r.end_ms.unwrap_or(r.at_ms)),
            ledger.closes.last().map(|c| c.at_ms),
        ];
        self.last_ms = last.into_iter().flatten().fold(self.last_ms, u64::max);
        // A response still being written is activity.
        self.busy |= ledger.responses.len() < ledger.requests.len();
    }

    /// Calls seen: by tag when the client tags its requests, else at most one per request.
    fn calls(&self) -> u64 {
        if self.tags.is_empty() {
            self.requests
        } else {
            self.tags.len() as u64
        }
    }
}
