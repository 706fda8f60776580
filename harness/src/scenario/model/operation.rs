//! The operation: the request each logical call makes, and how many calls there are.

use serde::{Deserialize, Serialize};

use super::headers::HeadersSpec;
use super::latency::LatencySpec;

/// What each logical call sends, to which endpoint, and how many calls run.
///
/// ```
/// use retrylab::scenario::OperationSpec;
///
/// let op = OperationSpec::post("api", "/orders")
///     .body(r#"{"sku":"A1"}"#)
///     .idempotency_key("Idempotency-Key")
///     .calls(3);
/// assert_eq!((op.method.as_str(), op.calls), ("POST", 3));
/// assert_eq!(OperationSpec::get("api", "/").concurrency, 1);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OperationSpec {
    /// The endpoint called; must name one of `endpoints`.
    pub endpoint: String,
    /// Request method (default `GET`).
    #[serde(default = "default_method", skip_serializing_if = "is_default_method")]
    pub method: String,
    /// Request path (default `/`).
    #[serde(default = "default_path", skip_serializing_if = "is_default_path")]
    pub path: String,
    /// Request headers (at most 64, of 64 KiB in all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<HeadersSpec>,
    /// Request body (at most 1 MiB; every request is kept by the endpoint, so the body
    /// times the attempts a run allows is at most 256 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// An idempotency key the environment generates per call and sends in this header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<IdempotencyKeySpec>,
    /// The client sends through the harness's surfaces (`env.http_client()`, the connector),
    /// which tag each request with its call, so effects can be attributed to calls even when
    /// they run concurrently without an idempotency key.
    #[serde(default, skip_serializing_if = "is_false")]
    pub call_tag: bool,
    /// Logical calls per client (default 1; at most 100,000 in a run, and 1,000,000 attempts
    /// of the built-in client).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 100_000)))]
    pub calls: u32,
    /// How many of a client's calls run at once (default 1: one after another; at most
    /// 10,000).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 10_000)))]
    pub concurrency: u32,
    /// Client instances in the fleet, each with its own pool, keys and random streams
    /// (default 1; at most 100,000, and 100,000 calls in all; on `backend: sim`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 100_000)))]
    pub clients: u32,
    /// When each client of the fleet starts: a fixed instant, or drawn per client from a
    /// distribution (default: every client at 0; on `backend: sim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<LatencySpec>,
}

fn default_method() -> String {
    "GET".to_string()
}
fn is_default_method(m: &str) -> bool {
    m == "GET"
}
fn default_path() -> String {
    "/".to_string()
}
fn is_default_path(p: &str) -> bool {
    p == "/"
}
fn one() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn is_false(v: &bool) -> bool {
    !*v
}

impl OperationSpec {
    /// A request with `method` to `path` on `endpoint`, one call.
    pub fn new(
        endpoint: impl Into<String>,
        method: impl Into<String>,
        path: impl Into<String>,
    ) -> Self {
        OperationSpec {
            endpoint: endpoint.into(),
            method: method.into(),
            path: path.into(),
            headers: None,
            body: None,
            idempotency_key: None,
            call_tag: false,
            calls: 1,
            concurrency: 1,
            clients: 1,
            start: None,
        }
    }

    /// `GET path` on `endpoint`.
    pub fn get(endpoint: impl Into<String>, path: impl Into<String>) -> Self {
        OperationSpec::new(endpoint, "GET", path)
    }

    /// `POST path` on `endpoint`.
    pub fn post(endpoint: impl Into<String>, path: impl Into<String>) -> Self {
        OperationSpec::new(endpoint, "POST", path)
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Adds a request header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers
            .get_or_insert_with(HeadersSpec::default)
            .push(name, value);
        self
    }

    /// Sends a generated idempotency key in `header`.
    pub fn idempotency_key(mut self, header: impl Into<String>) -> Self {
        self.idempotency_key = Some(IdempotencyKeySpec {
            header: header.into(),
        });
        self
    }

    /// Makes `n` logical calls.
    pub fn calls(mut self, n: u32) -> Self {
        self.calls = n;
        self
    }

    /// Runs up to `n` calls at once.
    pub fn concurrency(mut self, n: u32) -> Self {
        self.concurrency = n;
        self
    }

    /// Sets the clients of the fleet (`clients`), each making `calls` calls.
    ///
    /// ```
    /// use retrylab::scenario::OperationSpec;
    /// assert_eq!(OperationSpec::get("api", "/").clients(100).clients, 100);
    /// ```
    pub fn clients(mut self, n: u32) -> Self {
        self.clients = n;
        self
    }

    /// Sets when each client of the fleet starts (`start`): a fixed instant, or a
    /// distribution each client draws from.
    pub fn start(mut self, start: LatencySpec) -> Self {
        self.start = Some(start);
        self
    }

    /// Declares that requests carry the harness's call tag.
    pub fn call_tag(mut self, on: bool) -> Self {
        self.call_tag = on;
        self
    }

    /// Whether calls may overlap in time (several clients, or concurrency above 1).
    pub fn is_concurrent(&self) -> bool {
        self.clients > 1 || (self.concurrency > 1 && self.calls > 1)
    }
}

/// `idempotency_key: { header: Idempotency-Key }`.
///
/// ```
/// use retrylab::scenario::IdempotencyKeySpec;
/// let k = IdempotencyKeySpec { header: "Idempotency-Key".into() };
/// assert_eq!(k.header, "Idempotency-Key");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IdempotencyKeySpec {
    /// The header name.
    pub header: String,
}
