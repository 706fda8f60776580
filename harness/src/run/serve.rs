//! Serving a scenario to a client outside the process (`retrylab serve`): the endpoints on
//! real sockets, waiting for the client's calls, then the same trace and verdicts as a run.
//!
//! A client outside says nothing about where its calls begin and end, so they are read off
//! its requests: by the harness's call tag (`x-retrylab-call: <n>`) when requests carry
//! one, else by the pauses between requests (the `calls - 1` longest pauses separate the
//! calls).

use std::net::IpAddr;
use std::time::Duration;

use retrylab_endpoints::wire;
use retrylab_endpoints::{Endpoint, LedgerSnapshot, ResponseOutcome};

use super::plan::Plan;
use crate::backend::Net;
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::{BackendKind, Scenario};
use crate::trace::{Call, CallResult};

/// How often the serving call looks at the endpoints' ledgers for the client's progress:
/// often enough that serving ends well within a second of `idle`.
const POLL: Duration = Duration::from_millis(20);

/// How [`Scenario::serve`] serves a scenario, and when it stops.
///
/// ```
/// use std::time::Duration;
/// use retrylab::ServeOptions;
///
/// let options = ServeOptions::new().calls(3).idle(Duration::from_millis(500));
/// assert_eq!(options.idle_time(), Duration::from_millis(500));
/// ```
#[derive(Clone, Debug)]
#[must_use = "options do nothing until passed to `Scenario::serve`"]
pub struct ServeOptions {
    bind: IpAddr,
    calls: Option<u32>,
    idle: Duration,
    timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind: crate::backend::real::LOOPBACK,
            calls: None,
            idle: Duration::from_secs(2),
            timeout: Duration::from_secs(600),
        }
    }
}

impl ServeOptions {
    /// Loopback only (127.0.0.1), the scenario's `operation.calls`, stop after 2 s idle,
    /// give up after 10 minutes.
    pub fn new() -> ServeOptions {
        ServeOptions::default()
    }

    /// Listen on this address instead of 127.0.0.1 (every endpoint on a port of its own).
    /// Anything but loopback exposes the endpoints to the network.
    pub fn bind(mut self, ip: IpAddr) -> ServeOptions {
        self.bind = ip;
        self
    }

    /// How many calls the client makes (default: the scenario's `operation.calls`). Serving
    /// does not end before requests of that many calls arrived, and the requests are split
    /// into that many calls.
    pub fn calls(mut self, calls: u32) -> ServeOptions {
        self.calls = Some(calls.max(1));
        self
    }

    /// Serving ends once the client has been quiet this long: no request arriving, none
    /// being answered (default 2 s).
    pub fn idle(mut self, idle: Duration) -> ServeOptions {
        self.idle = idle;
        self
    }

    /// Serving ends, failing, when the client has not finished after this long (default 10
    /// minutes).
    pub fn timeout(mut self, timeout: Duration) -> ServeOptions {
        self.timeout = timeout;
        self
    }

    /// The idle time that ends serving.
    pub fn idle_time(&self) -> Duration {
        self.idle
    }
}

/// An endpoint being served: its name and the URL a client reaches it at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listening {
    /// The endpoint's name in the scenario.
    pub name: String,
    /// `http://<address>:<port>`, without a trailing slash.
    pub url: String,
}

impl Scenario {
    /// Serves the scenario's endpoints on real sockets for a client outside this process (a
    /// program in any language), and judges what it did: calls `listening` with every
    /// endpoint's URL once they listen, waits until the client's calls are done (see
    /// [`ServeOptions`]), and returns the report of the run, judged against `expect:`.
    ///
    /// The scenario is served as on `backend: real` whatever its `backend:` says, so what
    /// only the sim network can do (latency, partitions, refused connects) is refused with
    /// the located errors of that backend.
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use std::time::Duration;
    /// use retrylab::{Scenario, ServeOptions};
    ///
    /// let scenario = Scenario::from_yaml_str(
    ///     "version: 1\nname: served\nendpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
    ///      operation: { endpoint: api }\nexpect: { attempts: 2 }\n",
    ///     "served.yaml",
    /// ).unwrap();
    /// let options = ServeOptions::new().idle(Duration::from_millis(200));
    /// let report = scenario.serve(options, |endpoints| {
    ///     // The client: here a thread with a plain socket, anywhere else a program.
    ///     let address = endpoints[0].url.trim_start_matches("http://").to_owned();
    ///     std::thread::spawn(move || {
    ///         for _ in 0..2 {
    ///             let mut stream = std::net::TcpStream::connect(&address).unwrap();
    ///             stream.write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n").unwrap();
    ///             stream.read_to_end(&mut Vec::new()).unwrap();
    ///         }
    ///     });
    /// });
    /// report.assert();
    /// ```
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn serve<L>(&self, options: ServeOptions, listening: L) -> Report
    where
        L: FnOnce(&[Listening]) + Send + 'static,
    {
        let mut served = self.clone();
        served.backend = BackendKind::Real;
        let seed = match served.effective_seed() {
            Ok(seed) => seed,
            Err(e) => {
                return super::failed_report(
                    self.name.clone(),
                    self.seed,
                    RunEnd::NotRunnable,
                    e.to_string(),
                );
            }
        };
        let mut plan = match Plan::from_scenario(&served, seed) {
            Ok(plan) => plan,
            Err(errors) => {
                return super::failed_report(
                    self.name.clone(),
                    seed,
                    RunEnd::NotRunnable,
                    errors.to_string(),
                );
            }
        };
        let calls = options.calls.unwrap_or(plan.calls).max(1);
        let epoch = plan.epoch_unix_ms;
        plan.bind = options.bind;
        plan.served_calls = Some(calls);
        // One call of the harness's: the wait for the client's calls.
        plan.calls = 1;
        plan.concurrency = 1;
        plan.max_virtual_time = options.timeout;
        // The time limit above ends a client that never finishes; the wall guard is for a
        // harness that hangs, and gives the limit above room to report first.
        plan.wall = options.timeout.saturating_add(Duration::from_secs(5));
        let idle = options.idle;
        let mut listening = Some(listening);
        let mut report = super::run(plan, move |env: crate::env::Env| {
            let announce = listening.take();
            async move {
                let Net::Real(net) = env.net() else {
                    return Err("serving needs the real backend".to_owned());
                };
                let urls: Vec<Listening> = net
                    .addresses()
                    .iter()
                    .map(|(name, address)| Listening {
                        name: name.clone(),
                        url: format!("http://{address}"),
                    })
                    .collect();
                if let Some(announce) = announce {
                    announce(&urls);
                }
                wait_for_client(net.endpoints(), calls, idle, env.clock()).await;
                Ok::<_, String>(())
            }
        });
        if report.end == RunEnd::VirtualTimeLimit {
            // The run's time limit is serve's `timeout` here: say it in serve's words.
            let requests: usize = report.ledgers.iter().map(|(_, l)| l.requests.len()).sum();
            if let Some(verdict) = report
                .verdicts
                .iter_mut()
                .find(|v| v.check == "virtual_time_limit")
            {
                verdict.message = format!(
                    "the client had not finished after the serving timeout ({}): {requests} \
                     request(s) arrived, and serving waits for requests of {calls} call(s) \
                     followed by {} without any",
                    crate::trace::seconds(
                        u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX)
                    ),
                    crate::trace::seconds(u64::try_from(idle.as_millis()).unwrap_or(u64::MAX)),
                );
            }
        }
        // Bytes the client sent that no endpoint could read reached no script: the client's
        // defect, which the requests alone would never show.
        let unreadable: Vec<String> = report
            .ledgers
            .iter()
            .flat_map(|(name, ledger)| {
                ledger.unreadable.iter().map(move |u| {
                    format!(
                        "connection {} to `{name}` at {}: {}",
                        u.conn_id,
                        crate::trace::seconds(u.at_ms),
                        u.what
                    )
                })
            })
            .collect();
        if let Some(first) = unreadable.first() {
            report.verdicts.push(Verdict::fail(
                "unreadable_request",
                format!(
                    "the client sent {} connection(s) bytes no endpoint could read as a \
                     request, which got no answer (the first: {first})",
                    unreadable.len()
                ),
            ));
        }
        report
            .warnings
            .extend(served.warnings().iter().map(ToString::to_string));
        crate::check::judge(&served, &mut report, epoch);
        report
    }
}

/// Waits until requests of `calls` calls have arrived and the client has then been quiet
/// for `idle`.
async fn wait_for_client(
    endpoints: &[Endpoint],
    calls: u32,
    idle: Duration,
    clock: &retrylab_endpoints::VirtualClock,
) {
    let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
    loop {
        tokio::time::sleep(POLL).await;
        let mut progress = Progress::default();
        for endpoint in endpoints {
            endpoint.ledger().with(|ledger| progress.add(ledger));
            progress.busy |= endpoint.steps_in_progress() > 0;
        }
        let now = clock.now_ms();
        let quiet = !progress.busy && now.saturating_sub(progress.last_ms) >= idle_ms;
        if progress.requests > 0 && progress.calls() >= u64::from(calls) && quiet {
            return;
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

/// The calls of a served run, read off the requests the endpoints received: by call tag when
/// requests carry one, else split at the `calls - 1` longest pauses between requests.
pub(super) fn calls_of(endpoints: &[(String, Endpoint)], calls: u32) -> Vec<Call> {
    // (arrival, end of its answer, tag, the call's result if it was the last) of every
    // request, in arrival order.
    let mut requests: Vec<(u64, u64, Option<u32>, Option<CallResult>)> = Vec::new();
    for (_, endpoint) in endpoints {
        endpoint.ledger().with(|ledger| {
            for request in &ledger.requests {
                let response = ledger.response_to(request.id);
                let end = response.map_or(request.at_ms, |r| r.end_ms.unwrap_or(r.at_ms));
                requests.push((
                    request.at_ms,
                    end,
                    wire::call_tag(&request.headers),
                    response.map(|r| result_of(r.outcome)),
                ));
            }
        });
    }
    requests.sort_by_key(|r| (r.0, r.1));
    if requests.is_empty() {
        return Vec::new();
    }
    let tagged = requests.iter().any(|r| r.2.is_some());
    let groups: Vec<Vec<usize>> = if tagged {
        // In order of each tag's first request; untagged requests join the call before them.
        let mut order: Vec<u32> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            let slot = match request.2 {
                Some(tag) => match order.iter().position(|t| *t == tag) {
                    Some(slot) => slot,
                    None => {
                        order.push(tag);
                        groups.push(Vec::new());
                        groups.len() - 1
                    }
                },
                None if groups.is_empty() => {
                    order.push(u32::MAX);
                    groups.push(Vec::new());
                    0
                }
                None => groups.len() - 1,
            };
            groups[slot].push(i);
        }
        groups
    } else {
        // The pauses between consecutive requests, longest first (earliest first on ties).
        let mut pauses: Vec<(u64, usize)> = requests
            .windows(2)
            .enumerate()
            .map(|(i, pair)| (pair[1].0.saturating_sub(pair[0].1), i + 1))
            .collect();
        pauses.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut cuts: Vec<usize> = pauses
            .iter()
            .take(calls.saturating_sub(1) as usize)
            .map(|(_, at)| *at)
            .collect();
        cuts.sort_unstable();
        let mut groups = Vec::new();
        let mut from = 0;
        for cut in cuts.into_iter().chain([requests.len()]) {
            groups.push((from..cut).collect());
            from = cut;
        }
        groups
    };
    groups
        .into_iter()
        .enumerate()
        .map(|(call_id, members)| {
            let first = members.first().map_or(0, |i| requests[*i].0);
            let last = members
                .iter()
                .map(|i| requests[*i].1)
                .max()
                .unwrap_or(first);
            let result = members
                .last()
                .and_then(|i| requests[*i].3.clone())
                .unwrap_or(CallResult::Stopped);
            Call {
                client_id: 0,
                call_id: u32::try_from(call_id).unwrap_or(u32::MAX),
                start_ms: first,
                end_ms: Some(last),
                result,
            }
        })
        .collect()
}

/// A served call's outcome is its last answer: a success when that was a 2xx.
fn result_of(outcome: ResponseOutcome) -> CallResult {
    match outcome {
        ResponseOutcome::Sent { status } if status.is_success() => {
            CallResult::Success(format!("last answer {}", status.as_u16()))
        }
        ResponseOutcome::Sent { status } | ResponseOutcome::Truncated { status, .. } => {
            CallResult::Failure(format!("last answer {}", status.as_u16()))
        }
        ResponseOutcome::Failed(fail) => CallResult::Failure(format!("last answer {fail:?}")),
        ResponseOutcome::Abandoned => {
            CallResult::Failure("the client gave up on the last answer".to_owned())
        }
        ResponseOutcome::Crashed => {
            CallResult::Failure("the endpoint crashed before its last answer".to_owned())
        }
    }
}
