//! `Env`: what a client under test receives (DESIGN section 6).
//!
//! The run calls the user's closure once per logical call with an `Env`. Clones share one
//! client instance's state (its connection pool), which persists across that client's calls.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use retrylab_endpoints::VirtualClock;

use crate::connector::EnvConnector;
use crate::http_client::HttpClient;
use crate::recorder::Recorder;
use crate::rng::Stream;

/// The pinned configuration of `env.http_client()`, printed in the trace header.
pub const HTTP_CLIENT_CONFIG: &str =
    "hyper-util legacy client, pool_timer TokioTimer, pool idle timeout 90s, retry_canceled_requests on";

/// The pool idle timeout of `env.http_client()`.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The request a scenario's `operation:` describes, for one call.
///
/// ```
/// # use retrylab::Operation;
/// # fn demo(op: &Operation) {
/// let request = op.request(); // an http::Request<Full<Bytes>> ready to send
/// assert_eq!(request.uri(), &op.url.parse::<http::Uri>().unwrap());
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Operation {
    /// The endpoint's name.
    pub endpoint: String,
    /// Request method.
    pub method: Method,
    /// Full URL (`http://<endpoint><path>`).
    pub url: String,
    /// Path with query.
    pub path: String,
    /// Request headers, including the idempotency key when the scenario sets one.
    pub headers: HeaderMap,
    /// Request body.
    pub body: Bytes,
    /// The idempotency key of this call, when the scenario asks for one.
    pub idempotency_key: Option<(HeaderName, HeaderValue)>,
}

impl Operation {
    /// A fresh request for this operation (build one per attempt: bodies are consumed).
    pub fn request(&self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = self.method.clone();
        // The URL was validated when the scenario was planned; a bad one would have been a
        // located scenario error.
        *request.uri_mut() = parsed_url(&self.url);
        *request.headers_mut() = self.headers.clone();
        request
    }
}

thread_local! {
    /// The URL parsed last on this thread: a client sends the same operation over and over,
    /// and cloning a parsed `Uri` shares its bytes where parsing copies and validates them.
    static LAST_URL: std::cell::RefCell<Option<(String, http::Uri)>> =
        const { std::cell::RefCell::new(None) };
}

/// `url` parsed (the default URI if it does not parse, as `str::parse` would give).
fn parsed_url(url: &str) -> http::Uri {
    LAST_URL.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((text, uri)) = last.as_ref() {
            if text == url {
                return uri.clone();
            }
        }
        let uri: http::Uri = url.parse().unwrap_or_default();
        *last = Some((url.to_owned(), uri.clone()));
        uri
    })
}

/// One client instance's shared state.
pub(crate) struct ClientInstance {
    pub(crate) client_id: u32,
    pub(crate) seed: u64,
    pub(crate) recorder: Recorder,
    pub(crate) connector: EnvConnector,
    pub(crate) http: Client<EnvConnector, Full<Bytes>>,
    pub(crate) operation: Operation,
    pub(crate) key_header: Option<HeaderName>,
    pub(crate) dead_letter: Option<String>,
}

impl ClientInstance {
    pub(crate) fn new(
        client_id: u32,
        seed: u64,
        recorder: Recorder,
        connector: EnvConnector,
        operation: Operation,
        key_header: Option<HeaderName>,
        dead_letter: Option<String>,
    ) -> ClientInstance {
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
            operation,
            key_header,
            dead_letter,
        }
    }
}

/// What the client under test receives: URLs, an HTTP client and a connector on the simulated
/// network, the operation to perform, virtual clocks and seeded randomness.
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

    /// The base URL of an endpoint: `http://<name>` (no trailing slash).
    pub fn url(&self, endpoint: &str) -> String {
        let mut url = String::with_capacity(7 + endpoint.len());
        url.push_str("http://");
        url.push_str(endpoint);
        url
    }

    /// The harness's HTTP client: every request is an attempt in the trace. Clones and
    /// later calls share one connection pool per client instance.
    pub fn http_client(&self) -> HttpClient {
        HttpClient::new(
            self.instance.http.clone(),
            self.instance.recorder.clone(),
            self.instance.client_id,
            self.call_id,
        )
    }

    /// The simulated network as a `tower::Service<Uri>`, for a client built by the user
    /// (attempts are then reconstructed from what the endpoints and the network saw).
    pub fn connector(&self) -> EnvConnector {
        self.instance.connector.clone()
    }

    /// The scenario's operation for this call (with this call's idempotency key).
    pub fn operation(&self) -> Operation {
        let mut operation = self.instance.operation.clone();
        if let Some(name) = &self.instance.key_header {
            let value = idempotency_key(self.instance.client_id, self.call_id);
            operation.headers.insert(name.clone(), value.clone());
            operation.idempotency_key = Some((name.clone(), value));
        }
        operation
    }

    /// The URL where messages given up on go (`POST`), when the scenario has a
    /// `kind: dead_letter` endpoint: `http://<name>/dead-letters`.
    pub fn dead_letter_url(&self) -> Option<String> {
        let name = self.instance.dead_letter.as_ref()?;
        Some(format!(
            "{}{}",
            self.url(name),
            crate::plan::DEAD_LETTER_PATH
        ))
    }

    /// Which logical call this is (from 0).
    pub fn call_index(&self) -> u32 {
        self.call_id
    }

    /// Which client instance this is (from 0; more than one only in a fleet).
    pub fn client_index(&self) -> u32 {
        self.instance.client_id
    }

    /// The virtual wall clock: the scenario's `epoch` plus the virtual time elapsed.
    pub fn now_system(&self) -> SystemTime {
        self.clock().now_system()
    }

    /// A `std::time::Instant` clock on virtual time, for crates that take a clock (see
    /// [`clocks`](crate::clocks)).
    pub fn std_clock(&self) -> crate::clocks::VirtualStdClock {
        crate::clocks::VirtualStdClock
    }

    /// The virtual clock of the run.
    pub fn clock(&self) -> &VirtualClock {
        self.instance.recorder.clock()
    }

    /// The run's seed (the scenario's `seed`, or `RETRYLAB_SEED`).
    pub fn seed_value(&self) -> u64 {
        self.instance.seed
    }

    /// A seed for the user's own randomness, from the scenario seed and `label`: the same
    /// label gives the same value in every run of the same scenario and seed.
    pub fn seed(&self, label: &str) -> u64 {
        let mut full = String::with_capacity(4 + label.len());
        full.push_str("env/");
        full.push_str(label);
        Stream::new(self.instance.seed, &full).next_u64()
    }
}

/// The idempotency key of a call: stable, readable, unique per client and call.
fn idempotency_key(client_id: u32, call_id: u32) -> HeaderValue {
    let text = if client_id == 0 {
        format!("key-{call_id}")
    } else {
        format!("key-{client_id}-{call_id}")
    };
    // Digits, letters and '-' are always a valid header value.
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("key"))
}

/// The call an idempotency key from [`idempotency_key`] belongs to (`key-3` is call 3 of
/// client 0); `None` for keys the harness did not hand out.
pub(crate) fn call_of_key(key: &str) -> Option<u32> {
    let rest = key.strip_prefix("key-")?;
    // `key-<client>-<call>` in a fleet, `key-<call>` otherwise.
    let call = rest.rsplit('-').next()?;
    call.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_call() {
        for (client, call) in [(0, 0), (0, 7), (2, 5)] {
            let key = idempotency_key(client, call);
            assert_eq!(call_of_key(key.to_str().unwrap_or_default()), Some(call));
        }
        assert_eq!(call_of_key("user-chosen"), None);
    }
}
