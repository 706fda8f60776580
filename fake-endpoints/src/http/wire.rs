//! What the harness writes onto the wire and reads back off it: the `x-retrylab-*` tag
//! headers, the idempotency keys it hands out, the dead-letter path, and the naming of
//! requests from raw bytes (for requests a client wrote that never reached an endpoint).
//!
//! Every byte of HTTP in retrylab is this crate's, so the harness keeps no copy of these.
//!
//! ```
//! use retrylab_endpoints::wire;
//!
//! let key = wire::idempotency_key(0, 3);
//! assert_eq!(key, "key-3");
//! assert_eq!(wire::call_of_key("key-3"), Some(3));
//! assert_eq!(wire::call_of_key("user-chosen"), None);
//! ```

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use crate::RequestHeaders;

/// Request header naming the client instance (one counter per value under `Scope::Client`).
pub const CLIENT_HEADER: &str = "x-retrylab-client";

/// Request header carrying the harness's call tag, copied into effect records.
pub const CALL_HEADER: &str = "x-retrylab-call";

/// Request header carrying the attempt id on requests from harness surfaces.
pub const ATTEMPT_HEADER: &str = "x-retrylab-attempt";

/// Request header marking a built-in client's hand-off to a dead-letter endpoint (an effect,
/// not an attempt).
pub const HAND_OFF_HEADER: &str = "x-retrylab-hand-off";

/// Where a `kind: dead_letter` endpoint takes messages.
pub const DEAD_LETTER_PATH: &str = "/dead-letters";

/// [`CLIENT_HEADER`] as a header name: cloning a static name costs nothing, parsing the text
/// costs on every request.
pub static CLIENT_HEADER_NAME: HeaderName = HeaderName::from_static(CLIENT_HEADER);
/// [`CALL_HEADER`] as a header name.
pub static CALL_HEADER_NAME: HeaderName = HeaderName::from_static(CALL_HEADER);
/// [`ATTEMPT_HEADER`] as a header name.
pub static ATTEMPT_HEADER_NAME: HeaderName = HeaderName::from_static(ATTEMPT_HEADER);
/// [`HAND_OFF_HEADER`] as a header name.
pub static HAND_OFF_HEADER_NAME: HeaderName = HeaderName::from_static(HAND_OFF_HEADER);

/// Headers a tag can be read back from: a request's `HeaderMap`, or the
/// [`RequestHeaders`] an endpoint's ledger kept.
pub trait TagHeaders {
    /// The bytes of the first value of `name`.
    fn first_value(&self, name: &HeaderName) -> Option<&[u8]>;
}

impl TagHeaders for HeaderMap {
    fn first_value(&self, name: &HeaderName) -> Option<&[u8]> {
        self.get(name).map(HeaderValue::as_bytes)
    }
}

impl TagHeaders for RequestHeaders {
    fn first_value(&self, name: &HeaderName) -> Option<&[u8]> {
        self.first_bytes(name)
    }
}

/// The attempt id a request from a harness surface carries, read back from what an endpoint
/// received.
pub fn attempt_tag(headers: &impl TagHeaders) -> Option<u32> {
    numeric_tag(headers, &ATTEMPT_HEADER_NAME)
}

/// The call id a request from a harness surface carries, read back.
pub fn call_tag(headers: &impl TagHeaders) -> Option<u32> {
    numeric_tag(headers, &CALL_HEADER_NAME)
}

/// The client (of a fleet; 0 otherwise) a request from a harness surface carries, read back.
pub fn client_tag(headers: &impl TagHeaders) -> Option<u32> {
    numeric_tag(headers, &CLIENT_HEADER_NAME)
}

fn numeric_tag(headers: &impl TagHeaders, name: &HeaderName) -> Option<u32> {
    std::str::from_utf8(headers.first_value(name)?)
        .ok()?
        .parse()
        .ok()
}

/// A tag value: `n` in decimal, the same bytes as `HeaderValue::from(n)` in one allocation
/// instead of two (it is written on every request).
pub fn decimal(n: u32) -> HeaderValue {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Digits are always a valid header value.
    HeaderValue::from_bytes(&digits[at..]).unwrap_or_else(|_| HeaderValue::from(n))
}

/// The idempotency key the harness hands out for a call: stable, readable, unique per client
/// and call (`key-3` is call 3 of client 0, `key-2-5` call 5 of client 2).
pub fn idempotency_key(client_id: u32, call_id: u32) -> HeaderValue {
    let text = if client_id == 0 {
        format!("key-{call_id}")
    } else {
        format!("key-{client_id}-{call_id}")
    };
    // `from_str` rejects only control characters and DEL; this text is letters, digits and '-'.
    HeaderValue::from_str(&text).unwrap_or_else(|_| unreachable!("`{text}` is a header value"))
}

/// The call an idempotency key from [`idempotency_key`] belongs to; `None` for keys the
/// harness did not hand out.
pub fn call_of_key(key: &str) -> Option<u32> {
    let rest = key.strip_prefix("key-")?;
    // `key-<client>-<call>` in a fleet, `key-<call>` otherwise.
    let call = rest.rsplit('-').next()?;
    call.parse().ok()
}

/// The client an idempotency key from [`idempotency_key`] belongs to, in a run of `clients`
/// client instances (0 for `key-<call>`); `None` for keys the harness did not hand out,
/// which includes `key-<client>-<call>` naming a client the run did not have: the harness
/// writes that form only for clients 1 to `clients - 1`, so in a run of one client every
/// such key is someone else's.
///
/// ```
/// use retrylab_endpoints::wire::{client_of_key, idempotency_key};
///
/// assert_eq!(client_of_key(idempotency_key(2, 5).to_str().unwrap(), 3), Some(2));
/// assert_eq!(client_of_key("key-2-5", 2), None);
/// assert_eq!(client_of_key("key-2-5", 1), None);
/// assert_eq!(client_of_key("key-3", 1), Some(0));
/// assert_eq!(client_of_key("key-0-3", 4), None);
/// assert_eq!(client_of_key("order-9", 4), None);
/// ```
pub fn client_of_key(key: &str, clients: u32) -> Option<u32> {
    let rest = key.strip_prefix("key-")?;
    match rest.split_once('-') {
        Some((client, call)) => {
            call.parse::<u32>().ok()?;
            let client: u32 = client.parse().ok()?;
            // Client 0's keys are `key-<call>`: `key-0-<call>` is no key the harness wrote.
            (client != 0 && client < clients).then_some(client)
        }
        None => rest.parse::<u32>().ok().map(|_| 0),
    }
}

/// The method and request target of a (possibly partial) HTTP/1 request head, once its request
/// line has arrived up to the space after the target. The target is returned as written,
/// query included.
///
/// ```
/// use http::Method;
/// use retrylab_endpoints::wire::name_request;
///
/// assert_eq!(
///     name_request(b"POST /orders?x=1 HTTP/1.1\r\nhost: api\r\n"),
///     Some((Method::POST, "/orders?x=1".to_owned()))
/// );
/// assert_eq!(name_request(b"POST /ord"), None);
/// ```
pub fn name_request(bytes: &[u8]) -> Option<(Method, String)> {
    // No header slots: the request line is all we want, and httparse fills `method` and `path`
    // before it fails on the first header (`TooManyHeaders`) or runs out of bytes (`Partial`),
    // so the parse result itself is irrelevant.
    let mut headers: [httparse::Header<'_>; 0] = [];
    let mut request = httparse::Request::new(&mut headers);
    let _ = request.parse(bytes);
    let method = Method::from_bytes(request.method?.as_bytes()).ok()?;
    Some((method, request.path?.to_owned()))
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
        assert_eq!(call_of_key("key-x"), None);
    }

    #[test]
    fn every_client_of_a_fleet_reads_back_from_its_keys_and_no_other() {
        let clients = 100;
        for client in 0..clients {
            let key = idempotency_key(client, 3);
            let key = key.to_str().unwrap_or_default();
            assert_eq!(client_of_key(key, clients), Some(client), "{key}");
            // A smaller fleet had no such client, unless it is client 0.
            let smaller = (client == 0).then_some(0);
            assert_eq!(client_of_key(key, client.max(1)), smaller, "{key}");
        }
        assert_eq!(client_of_key("key-100-3", clients), None);
        assert_eq!(client_of_key("key-1-x", clients), None);
    }

    #[test]
    fn tags_read_back_what_was_written() {
        let mut headers = HeaderMap::new();
        headers.insert(ATTEMPT_HEADER_NAME.clone(), decimal(12));
        headers.insert(CALL_HEADER_NAME.clone(), decimal(0));
        assert_eq!(attempt_tag(&headers), Some(12));
        assert_eq!(call_tag(&headers), Some(0));
        headers.insert(CALL_HEADER_NAME.clone(), HeaderValue::from_static("call-0"));
        assert_eq!(call_tag(&headers), None);
    }

    #[test]
    fn names_complete_partial_and_headerless_heads() {
        let full = b"GET /a HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(name_request(full), Some((Method::GET, "/a".to_owned())));
        assert_eq!(
            name_request(b"GET /a HTTP/1.1\r\n\r\n"),
            Some((Method::GET, "/a".to_owned()))
        );
        assert_eq!(
            name_request(b"DELETE /x/1 HT"),
            Some((Method::DELETE, "/x/1".to_owned()))
        );
        assert_eq!(
            name_request(b"\r\nPUT /p "),
            Some((Method::PUT, "/p".to_owned()))
        );
        let custom = name_request(b"PURGE /c HTTP/1.1\r\n").map(|(m, _)| m);
        assert_eq!(custom.as_ref().map(Method::as_str), Some("PURGE"));
    }

    #[test]
    fn rejects_what_is_not_a_request_line_yet() {
        assert_eq!(name_request(b""), None);
        assert_eq!(name_request(b"GET"), None);
        assert_eq!(name_request(b"GET /a"), None);
        assert_eq!(name_request(b"\x16\x03\x01 binary"), None);
    }
}
