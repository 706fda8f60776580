//! Naming requests from raw bytes, for requests a client wrote that never reached an endpoint
//! (the harness parses no HTTP itself).

use http::Method;

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
