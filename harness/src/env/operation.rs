//! `Operation`: the request a scenario's `operation:` describes, for one call.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request};
use http_body_util::Full;

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
    /// The HTTP versions the endpoint speaks (its `protocol:`): a client that must reach an
    /// `http2` endpoint takes [`Env::http2_client`](crate::Env::http2_client).
    pub protocol: retrylab_endpoints::Protocol,
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
