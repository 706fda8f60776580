//! `Env`: what a client under test receives (docs/architecture.md#plugging-a-client-in).
//!
//! The run calls the user's closure once per logical call with an `Env`. Clones share one
//! client instance's state (its connection pool), which persists across that client's calls.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::HeaderName;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use retrylab_endpoints::{VirtualClock, wire};

mod attempt;
mod clocks;
mod connector;
mod http_client;
mod operation;
mod polled;
#[cfg(feature = "tonic")]
mod tonic_channel;

pub use attempt::{AttemptError, attempt, attempt_with};
pub use clocks::VirtualStdClock;
pub use connector::{Connecting, EnvConnector};
pub use http_client::{AttemptBody, Error as HttpError, HttpClient};
pub use operation::Operation;
pub(crate) use polled::polled;
#[cfg(feature = "aws")]
pub(crate) use polled::polled_call;

use crate::backend::Net;
use crate::rng::Stream;
use crate::trace::record::Recorder;

/// The pinned configuration of `env.http_client()`, printed in the trace header.
pub const HTTP_CLIENT_CONFIG: &str = "hyper-util legacy client, pool_timer TokioTimer, pool idle timeout 90s, retry_canceled_requests on";

/// The pinned configuration of `env.http2_client()`: `env.http_client()`'s, speaking HTTP/2
/// only. Printed in the trace header of a scenario with an endpoint that speaks HTTP/2.
pub const HTTP2_CLIENT_CONFIG: &str = "hyper-util legacy client, http2_only (h2c, prior knowledge), pool_timer TokioTimer, pool idle timeout 90s, retry_canceled_requests on, h2 settings default, no keep-alive pings";

/// The trace header's lines for HTTP/2, for a run with `endpoints`: none when every one
/// speaks HTTP/1.1 only, so such a trace reads as it always has. An endpoint that sets
/// `max_concurrent_streams` is named after the server's line, with its setting.
pub(crate) fn http2_header<'a>(
    endpoints: impl Iterator<Item = &'a retrylab_endpoints::EndpointConfig> + Clone,
) -> Vec<(String, String)> {
    if endpoints.clone().all(|e| e.protocol.is_http1()) {
        return Vec::new();
    }
    let mut server = "h2 server, h2c with prior knowledge, h2 settings default".to_owned();
    for endpoint in endpoints {
        if let Some(max) = endpoint.max_concurrent_streams {
            let _ = write!(server, "; {}: max_concurrent_streams {max}", endpoint.name);
        }
    }
    vec![
        ("client_http2".to_owned(), HTTP2_CLIENT_CONFIG.to_owned()),
        ("server_http2".to_owned(), server),
    ]
}

/// The pool idle timeout of `env.http_client()`.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// One client instance's shared state.
pub(crate) struct ClientInstance {
    pub(crate) client_id: u32,
    pub(crate) seed: u64,
    pub(crate) recorder: Recorder,
    pub(crate) connector: EnvConnector,
    pub(crate) http: Client<EnvConnector, Full<Bytes>>,
    /// `env.http2_client()`'s pool, made on first use: most runs speak HTTP/1 only, and a
    /// fleet makes an instance per client.
    pub(crate) http2: OnceLock<Client<EnvConnector, Full<Bytes>>>,
    pub(crate) operation: Operation,
    pub(crate) key_header: Option<HeaderName>,
    pub(crate) dead_letter: Option<String>,
    /// The run's network, which knows the endpoints' URLs.
    pub(crate) net: Net,
}

impl ClientInstance {
    pub(crate) fn new(
        net: Net,
        client_id: u32,
        seed: u64,
        recorder: Recorder,
        operation: Operation,
        key_header: Option<HeaderName>,
        dead_letter: Option<String>,
    ) -> ClientInstance {
        let connector = EnvConnector::new(net.connector(), recorder.clone(), client_id);
        let http = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .retry_canceled_requests(true)
            .build(connector.clone());
        ClientInstance {
            client_id,
            seed,
            recorder,
            connector,
            http,
            http2: OnceLock::new(),
            operation,
            key_header,
            dead_letter,
            net,
        }
    }
}

/// What the client under test receives: URLs, an HTTP client and a connector on the simulated
/// network, the operation to perform, virtual clocks and seeded randomness. `Send` and `Sync`,
/// and cheap to clone: move it into a task the client spawns.
///
/// ```
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
///
/// let scenario = Scenario::builder("env tour")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(200)]))
///     .operation(OperationSpec::post("api", "/orders"))
///     .build()
///     .unwrap();
/// scenario.run(|env| async move {
///     assert_eq!(env.url("api"), "http://api");
///     assert_eq!(env.operation().url, "http://api/orders");
///     assert_eq!(env.call_index(), 0);
///     assert_eq!(env.seed("jitter"), env.seed("jitter"));
///     Ok::<_, String>(())
/// });
/// ```
#[derive(Clone)]
pub struct Env {
    instance: Arc<ClientInstance>,
    call_id: u32,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("client", &self.instance.client_id)
            .field("call", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl Env {
    pub(crate) fn new(instance: Arc<ClientInstance>, call_id: u32) -> Env {
        Env { instance, call_id }
    }

    /// The base URL of an endpoint (no trailing slash): `http://<name>` on the sim network,
    /// and on the real backend the address it listens on, `http://127.0.0.1:<port>`, which
    /// any client with its own network stack can reach.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # use retrylab::trace::CallResult;
    /// let scenario = Scenario::builder("url")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move { Ok::<_, String>(env.url("api")) });
    ///
    /// let url = &report.trace().calls[0].result;
    /// assert_eq!(url, &CallResult::Success(r#""http://api""#.into()));
    /// ```
    pub fn url(&self, endpoint: &str) -> String {
        self.instance.net.base_url(endpoint)
    }

    /// The run's network.
    pub(crate) fn net(&self) -> &Net {
        &self.instance.net
    }

    /// Where the run happens: on `real`, endpoints listen on real sockets (`url` names the
    /// address) and time is real, so a client with its own network stack can be pointed at
    /// them.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// use retrylab::scenario::BackendKind;
    ///
    /// let scenario = Scenario::builder("where")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    /// scenario.run(|env: Env| async move {
    ///     assert_eq!(env.backend(), BackendKind::Sim);
    ///     Ok::<_, String>(())
    /// });
    /// ```
    pub fn backend(&self) -> crate::scenario::BackendKind {
        self.instance.net.kind()
    }

    /// The harness's HTTP client: every request is an attempt in the trace. Clones and
    /// later calls share one connection pool per client instance.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// use http_body_util::BodyExt;
    ///
    /// let scenario = Scenario::builder("two 503s, then 200")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     let client = env.http_client();
    ///     loop {
    ///         let response = client.request(env.operation().request()).await.map_err(|e| e.to_string())?;
    ///         let status = response.status().as_u16();
    ///         response.into_body().collect().await.map_err(|e| e.to_string())?; // ends the attempt
    ///         if status < 500 {
    ///             return Ok::<_, String>(status);
    ///         }
    ///     }
    /// });
    ///
    /// assert_eq!(report.trace().attempts.len(), 3);
    /// ```
    pub fn http_client(&self) -> HttpClient {
        HttpClient::new(
            self.instance.http.clone(),
            self.instance.connector.clone(),
            self.instance.recorder.clone(),
            self.instance.client_id,
            self.call_id,
        )
    }

    /// The harness's HTTP/2 client: [`http_client`](Env::http_client) speaking HTTP/2 only
    /// (h2c with prior knowledge, as an endpoint with `protocol: http2` or `auto` answers),
    /// with the same pool settings ([`HTTP2_CLIENT_CONFIG`]). Every request is an attempt in
    /// the trace, on a stream of its own (the trace shows `stream 1`, `stream 3`, ...);
    /// requests made at once share one connection. Clones and later calls share one pool
    /// per client instance, apart from `http_client()`'s.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// use http_body_util::BodyExt;
    /// use retrylab::scenario::Protocol;
    ///
    /// let scenario = Scenario::builder("h2: 503, then 200")
    ///     .endpoint("api", endpoint().protocol(Protocol::Http2).script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     let client = env.http2_client();
    ///     loop {
    ///         let response = client.request(env.operation().request()).await.map_err(|e| e.to_string())?;
    ///         let status = response.status().as_u16();
    ///         response.into_body().collect().await.map_err(|e| e.to_string())?;
    ///         if status < 500 {
    ///             return Ok::<_, String>(status);
    ///         }
    ///     }
    /// });
    ///
    /// let streams: Vec<_> = report.trace().attempts.iter().map(|a| a.stream_id).collect();
    /// assert_eq!(streams, [Some(1), Some(3)]); // one connection, a stream per attempt
    /// ```
    pub fn http2_client(&self) -> HttpClient {
        let instance = &self.instance;
        let inner = instance.http2.get_or_init(|| {
            Client::builder(TokioExecutor::new())
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(POOL_IDLE_TIMEOUT)
                .retry_canceled_requests(true)
                .http2_only(true)
                .timer(TokioTimer::new())
                .build(instance.connector.clone())
        });
        HttpClient::new(
            inner.clone(),
            instance.connector.clone(),
            instance.recorder.clone(),
            instance.client_id,
            self.call_id,
        )
    }

    /// The client the built-in reference client sends the operation with: HTTP/1.1, unless
    /// the operation's endpoint speaks HTTP/2 only (an `auto` endpoint is asked in
    /// HTTP/1.1, as a client that knows nothing of the server would).
    pub(crate) fn operation_client(&self) -> HttpClient {
        match self.instance.operation.protocol {
            retrylab_endpoints::Protocol::Http2 => self.http2_client(),
            _ => self.http_client(),
        }
    }

    /// The simulated network as a `tower::Service<Uri>`, for a client built by the user
    /// (attempts are then reconstructed from what the endpoints and the network saw).
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// use bytes::Bytes;
    /// use http_body_util::{BodyExt, Full};
    /// use hyper_util::client::legacy::Client;
    /// use hyper_util::rt::{TokioExecutor, TokioTimer};
    ///
    /// let scenario = Scenario::builder("own hyper client")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
    ///         .pool_timer(TokioTimer::new())
    ///         .build(env.connector());
    ///     let response = client.request(env.operation().request()).await.map_err(|e| e.to_string())?;
    ///     let status = response.status().as_u16();
    ///     response.into_body().collect().await.map_err(|e| e.to_string())?;
    ///     Ok::<_, String>(status)
    /// });
    ///
    /// assert_eq!(report.trace().attempts.len(), 1);
    /// ```
    pub fn connector(&self) -> EnvConnector {
        self.instance.connector.clone()
    }

    /// The scenario's operation for this call (with this call's idempotency key).
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # use retrylab::trace::CallResult;
    /// let scenario = Scenario::builder("operation")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(post("api", "/orders"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     let operation = env.operation();
    ///     Ok::<_, String>(format!("{} {}", operation.method, operation.url))
    /// });
    ///
    /// let described = &report.trace().calls[0].result;
    /// assert_eq!(described, &CallResult::Success(r#""POST http://api/orders""#.into()));
    /// ```
    pub fn operation(&self) -> Operation {
        let mut operation = self.instance.operation.clone();
        if let Some(name) = &self.instance.key_header {
            let value = wire::idempotency_key(self.instance.client_id, self.call_id);
            operation.headers.insert(name.clone(), value.clone());
            operation.idempotency_key = Some((name.clone(), value));
        }
        operation
    }

    /// The URL where messages given up on go (`POST`), when the scenario has a
    /// `kind: dead_letter` endpoint: `http://<name>/dead-letters`.
    pub fn dead_letter_url(&self) -> Option<String> {
        let name = self.instance.dead_letter.as_ref()?;
        Some(format!("{}{}", self.url(name), wire::DEAD_LETTER_PATH))
    }

    /// Which logical call this is (from 0).
    ///
    /// ```
    /// # use retrylab::Scenario;
    /// # use retrylab::trace::CallResult;
    /// let yaml = "version: 1\nname: three calls\nendpoints: { api: {} }\n\
    ///             operation: { endpoint: api, calls: 3 }\nexpect: { requests_received: 0 }\n";
    /// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    ///
    /// let report = scenario.run(|env| async move { Ok::<_, ()>(env.call_index()) });
    ///
    /// let indexes: Vec<_> = report.trace().calls.iter().map(|c| c.result.clone()).collect();
    /// assert_eq!(indexes, ["0", "1", "2"].map(|i| CallResult::Success(i.into())));
    /// ```
    pub fn call_index(&self) -> u32 {
        self.call_id
    }

    /// Which client instance this is (from 0; more than one only in a fleet).
    pub fn client_index(&self) -> u32 {
        self.instance.client_id
    }

    /// The virtual wall clock: the scenario's `epoch` plus the virtual time elapsed.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # use retrylab::trace::CallResult;
    /// let scenario = Scenario::builder("wall clock")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/"))
    ///     .epoch("2026-03-01T12:00:00Z")
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     tokio::time::sleep(std::time::Duration::from_secs(90)).await; // virtual: instant
    ///     Ok::<_, ()>(httpdate::fmt_http_date(env.now_system()))
    /// });
    ///
    /// let date = &report.trace().calls[0].result;
    /// assert_eq!(date, &CallResult::Success(r#""Sun, 01 Mar 2026 12:01:30 GMT""#.into()));
    /// ```
    pub fn now_system(&self) -> SystemTime {
        self.clock().now_system()
    }

    /// A `std::time::Instant` clock on virtual time, for crates that take a clock (see
    /// [`VirtualStdClock`]).
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # use retrylab::trace::CallResult;
    /// # let scenario = Scenario::builder("clock")
    /// #     .endpoint("api", endpoint().script([status(200)]))
    /// #     .operation(get("api", "/"))
    /// #     .build()
    /// #     .unwrap();
    /// let report = scenario.run(|env: Env| async move {
    ///     let clock = env.std_clock();
    ///     let before = clock.now();
    ///     tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    ///     Ok::<_, ()>(clock.now() - before)
    /// });
    ///
    /// assert_eq!(report.trace().calls[0].result, CallResult::Success("3600s".into()));
    /// ```
    pub fn std_clock(&self) -> VirtualStdClock {
        VirtualStdClock
    }

    /// The virtual clock of the run.
    pub fn clock(&self) -> &VirtualClock {
        self.instance.recorder.clock()
    }

    /// The run's seed (the scenario's `seed`, or `RETRYLAB_SEED`).
    pub fn seed_value(&self) -> u64 {
        self.instance.seed
    }

    /// A per-run seed for the user's own randomness, from the run's seed and `label`: the
    /// same label gives the same value in every call of the run, and in every run of the same
    /// scenario and seed. In a fleet each client gets its own value (client 0 the one a run of
    /// a single client gets).
    ///
    /// Seed a generator that lives as long as the client (made once, drawn from by every
    /// call) with it. A generator made afresh in each call and seeded with `seed` would give
    /// every call the same numbers, so every call would sleep the same jittered delays: seed
    /// such a generator with [`Env::call_seed`].
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # let scenario = Scenario::builder("seeds")
    /// #     .endpoint("api", endpoint().script([status(200)]))
    /// #     .operation(get("api", "/"))
    /// #     .build()
    /// #     .unwrap();
    /// let jitter_seed = |seed| {
    ///     let report = scenario.run_with_seed(seed, |env: Env| async move { Ok::<_, ()>(env.seed("jitter")) });
    ///     report.trace().calls[0].result.clone()
    /// };
    ///
    /// assert_eq!(jitter_seed(7), jitter_seed(7));
    /// assert_ne!(jitter_seed(7), jitter_seed(8));
    /// ```
    pub fn seed(&self, label: &str) -> u64 {
        // Each client of a fleet has streams of its own; the first keeps the labels a run
        // of one client has, so adding clients never changes its numbers.
        let full = match self.instance.client_id {
            0 => format!("env/{label}"),
            client => format!("env-client/{client}/{label}"),
        };
        Stream::new(self.instance.seed, &full).next_u64()
    }

    /// A per-call seed for the user's own randomness, from the run's seed, `label`, the
    /// client instance and the call: it differs from call to call (and from client to
    /// client), and a given call gets the same value in every run of the same scenario and
    /// seed.
    ///
    /// Use it for a generator made afresh in each call, as a retry crate's builder often is
    /// (backon's `with_jitter_seed`, tower's backoff `Rng`): each call then draws its own
    /// jitter, as separate processes would. [`Env::seed`] is the per-run seed, the same in
    /// every call, for a generator that lives across calls.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("three calls")
    ///     .endpoint("api", endpoint().script([status(200)]))
    ///     .operation(get("api", "/").calls(3))
    ///     .build()
    ///     .unwrap();
    /// let values = |seed, per_call: bool| {
    ///     let report = scenario.run_with_seed(seed, move |env: Env| async move {
    ///         Ok::<_, ()>(if per_call { env.call_seed("jitter") } else { env.seed("jitter") })
    ///     });
    ///     report.trace().calls.iter().map(|c| c.result.clone()).collect::<Vec<_>>()
    /// };
    ///
    /// let per_run = values(7, false);
    /// assert!(per_run.iter().all(|value| *value == per_run[0])); // the same in every call
    /// let per_call = values(7, true);
    /// assert!(per_call[0] != per_call[1] && per_call[1] != per_call[2] && per_call[0] != per_call[2]);
    /// assert_eq!(values(7, true), per_call); // and the same again in every run of seed 7
    /// assert_ne!(values(8, true), per_call);
    /// ```
    pub fn call_seed(&self, label: &str) -> u64 {
        // Its own prefix, so that no label given to `seed` reaches the same stream.
        let full = format!(
            "env-call/{}/{}/{label}",
            self.instance.client_id, self.call_id
        );
        Stream::new(self.instance.seed, &full).next_u64()
    }
}
