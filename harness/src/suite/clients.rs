//! The registry of clients a scenario suite runs: Rust clients a scenario names with
//! `client: { custom: <name> }`, programs registered under a name, and names this build
//! cannot run (and why).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use crate::client::command::Unusable;
use crate::run::Formatted;
use crate::scenario::{ClientSpec, CommandClient, Scenario, ScenarioError};
use crate::{Env, Report};

pub(super) type BoxedCall = Pin<Box<dyn Future<Output = Result<Formatted, Formatted>>>>;

pub(super) type ClientFn = Arc<dyn Fn(Env) -> BoxedCall + Send + Sync>;

/// What a name in the registry stands for.
#[derive(Clone)]
enum Registered {
    Client(ClientFn),
    /// A program, run as `client: { command: ... }` runs it.
    Command(CommandClient),
    /// A client this build cannot run (its crate is behind a feature that is off), and why.
    Unavailable(String),
}

/// What a name of the registry gives a run.
enum Found {
    Client(ClientFn),
    Command(CommandClient),
}

/// `scenario` with the program registered as `name` as its client, on the real backend it
/// needs, checked again: what the file asks of its backend may not hold on real sockets.
fn with_command(
    scenario: &Scenario,
    name: &str,
    command: CommandClient,
) -> Result<Scenario, Box<ScenarioError>> {
    let mut ran = scenario.clone();
    ran.client = ClientSpec::Command(command);
    ran.backend = crate::scenario::BackendKind::Real;
    match ran.validate() {
        Ok(()) => Ok(ran),
        Err(errors) => Err(Box::new(scenario.error_at(
            "client.custom",
            format!("the client `{name}` is a registered command, which runs on real sockets, where the scenario cannot run: {errors}"),
        ))),
    }
}

/// Clients written in Rust that scenarios name with `client: { custom: <name> }`. `Send` and
/// `Sync`: one registry serves every test thread.
///
/// ```
/// use retrylab::suite::Clients;
///
/// let clients = Clients::new().register("orders", |env| async move {
///     let response = env.http_client().request(env.operation().request()).await;
///     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
/// });
/// assert_eq!(clients.names(), ["orders"]);
/// ```
#[derive(Clone, Default)]
pub struct Clients {
    by_name: BTreeMap<String, Registered>,
    /// The client every scenario runs with instead of its own, when one is set.
    instead: Option<ClientSpec>,
}

impl std::fmt::Debug for Clients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.keys()).finish()
    }
}

impl Clients {
    /// An empty registry.
    ///
    /// ```
    /// use retrylab::suite::Clients;
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: orders\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///             operation: { endpoint: api, path: /orders }\nclient: { custom: orders }\n\
    ///             expect: { outcome: success, attempts: 1 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    ///
    /// let error = Clients::new().run(&scenario, 0).unwrap_err();
    ///
    /// assert!(error.to_string().contains("no client named `orders` is registered"), "{error}");
    /// ```
    pub fn new() -> Clients {
        Clients::default()
    }

    /// Registers `client` under `name`: it is called once per logical call, like the
    /// closure given to [`Scenario::run`]. A name registered again (here or with
    /// [`unavailable`](Self::unavailable)) keeps its last registration.
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use retrylab::{Clients, Env};
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: orders\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///             operation: { endpoint: api, path: /orders }\nclient: { custom: orders }\n\
    ///             expect: { outcome: success, attempts: 1 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// let clients = Clients::new().register("orders", |env: Env| async move {
    ///     let response = env.http_client().request(env.operation().request()).await.map_err(|e| e.to_string())?;
    ///     let status = response.status().as_u16();
    ///     response.into_body().collect().await.map_err(|e| e.to_string())?;
    ///     Ok::<_, String>(status)
    /// });
    ///
    /// let report = clients.run(&scenario, scenario.seed).unwrap();
    ///
    /// assert!(report.passed(), "{}", report.summary());
    /// assert_eq!(report.trace().attempts.len(), 1);
    /// ```
    pub fn register<F, Fut, T, E>(mut self, name: &str, client: F) -> Clients
    where
        F: Fn(Env) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        let client = Arc::new(client);
        let boxed: ClientFn = Arc::new(move |env| {
            let future = client(env);
            Box::pin(async move {
                match future.await {
                    Ok(value) => Ok(Formatted(format!("{value:?}"))),
                    Err(error) => Err(Formatted(format!("{error:?}"))),
                }
            })
        });
        self.by_name
            .insert(name.to_owned(), Registered::Client(boxed));
        self
    }

    /// Registers `name` as a client this build cannot run, and why: typically a client whose
    /// crate is behind a cargo feature that is off. The suite lists the scenarios naming it
    /// as ignored and prints `reason` once, instead of failing them (the client is not
    /// broken) or passing them (nothing was judged). `--include-ignored` runs them, and they
    /// fail with `reason`. A name registered again keeps its last registration.
    ///
    /// ```
    /// use retrylab::suite::Clients;
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: orders\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///             operation: { endpoint: api, path: /orders }\nclient: { custom: orders }\n\
    ///             expect: { outcome: success, attempts: 1 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// let clients = Clients::new().unavailable("orders", "needs feature `orders`");
    ///
    /// let error = clients.run(&scenario, 0).unwrap_err();
    ///
    /// assert!(error.to_string().contains("needs feature `orders`"), "{error}");
    /// assert_eq!(clients.unavailable_reason("orders"), Some("needs feature `orders`"));
    /// ```
    pub fn unavailable(mut self, name: &str, reason: impl Into<String>) -> Clients {
        self.by_name
            .insert(name.to_owned(), Registered::Unavailable(reason.into()));
        self
    }

    /// Why `name` cannot run in this build, when it was registered with
    /// [`unavailable`](Self::unavailable).
    pub fn unavailable_reason(&self, name: &str) -> Option<&str> {
        match self.by_name.get(name)? {
            Registered::Unavailable(reason) => Some(reason),
            Registered::Client(_) | Registered::Command(_) => None,
        }
    }

    /// The registered names, sorted (those registered as [`unavailable`](Self::unavailable)
    /// too).
    pub fn names(&self) -> Vec<&str> {
        self.by_name.keys().map(String::as_str).collect()
    }

    /// Runs `scenario` with `seed`: its `custom:` client from this registry, or its built-in
    /// policy client.
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// let scenario = Scenario::builder("built-in client")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = Clients::new().run(&scenario, 7).unwrap(); // no `custom:` client needed
    ///
    /// assert_eq!(report.seed(), 7);
    /// assert_eq!(report.trace().attempts.len(), 3);
    /// ```
    pub fn run(&self, scenario: &Scenario, seed: u64) -> Result<Report, Box<ScenarioError>> {
        let scenario = &*self.effective(scenario)?;
        match &scenario.client {
            ClientSpec::Custom(name) => match self.lookup(scenario, name)? {
                Found::Client(client) => Ok(scenario.run_with_seed(seed, move |env| client(env))),
                Found::Command(command) => {
                    let scenario = with_command(scenario, name, command)?;
                    Ok(scenario.run_builtin_with_seed(seed))
                }
            },
            _ => Ok(scenario.run_builtin_with_seed(seed)),
        }
    }

    /// Runs every scenario with `client` instead of the client its file names, as `retrylab
    /// run --client` does: a suite of fault files against one program
    /// (`ClientSpec::Command`, which runs each file on real sockets), or one policy. Each
    /// scenario is checked again with it; one it cannot run with fails with the located
    /// errors.
    ///
    /// ```
    /// use retrylab::scenario::{ClientSpec, CommandClient};
    /// use retrylab::suite::Clients;
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: burst\nendpoints: { api: { script: [ { status: 503 }, { status: 200 } ] } }\n\
    ///             operation: { endpoint: api }\nexpect: { outcome: success, attempts: 2 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "burst.yaml").unwrap();
    /// let curl = CommandClient::new(["curl", "-sf", "--retry", "1", "--retry-delay", "0", "-o", "/dev/null", "{url}"]);
    /// let clients = Clients::new().for_every_scenario(ClientSpec::Command(curl));
    ///
    /// # if clients.unavailable_here(&scenario).is_none() {
    /// let report = clients.run(&scenario, 0).unwrap();
    /// assert!(report.passed(), "{}", report.summary());
    /// assert_eq!(report.processes().len(), 1);
    /// # }
    /// ```
    pub fn for_every_scenario(mut self, client: ClientSpec) -> Clients {
        self.instead = Some(client);
        self
    }

    /// `scenario` with the client of [`for_every_scenario`](Self::for_every_scenario) when
    /// one is set, checked again.
    fn effective<'a>(
        &self,
        scenario: &'a Scenario,
    ) -> Result<std::borrow::Cow<'a, Scenario>, Box<ScenarioError>> {
        let Some(client) = &self.instead else {
            return Ok(std::borrow::Cow::Borrowed(scenario));
        };
        let mut ran = scenario.clone();
        ran.client = client.clone();
        if scenario.locate("backend").is_none() {
            ran.imply_backend();
        }
        match ran.validate() {
            Ok(()) => Ok(std::borrow::Cow::Owned(ran)),
            Err(errors) => Err(Box::new(scenario.error_at(
                "client",
                format!(
                    "the suite runs every scenario with the client `{}`, which this scenario \
                     cannot run with: {errors}",
                    client.name()
                ),
            ))),
        }
    }

    /// Registers the program `command` under `name`: a scenario naming it with `client: {
    /// custom: <name> }` runs it as if the file said `client: { command: ... }` (on real
    /// sockets), so that one suite runs a folder of scenarios against one program. A name
    /// registered again keeps its last registration.
    ///
    /// ```
    /// use retrylab::scenario::CommandClient;
    /// use retrylab::suite::Clients;
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: orders\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///             operation: { endpoint: api, path: /orders }\nclient: { custom: curl }\n\
    ///             expect: { outcome: success, attempts: 1 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// let curl = CommandClient::new(["curl", "-sf", "-o", "/dev/null", "{url}"]);
    /// let clients = Clients::new().command("curl", curl);
    ///
    /// let report = clients.run(&scenario, 0).unwrap();
    ///
    /// # if clients.unavailable_here(&scenario).is_none() {
    /// assert!(report.passed(), "{}", report.summary());
    /// assert_eq!(report.processes()[0].argv[0], "curl");
    /// # }
    /// ```
    pub fn command(mut self, name: &str, command: CommandClient) -> Clients {
        self.by_name
            .insert(name.to_owned(), Registered::Command(command));
        self
    }

    /// Why `scenario`'s client cannot run on this machine, if it cannot: a name registered
    /// as [`unavailable`](Self::unavailable), or a command whose program is a name found
    /// nowhere on `PATH` (a tool this machine lacks). The suite lists such scenarios as
    /// ignored, with this reason; `retrylab run` skips them, saying it. A program given as a
    /// path is never a reason to skip: a missing file of the project's is a failure.
    ///
    /// ```
    /// use retrylab::suite::Clients;
    /// # use retrylab::Scenario;
    /// let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
    ///             client: { command: [no-such-tool-anywhere, '{url}'] }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    ///
    /// let why = Clients::new().unavailable_here(&scenario).unwrap();
    ///
    /// assert!(why.contains("`no-such-tool-anywhere` is not on this machine"), "{why}");
    /// ```
    pub fn unavailable_here(&self, scenario: &Scenario) -> Option<String> {
        let client = self.instead.as_ref().unwrap_or(&scenario.client);
        let command = match client {
            ClientSpec::Custom(name) => match self.by_name.get(name)? {
                Registered::Unavailable(reason) => return Some(reason.clone()),
                Registered::Client(_) => return None,
                Registered::Command(command) => command,
            },
            ClientSpec::Command(command) => command,
            _ => return None,
        };
        let path = std::env::var("PATH").ok();
        match crate::client::command::resolve(command.program(), Path::new("."), path.as_deref()) {
            // What is missing, then how to go on: the tool installed, or the file run with
            // a client this machine has.
            Err(Unusable::NotOnPath(why)) => Some(format!(
                "{why}; install `{}` (or put its directory on PATH) to run it, or run the \
                 file with another client (`retrylab run --client <policy>`)",
                command.program()
            )),
            _ => None,
        }
    }

    /// The registered client `name` that `scenario` asks for, or the located error saying
    /// why it cannot run.
    fn lookup(&self, scenario: &Scenario, name: &str) -> Result<Found, Box<ScenarioError>> {
        match self.by_name.get(name) {
            Some(Registered::Client(client)) => Ok(Found::Client(client.clone())),
            Some(Registered::Command(command)) => Ok(Found::Command(command.clone())),
            Some(Registered::Unavailable(reason)) => Err(Box::new(scenario.error_at(
                "client.custom",
                format!("the client `{name}` cannot run in this build: {reason}"),
            ))),
            None => Err(Box::new(scenario.error_at(
                "client.custom",
                format!(
                    "no client named `{name}` is registered (registered: {}): register it in \
                     the suite's `scenario_main!` with `Clients::new().register(\"{name}\", \
                     ...)`, or name a registered client",
                    if self.by_name.is_empty() {
                        "none".to_owned()
                    } else {
                        self.names().join(", ")
                    }
                ),
            ))),
        }
    }

    /// The client of each case of `scenario`'s search: its `custom:` client from this
    /// registry, or a reference client of its `client:` policy made for each call (a case is
    /// a run of its own, so no state is carried from one case to the next).
    #[cfg(feature = "search")]
    pub(super) fn search_client(
        &self,
        scenario: &Scenario,
    ) -> Result<ClientFn, Box<ScenarioError>> {
        let refused = |path: &str| {
            Box::new(scenario.error_at(
                path,
                "a search runs its cases on the sim network, and a command client runs on \
                 real sockets: search with a Rust client, or run the file with `retrylab run`",
            ))
        };
        match &scenario.client {
            ClientSpec::Custom(name) => {
                return match self.lookup(scenario, name)? {
                    Found::Client(client) => Ok(client),
                    Found::Command(_) => Err(refused("client.custom")),
                };
            }
            ClientSpec::Command(_) => return Err(refused("client.command")),
            _ => {}
        }
        let client = crate::search::reference_client(&scenario.client);
        Ok(Arc::new(move |env| {
            let call = client(env);
            Box::pin(async move {
                match call.await {
                    Ok(value) => Ok(Formatted(format!("{value:?}"))),
                    Err(error) => Err(Formatted(format!("{error:?}"))),
                }
            })
        }))
    }
}
