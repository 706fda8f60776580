//! Serving a scenario to a client outside the process (`retrylab serve`): the endpoints on
//! real sockets, waiting for the client's calls, then the same trace and verdicts as a run
//! (its calls read off its requests, [`served_calls`](super::served_calls)).

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::plan::Plan;
use super::serve_wait::{Until, Waited, wait_for_client};
use crate::backend::Net;
use crate::report::{Report, RunEnd, Verdict};
use crate::scenario::{
    BackendKind, CommandClient, LatencySpec, RetryAfterSpec, Scenario, StepSpec, TimelineStep,
};

/// How [`Scenario::serve`] serves a scenario, and when it stops.
///
/// ```
/// use std::time::Duration;
/// use retrylab::ServeOptions;
///
/// let options = ServeOptions::new().calls(3).idle(Duration::from_millis(500));
/// assert_eq!(options.idle_time(), Some(Duration::from_millis(500)));
/// // Without one, the quiet is derived from the scenario served.
/// assert_eq!(ServeOptions::new().idle_time(), None);
/// ```
#[derive(Clone, Debug)]
#[must_use = "options do nothing until passed to `Scenario::serve`"]
pub struct ServeOptions {
    bind: IpAddr,
    calls: Option<u32>,
    idle: Option<Duration>,
    first_request: Duration,
    timeout: Duration,
    finished: Option<Arc<AtomicBool>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind: crate::backend::real::LOOPBACK,
            calls: None,
            idle: None,
            first_request: Duration::from_secs(60),
            timeout: Duration::from_secs(600),
            finished: None,
        }
    }
}

impl ServeOptions {
    /// Loopback only (127.0.0.1), the scenario's `operation.calls`, stop once the client
    /// has been quiet longer than the scenario asks it to wait (see [`ServeOptions::idle`]),
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
    /// being answered. By default, the longest wait the scenario itself asks of a client (a
    /// `Retry-After`, a step's latency or trickle) plus 1 s, and at least 2 s: a fixed 2 s
    /// judged a client before the retry a `Retry-After: 2` asked for arrived.
    pub fn idle(mut self, idle: Duration) -> ServeOptions {
        self.idle = Some(idle);
        self
    }

    /// Serving ends, failing, when no request at all has arrived this long after the
    /// endpoints started listening (default 60 s): a client that died before its first
    /// request, or that went elsewhere, is told at once rather than at the timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retrylab::ServeOptions;
    ///
    /// let options = ServeOptions::new().first_request(Duration::from_secs(5));
    /// assert_eq!(options.first_request_time(), Duration::from_secs(5));
    /// ```
    pub fn first_request(mut self, wait: Duration) -> ServeOptions {
        self.first_request = wait;
        self
    }

    /// How long serving waits for the first request.
    pub fn first_request_time(&self) -> Duration {
        self.first_request
    }

    /// Serving ends, failing, when the client has not finished after this long (default 10
    /// minutes).
    pub fn timeout(mut self, timeout: Duration) -> ServeOptions {
        self.timeout = timeout;
        self
    }

    /// Serving ends as soon as `finished` is set, the caller's word that the client is done
    /// (a test whose client ran to its end), instead of once the client has been quiet for
    /// [`ServeOptions::idle`]: a client between two of its calls is never judged early, and
    /// a finished one is judged at once. A response still being written when the flag is
    /// set is waited for, at most the idle time. Set before any request arrived, serving
    /// ends failing, with the verdict `serving_timeout` saying so.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::AtomicBool;
    /// use retrylab::ServeOptions;
    ///
    /// let done = Arc::new(AtomicBool::new(false));
    /// let options = ServeOptions::new().finished_when(done.clone());
    /// assert!(options.is_told_when_finished());
    /// ```
    pub fn finished_when(mut self, finished: Arc<AtomicBool>) -> ServeOptions {
        self.finished = Some(finished);
        self
    }

    /// Whether serving ends when told (see [`ServeOptions::finished_when`]) rather than
    /// after a quiet.
    pub fn is_told_when_finished(&self) -> bool {
        self.finished.is_some()
    }

    /// The idle time that ends serving, when one was given; `None` derives it from the
    /// scenario served.
    pub fn idle_time(&self) -> Option<Duration> {
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
        if let crate::scenario::ClientSpec::Command(command) = &self.client {
            return served.serve_command(command, &options, listening);
        }
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
        // The file's own `limits.wall`, when it sets one, bounds serving as it bounds a run:
        // serving ends at the first of it and the serving timeout.
        let (timeout, limit) = match served.limits.wall {
            Some(wall) if wall.as_duration() < options.timeout => {
                (wall.as_duration(), "the scenario's limits.wall")
            }
            _ => (options.timeout, "the serving timeout"),
        };
        plan.max_virtual_time = timeout;
        // The time limit above ends a client that never finishes; the wall guard is for a
        // harness that hangs, and gives the limit above room to report first.
        plan.wall = timeout.saturating_add(Duration::from_secs(5));
        let idle = options.idle.unwrap_or_else(|| default_idle(&served));
        let first_request = options.first_request;
        let finished = options.finished.clone();
        let told_before_any = concat!(
            "the client was done (serving was told so) before any request arrived: ",
            "did it send its requests to the URL serve printed?"
        )
        .to_owned();
        let no_request = format!(
            "no request arrived in the first {} of serving: did the client start, and does it \
             use the URL serve printed? (A file with `client: {{ command: [...] }}` has serve \
             start the client itself and see it exit; --first-request waits longer.)",
            crate::trace::seconds(u64::try_from(first_request.as_millis()).unwrap_or(u64::MAX))
        );
        // Set by the wait when no request came: a served run's calls are the client's, read
        // off its requests, so the harness's own call and its result are not among them.
        let silent = Arc::new(std::sync::Mutex::new(None::<Waited>));
        let saw_silence = silent.clone();
        let mut listening = Some(listening);
        let mut report = super::run(plan, move |env: crate::env::Env| {
            let silent = saw_silence.clone();
            let announce = listening.take();
            let finished = finished.clone();
            async move {
                let Net::Real(net) = env.net() else {
                    return Err(super::Formatted(
                        "serving needs the real backend".to_owned(),
                    ));
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
                let until = Until {
                    calls,
                    idle,
                    first: first_request,
                    finished,
                };
                match wait_for_client(net.endpoints(), &until, env.clock()).await {
                    Waited::Done => Ok(()),
                    silence => {
                        if let Ok(mut slot) = silent.lock() {
                            *slot = Some(silence);
                        }
                        Err(super::Formatted("no request arrived".to_owned()))
                    }
                }
            }
        });
        let silence = silent.lock().ok().and_then(|mut slot| slot.take());
        if let Some(silence) = silence {
            let message = match silence {
                Waited::ToldBeforeAnyRequest => told_before_any,
                Waited::NoRequest | Waited::Done => no_request,
            };
            report
                .verdicts
                .insert(0, Verdict::fail("serving_timeout", message));
        }
        if report.end == RunEnd::VirtualTimeLimit {
            // The run's time limit is serve's `timeout` here: say it in serve's words.
            let requests: usize = report.ledgers.iter().map(|(_, l)| l.requests.len()).sum();
            if let Some(verdict) = report
                .verdicts
                .iter_mut()
                .find(|v| v.check == "virtual_time_limit")
            {
                // A real-time run: no virtual time ran out, the serving timeout did.
                verdict.check = "serving_timeout".to_owned();
                verdict.message = format!(
                    "the client had not finished after {limit} ({}): {requests} \
                     request(s) arrived, and serving waits for requests of {calls} call(s) \
                     followed by {} without any",
                    crate::trace::seconds(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
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

impl Scenario {
    /// [`Scenario::serve`] of a scenario whose client is a program: serving spawns it, as
    /// `retrylab run` does, and ends when it exits, instead of waiting for a quiet client.
    fn serve_command<L>(
        &self,
        command: &CommandClient,
        options: &ServeOptions,
        listening: L,
    ) -> Report
    where
        L: FnOnce(&[Listening]) + Send + 'static,
    {
        let seed = match self.effective_seed() {
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
        if options.bind != crate::backend::real::LOOPBACK {
            return Report::not_run(
                self.name.clone(),
                seed,
                RunEnd::NotRunnable,
                format!(
                    "--bind {}: the scenario's client is a program retrylab starts itself, \
                     which reaches the endpoints on 127.0.0.1; serve on another address only \
                     for a client elsewhere (a file without `client: {{ command }}`)",
                    options.bind
                ),
            );
        }
        self.run_command(seed, command, Some(Box::new(listening)))
    }
}

/// The least quiet that ends serving when none is given.
const MIN_IDLE_MS: u64 = 2_000;

/// What serving waits beyond the longest wait the scenario asks of a client: room for the
/// client's own scheduling and a round trip on a loaded machine.
const IDLE_MARGIN_MS: u64 = 1_000;

/// The quiet that ends serving when none is given: the longest wait any step of the
/// scenario asks of a client (a `Retry-After`, a step's latency, a trickled body), plus
/// [`IDLE_MARGIN_MS`], and at least [`MIN_IDLE_MS`]. A client that honours a
/// `Retry-After: 5` is quiet for 5 s before its retry, and must not be judged before it.
fn default_idle(scenario: &Scenario) -> Duration {
    let longest = scenario
        .endpoints
        .values()
        .flat_map(|endpoint| {
            let scripts = endpoint
                .script
                .iter()
                .chain(endpoint.routes.iter().filter_map(|r| r.script.as_ref()));
            let timelines = endpoint
                .timeline
                .iter()
                .chain(endpoint.routes.iter().filter_map(|r| r.timeline.as_ref()));
            let steps: Vec<StepSpec> = scripts
                .flatten()
                .cloned()
                .chain(timelines.flatten().map(TimelineStep::as_step))
                .chain(endpoint.when_empty.as_ref().and_then(|w| w.step()).cloned())
                .collect();
            steps
        })
        .map(|step| step_wait_ms(&step))
        .max()
        .unwrap_or(0);
    Duration::from_millis(longest.saturating_add(IDLE_MARGIN_MS).max(MIN_IDLE_MS))
}

/// The longest a client may wait on `step`, in ms: its `Retry-After` (seconds, or a date's
/// offset ahead), its latency (a distribution's cap, or its typical value when it has none)
/// and its trickle, and those of its random branches.
fn step_wait_ms(step: &StepSpec) -> u64 {
    let retry_after = match &step.retry_after {
        Some(RetryAfterSpec::Seconds(seconds)) => {
            u64::try_from(*seconds).unwrap_or(0).saturating_mul(1000)
        }
        Some(RetryAfterSpec::HttpDate { offset, .. }) => u64::try_from(offset.0).unwrap_or(0),
        Some(RetryAfterSpec::Raw(raw)) => raw
            .trim()
            .parse::<u64>()
            .map_or(0, |seconds| seconds.saturating_mul(1000)),
        _ => 0,
    };
    let latency = step.latency.as_ref().map_or(0, |latency| match latency {
        LatencySpec::Fixed(fixed) => fixed.as_ms(),
        LatencySpec::Uniform(range) => range.max.as_ms(),
        LatencySpec::Lognormal(l) => l.max.unwrap_or(l.median).as_ms(),
        LatencySpec::Exponential(e) => e.max.unwrap_or(e.mean).as_ms(),
    });
    let trickle = step.trickle.map_or(0, |t| t.as_ms());
    let branches = [&step.then, &step.r#else]
        .into_iter()
        .flatten()
        .map(|branch| step_wait_ms(branch))
        .max()
        .unwrap_or(0);
    retry_after
        .max(latency.saturating_add(trickle))
        .max(branches)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(script: &str) -> Scenario {
        Scenario::from_yaml_str(
            &format!(
                "version: 1\nname: x\nbackend: real\nendpoints: {{ api: {{ script: {script} }} }}\n\
                 operation: {{ endpoint: api }}\n"
            ),
            "x.yaml",
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A client that honours a `Retry-After: 5` is quiet for 5 s: serving waits longer.
    #[test]
    fn the_default_quiet_outlasts_the_longest_wait_the_scenario_asks_for() {
        let idle = |script: &str| default_idle(&scenario(script)).as_millis();
        assert_eq!(idle("[ { status: 200 } ]"), 2_000);
        assert_eq!(
            idle("[ { status: 429, retry_after: 5 }, { status: 200 } ]"),
            6_000
        );
        assert_eq!(
            idle("[ { status: 503, retry_after: { http_date: +4s } }, { status: 200 } ]"),
            5_000
        );
        assert_eq!(
            idle("[ { status: 200, latency: 1500ms, body: abc, trickle: 2s } ]"),
            4_500
        );
        assert_eq!(
            idle("[ { p: 0.5, then: { status: 200 }, else: { status: 200, latency: 3s } } ]"),
            4_000
        );
    }
}
