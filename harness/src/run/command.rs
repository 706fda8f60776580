//! A scenario run with a command client (`client: { command: [...] }`): the endpoints on
//! real sockets, then the program, once per call (`per: call`) or once for the run (`per:
//! run`, its calls read off its requests as a served run's are), each process filed in the
//! report with its exit and output, and the run judged by the one step every run takes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::calls::Formatted;
use super::plan::Plan;
use super::run;
use super::serve::Listening;
use crate::backend::Net;
use crate::client::command::{self, Launch, Ran};
use crate::env::Env;
use crate::report::{ProcessExit, ProcessOutput, ProcessRun, Report, RunEnd};
use crate::scenario::model::client::command::{Placeholder, placeholders};
use crate::scenario::{CommandClient, ProcessPer, Scenario};

/// How often a `per: run` process's requests are looked at, once it exited, for answers
/// still being written.
const SETTLE_POLL: Duration = Duration::from_millis(10);

/// How long answers still being written when a `per: run` process exits may take to end.
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// Who is told the endpoints' URLs once they listen (`retrylab serve` prints them).
pub(crate) type Announce = Box<dyn FnOnce(&[Listening]) + Send>;

/// The processes of a run, filed when each starts and completed when it ends: one the run
/// stopped while it ran keeps `ProcessExit::Stopped`.
#[derive(Clone, Default)]
struct Filed(Arc<Mutex<Vec<ProcessRun>>>);

impl Filed {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ProcessRun>> {
        // Records are only appended or completed in place: a poisoned lock holds them whole.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start(&self, record: ProcessRun) -> usize {
        let mut filed = self.lock();
        filed.push(record);
        filed.len() - 1
    }

    fn finish(&self, at: usize, end_ms: u64, requests: u64, ran: Ran) {
        if let Some(record) = self.lock().get_mut(at) {
            record.end_ms = end_ms;
            record.requests = requests;
            record.exit = ran.exit;
            record.left_children = ran.left_children;
            record.stdout = ran.stdout;
            record.stderr = ran.stderr;
        }
    }

    fn take(&self) -> Vec<ProcessRun> {
        std::mem::take(&mut *self.lock())
    }
}

impl Scenario {
    /// Runs the scenario with its command client `client` and `seed`, telling `announce` the
    /// endpoints' URLs once they listen.
    pub(crate) fn run_command(
        &self,
        seed: u64,
        client: &CommandClient,
        announce: Option<Announce>,
    ) -> Report {
        let mut plan = match Plan::from_scenario(self, seed) {
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
        let epoch = plan.epoch_unix_ms;
        let calls = plan.calls;
        let job = Job {
            client: client.clone(),
            cwd: client
                .cwd
                .as_ref()
                .map(|dir| self.source.dir().unwrap_or(Path::new("")).join(dir)),
            seed,
            calls,
            filed: Filed::default(),
        };
        let filed = job.filed.clone();
        let mut announce = announce;
        let mut report = match client.per {
            ProcessPer::Call => run(plan, move |env: Env| {
                let announce = announce.take();
                let job = job.clone();
                async move {
                    if let Some(announce) = announce {
                        announce(&listening(&env));
                    }
                    job.call(&env).await
                }
            }),
            ProcessPer::Run => {
                // One call of the harness's: the process, whose calls are read off its
                // requests.
                plan.served_calls = Some(calls);
                plan.calls = 1;
                plan.concurrency = 1;
                run(plan, move |env: Env| {
                    let announce = announce.take();
                    let job = job.clone();
                    async move {
                        if let Some(announce) = announce {
                            announce(&listening(&env));
                        }
                        let exited = job.call(&env).await;
                        settle(&env).await;
                        exited
                    }
                })
            }
        };
        report.processes = filed.take();
        let judging = crate::check::Judging {
            seed,
            epoch_unix_ms: epoch,
            snapshots: false,
        };
        crate::check::judge(self, report, &judging)
    }
}

/// What every process of a run shares.
#[derive(Clone)]
struct Job {
    client: CommandClient,
    cwd: Option<PathBuf>,
    seed: u64,
    calls: u32,
    filed: Filed,
}

impl Job {
    /// Runs one process for the call of `env` (or for every call, `per: run`), filed in the
    /// report; its exit status 0 is the call's success.
    async fn call(&self, env: &Env) -> Result<Formatted, Formatted> {
        let per_call = self.client.per == ProcessPer::Call;
        let launch = Launch {
            argv: self.argv(env),
            env: self.environment(env),
            cwd: self.cwd.clone(),
            stdin: env.operation().body.to_vec(),
            timeout: self.client.timeout.as_duration(),
        };
        let at = self.filed.start(ProcessRun {
            client: env.client_index(),
            call: per_call.then(|| env.call_index()),
            argv: launch.argv.clone(),
            cwd: self.cwd.as_ref().map(|dir| dir.display().to_string()),
            start_ms: env.clock().now_ms(),
            end_ms: env.clock().now_ms(),
            exit: ProcessExit::Stopped,
            requests: 0,
            left_children: false,
            stdout: ProcessOutput::default(),
            stderr: ProcessOutput::default(),
        });
        let before = requests(env);
        let ran = command::run(launch).await;
        let summary = summary(&ran);
        let success = ran.exit.success();
        self.filed
            .finish(at, env.clock().now_ms(), requests(env) - before, ran);
        if success {
            Ok(Formatted(summary))
        } else {
            Err(Formatted(summary))
        }
    }

    /// The command's arguments, placeholders expanded for the call of `env`.
    fn argv(&self, env: &Env) -> Vec<String> {
        let operation = env.operation();
        self.client
            .command
            .iter()
            .map(|arg| {
                // Validation read every placeholder when the scenario loaded.
                let parts =
                    placeholders(arg).unwrap_or_else(|_| vec![Placeholder::Text(arg.clone())]);
                parts
                    .into_iter()
                    .map(|part| match part {
                        Placeholder::Text(text) => text,
                        Placeholder::Url => operation.url.clone(),
                        Placeholder::EndpointUrl(name) => env.url(name),
                        Placeholder::Call => env.call_index().to_string(),
                        Placeholder::Seed => self.seed.to_string(),
                    })
                    .collect()
            })
            .collect()
    }

    /// The process's whole environment: what it inherits, the call's `RETRYLAB_*`, and the
    /// file's `env:` (which may not set `RETRYLAB_*`).
    fn environment(&self, env: &Env) -> Vec<(String, String)> {
        let operation = env.operation();
        let mut vars = command::inherited();
        vars.push(("RETRYLAB_URL".into(), operation.url.clone()));
        vars.push(("RETRYLAB_METHOD".into(), operation.method.to_string()));
        if let Net::Real(net) = env.net() {
            for (name, address) in net.addresses() {
                vars.push((
                    format!("RETRYLAB_URL_{}", variable_name(name)),
                    format!("http://{address}"),
                ));
            }
        }
        if self.client.per == ProcessPer::Call {
            vars.push(("RETRYLAB_CALL".into(), env.call_index().to_string()));
        }
        vars.push(("RETRYLAB_CALLS".into(), self.calls.to_string()));
        vars.push(("RETRYLAB_CLIENT".into(), env.client_index().to_string()));
        vars.push(("RETRYLAB_SEED".into(), self.seed.to_string()));
        if let Some((header, value)) = &operation.idempotency_key {
            vars.push(("RETRYLAB_IDEMPOTENCY_HEADER".into(), header.to_string()));
            vars.push((
                "RETRYLAB_IDEMPOTENCY_KEY".into(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ));
        }
        vars.extend(self.client.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        vars
    }
}

/// `api-v2` as the tail of a variable name: `API_V2`.
fn variable_name(endpoint: &str) -> String {
    endpoint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The endpoints' URLs on the run's sockets.
fn listening(env: &Env) -> Vec<Listening> {
    match env.net() {
        Net::Real(net) => net
            .addresses()
            .iter()
            .map(|(name, address)| Listening {
                name: name.clone(),
                url: format!("http://{address}"),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Requests the endpoints received so far.
fn requests(env: &Env) -> u64 {
    match env.net() {
        Net::Real(net) => net
            .endpoints()
            .iter()
            .map(|endpoint| endpoint.ledger().with(|l| l.requests.len() as u64))
            .sum(),
        _ => 0,
    }
}

/// Waits, a bounded time, for answers still being written when a `per: run` process exited:
/// its last call ends with its last answer.
async fn settle(env: &Env) {
    let Net::Real(net) = env.net() else {
        return;
    };
    let polls = SETTLE_LIMIT.as_millis() / SETTLE_POLL.as_millis();
    for _ in 0..polls {
        if net.endpoints().iter().all(|e| e.steps_in_progress() == 0) {
            return;
        }
        tokio::time::sleep(SETTLE_POLL).await;
    }
}

/// `exit 1: status 503`: how the process ended and the last line it printed.
fn summary(ran: &Ran) -> String {
    let last = ran
        .stdout
        .text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| line.chars().take(200).collect::<String>());
    match last {
        Some(line) => format!("{}: {line}", ran.exit),
        None => ran.exit.to_string(),
    }
}
