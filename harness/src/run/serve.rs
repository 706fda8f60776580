//! Serving a scenario to a client outside the process (`retrylab serve`): the endpoints on
//! real sockets, waiting for the client's calls, then the same trace and verdicts as a run
//! (its calls read off its requests, [`served_calls`](super::served_calls)).

use std::net::IpAddr;
use std::time::Duration;

use retrylab_endpoints::wire;
use retrylab_endpoints::{Endpoint, LedgerSnapshot};

use super::plan::Plan;
use crate::backend::Net;
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::{BackendKind, Scenario};

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
                return Report::not_run(
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
                return Report::not_run(
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
        let judging = crate::check::Judging {
            seed,
            epoch_unix_ms: epoch,
            snapshots: false,
        };
        crate::check::judge(&served, report, &judging)
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
