//! The ways a scenario runs in this process: with a client written in Rust, or with its
//! built-in client, each judged by the one step every run takes
//! ([`judge`](crate::check::judge)).

use std::fmt::Debug;
use std::future::Future;

use super::plan::Plan;
use super::run;
use crate::env::Env;
use crate::report::{Report, RunEnd};
use crate::scenario::Scenario;

impl Scenario {
    /// Runs the scenario on the sim backend, calling `client` once per logical call, and
    /// judges the run against `expect:`.
    ///
    /// The seed is the scenario's `seed`, unless `RETRYLAB_SEED` overrides it. A scenario
    /// that cannot run (a feature it uses is not built yet), or a `RETRYLAB_SEED` that is not
    /// a seed, gives a report whose verdict `not_runnable` says why.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let scenario = Scenario::from_yaml_str(
    ///     "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///      operation: { endpoint: api }\nexpect: { attempts: 1 }\n",
    ///     "ok.yaml",
    /// ).unwrap();
    /// let report = scenario.run(|env| async move {
    ///     let response = env.http_client().request(env.operation().request()).await;
    ///     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
    /// });
    /// report.assert();
    /// ```
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run<F, Fut, T, E>(&self, client: F) -> Report
    where
        F: FnMut(Env) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        match self.effective_seed() {
            Ok(seed) => self.run_with_seed(seed, client),
            Err(e) => Report::not_run(
                self.name.clone(),
                self.seed,
                RunEnd::NotRunnable,
                e.to_string(),
            ),
        }
    }

    /// Like [`run`](Self::run), with an explicit seed.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_with_seed<F, Fut, T, E>(&self, seed: u64, client: F) -> Report
    where
        F: FnMut(Env) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        match Plan::from_scenario(self, seed) {
            Ok(plan) => {
                let judging = crate::check::Judging {
                    seed,
                    epoch_unix_ms: plan.epoch_unix_ms,
                    snapshots: true,
                };
                crate::check::judge(self, run(plan, client), &judging)
            }
            Err(errors) => Report::not_run(
                self.name.clone(),
                seed,
                RunEnd::NotRunnable,
                errors.to_string(),
            ),
        }
    }

    /// Runs the scenario with its built-in client (`client:`), once per call.
    ///
    /// `custom:` clients are registered in Rust; running one here gives a `not_runnable`
    /// verdict that says so.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_builtin(&self) -> Report {
        match self.effective_seed() {
            Ok(seed) => self.run_builtin_with_seed(seed),
            Err(e) => Report::not_run(
                self.name.clone(),
                self.seed,
                RunEnd::NotRunnable,
                e.to_string(),
            ),
        }
    }

    /// Like [`run_builtin`](Self::run_builtin), with an explicit seed.
    #[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
    pub fn run_builtin_with_seed(&self, seed: u64) -> Report {
        if let crate::scenario::ClientSpec::Command(command) = &self.client {
            return self.run_command(seed, command, None);
        }
        let policy = match self.client.policy() {
            Ok(policy) => policy,
            Err(why) => {
                // An invalid scenario gets every error loading it gives, as `run_with_seed`
                // does; only a valid one (a custom client) gets here for the policy alone.
                let error = match self.validate() {
                    Err(errors) => errors.to_string(),
                    Ok(()) => self.error_at("client", why.to_string()).to_string(),
                };
                return Report::not_run(self.name.clone(), seed, RunEnd::NotRunnable, error);
            }
        };
        // One reference client per client instance: a fleet's clients keep their policy
        // state (a retry quota, a rate estimate) apart, as separate processes would.
        let timeout = self.client.attempt_timeout().map(|t| t.as_duration());
        let shared = |policy| {
            let mut client = crate::client::ReferenceClient::new(policy);
            if let Some(timeout) = timeout {
                client = client.attempt_timeout(timeout);
            }
            client.shared()
        };
        let mut clients = vec![shared(policy)];
        for _ in 1..self.operation.clients.max(1) {
            // The same spec gave a policy just above.
            match self.client.policy() {
                Ok(policy) => clients.push(shared(policy)),
                Err(why) => {
                    let error = self.error_at("client", why.to_string()).to_string();
                    return Report::not_run(self.name.clone(), seed, RunEnd::NotRunnable, error);
                }
            }
        }
        self.run_with_seed(seed, move |env| {
            // The run makes exactly `operation.clients` instances, indexed from 0.
            let client = clients[env.client_index() as usize].clone();
            async move { crate::client::ReferenceClient::call_shared(&client, &env).await }
        })
    }

    /// The seed a run uses: `RETRYLAB_SEED` when set, else `seed:`. An error when
    /// `RETRYLAB_SEED` is set to something that is not a seed (see
    /// [`overrides`](crate::overrides)): a run with another seed than the one asked for
    /// would reproduce nothing.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nseed: 7\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// // Tests run with `RETRYLAB_SEED` unset.
    /// assert_eq!(s.effective_seed(), Ok(7));
    /// ```
    pub fn effective_seed(&self) -> Result<u64, crate::overrides::SeedOverrideError> {
        crate::overrides::seed().map(|over| over.unwrap_or(self.seed))
    }
}
