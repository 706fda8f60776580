//! Copying what a request record keeps (target, headers, body) out of hyper's read buffer, and
//! sharing what the previous request on the same ledger already kept.
//!
//! hyper hands these out as slices of its connection read buffer. A record that kept them
//! would keep that whole buffer (8 KiB or more) alive for the rest of the run, and since the
//! buffer is then shared, hyper could not reuse it in place and would allocate a fresh one for
//! every request. So a record keeps copies, byte-for-byte the same; and since a retried request
//! usually has the target, header names and body of the one before it, those are one copy
//! shared by the run of records that carry them.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Uri, Version, request, uri};

use super::headers::{LayoutCache, RequestHeaders};

/// A received request's head as an endpoint keeps it: copies of what hyper handed over,
/// taken as soon as it hands the request to the endpoint, so that nothing of hyper's read
/// buffer outlives that hand-over and hyper can reuse the buffer for the next read.
///
/// ```
/// use retrylab_endpoints::RequestHead;
///
/// let request = http::Request::post("http://api/orders?x=1")
///     .header("x-retrylab-attempt", "3")
///     .body(())
///     .unwrap();
/// let (parts, ()) = request.into_parts();
/// let head = RequestHead::from(&parts);
/// assert_eq!(head.method(), http::Method::POST);
/// assert_eq!(head.uri().path(), "/orders");
/// assert_eq!(head.headers().get("X-Retrylab-Attempt").unwrap(), "3");
/// // And back, for code written against `http`'s parts.
/// assert_eq!(head.to_parts().headers, parts.headers);
/// ```
#[derive(Debug)]
pub struct RequestHead {
    pub(crate) method: Method,
    pub(crate) version: Version,
    pub(crate) uri: Arc<Uri>,
    pub(crate) headers: RequestHeaders,
}

impl RequestHead {
    /// The method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The request target, as written.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The headers, in a `HeaderMap`'s order.
    pub fn headers(&self) -> &RequestHeaders {
        &self.headers
    }

    /// The head as `http::request::Parts` again, for code written against those (it
    /// allocates a `HeaderMap` and a copy of each value; the extensions are empty).
    pub fn to_parts(&self) -> request::Parts {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts.method = self.method.clone();
        parts.version = self.version;
        parts.uri = Uri::clone(&self.uri);
        parts.headers = self.headers.to_header_map();
        parts
    }
}

impl From<&request::Parts> for RequestHead {
    /// A copy of `parts`' method, version, target and headers (for tests, and for asking a
    /// [`Gate`](crate::Gate) outside an endpoint).
    fn from(parts: &request::Parts) -> Self {
        Recent::exact().head(parts.clone())
    }
}

/// What the previous request on a ledger kept, for the next one to share.
#[derive(Debug, Default)]
pub(crate) struct Recent {
    layout: LayoutCache,
    uri: Option<Arc<Uri>>,
    body: Bytes,
}

impl Recent {
    /// For one copy, made outside a ledger: its header values get a buffer of their own
    /// size rather than a shared one.
    fn exact() -> Recent {
        Recent {
            layout: LayoutCache::exact(),
            ..Recent::default()
        }
    }

    /// Copies of `parts`' target and headers, shared with the previous request's where they
    /// are the same bytes. `parts` (and with it every slice of hyper's read buffer it holds)
    /// is dropped here.
    pub(crate) fn head(&mut self, parts: request::Parts) -> RequestHead {
        let uri = match &self.uri {
            Some(last) if same_target(last, &parts.uri) => Arc::clone(last),
            _ => {
                let uri = Arc::new(copy_target(&parts.uri));
                self.uri = Some(Arc::clone(&uri));
                uri
            }
        };
        RequestHead {
            method: parts.method,
            version: parts.version,
            uri,
            headers: self.layout.headers(&parts.headers),
        }
    }

    /// A copy of `body`, shared with the previous request's where it is the same bytes.
    pub(crate) fn body(&mut self, body: &Bytes) -> Bytes {
        if body.is_empty() {
            Bytes::new()
        } else if self.body == *body {
            self.body.clone()
        } else {
            self.body = Bytes::copy_from_slice(body);
            self.body.clone()
        }
    }
}

/// Whether two targets are the same bytes (`Uri`'s `==` ignores the case of the authority,
/// and a record keeps the target as written).
fn same_target(a: &Uri, b: &Uri) -> bool {
    a.scheme_str() == b.scheme_str()
        && a.authority().map(|x| x.as_str()) == b.authority().map(|x| x.as_str())
        && a.path_and_query().map(|x| x.as_str()) == b.path_and_query().map(|x| x.as_str())
}

/// `target` with its authority and path in one buffer of their own.
fn copy_target(target: &Uri) -> Uri {
    let authority = target.authority().map_or("", |a| a.as_str());
    let path = target.path_and_query().map_or("", |p| p.as_str());
    let store = Bytes::from([authority, path].concat());
    let old = target.clone().into_parts();
    let mut new = uri::Parts::default();
    new.scheme = old.scheme;
    new.authority = old
        .authority
        .map(|a| uri::Authority::from_maybe_shared(store.slice(..authority.len())).unwrap_or(a));
    new.path_and_query = old
        .path_and_query
        .map(|p| uri::PathAndQuery::from_maybe_shared(store.slice(authority.len()..)).unwrap_or(p));
    // The parts came from a valid URI, so they make one again.
    Uri::from_parts(new).unwrap_or_else(|_| target.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn keep_copies_what_a_record_keeps_out_of_the_read_buffer() {
        // As hyper hands them out: target, header values and body are slices of one buffer.
        let wire = Bytes::from_static(b"http://api:8080/orders?x=1 v1 v2 dup1 dup2 {}");
        let owned = Bytes::copy_from_slice(&wire);
        let within = |b: &[u8]| owned.as_ptr_range().contains(&b.as_ptr());
        // Absolute form, origin form, authority form, asterisk form.
        let targets = [0..26, 15..26, 7..15]
            .map(|r| Uri::from_maybe_shared(owned.slice(r)).unwrap())
            .into_iter()
            .chain([Uri::from_static("*")]);
        for uri in targets {
            let mut request = http::Request::new(());
            *request.uri_mut() = uri.clone();
            let headers = request.headers_mut();
            let mut sensitive = HeaderValue::from_maybe_shared(owned.slice(30..32)).unwrap();
            sensitive.set_sensitive(true);
            headers.append(
                "x-a",
                HeaderValue::from_maybe_shared(owned.slice(27..29)).unwrap(),
            );
            headers.append("x-b", sensitive);
            headers.append(
                "x-a",
                HeaderValue::from_maybe_shared(owned.slice(33..37)).unwrap(),
            );
            headers.append(
                "x-c",
                HeaderValue::from_maybe_shared(owned.slice(38..42)).unwrap(),
            );
            let (parts, ()) = request.into_parts();
            let body = owned.slice(43..45);
            let mut recent = Recent::default();
            let kept = recent.head(parts.clone());
            let kept_body = recent.body(&body);

            assert_eq!(*kept.uri, uri);
            assert_eq!(kept.uri.to_string(), uri.to_string());
            assert_eq!(kept.headers, parts.headers);
            let pairs: Vec<_> = parts
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), v.as_bytes().to_vec(), v.is_sensitive()))
                .collect();
            let kept_pairs: Vec<_> = kept
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), v.as_bytes().to_vec(), v.is_sensitive()))
                .collect();
            assert_eq!(kept_pairs, pairs);
            assert_eq!(kept_body, "{}");
            assert!(!within(&kept_body));
            assert!(kept.headers.get_bytes("x-c").is_some_and(|v| !within(v)));
            if let Some(path) = kept.uri.path_and_query() {
                assert!(!within(path.as_str().as_bytes()));
            }
            if let Some(authority) = kept.uri.authority() {
                assert!(!within(authority.as_str().as_bytes()));
            }
        }
    }

    #[test]
    fn a_request_shares_what_the_previous_one_kept_when_the_bytes_are_the_same() {
        let request = |target: &str, tag: &str| {
            let (parts, ()) = http::Request::post(target)
                .header("x-retrylab-attempt", tag)
                .body(())
                .unwrap()
                .into_parts();
            parts
        };
        let body = Bytes::from_static(b"{}");
        let mut recent = Recent::default();
        let first = recent.head(request("http://api/orders", "1"));
        let first_body = recent.body(&body);
        let second = recent.head(request("http://api/orders", "2"));
        let second_body = recent.body(&body);
        assert!(Arc::ptr_eq(&first.uri, &second.uri));
        assert_eq!(first_body.as_ptr(), second_body.as_ptr());
        assert_eq!(
            second.headers.get_bytes("x-retrylab-attempt"),
            Some(&b"2"[..])
        );
        // Another target, an authority that differs only in case, another body: copies.
        let third = recent.head(request("http://API/orders", "3"));
        let third_body = recent.body(&Bytes::from("[]"));
        assert!(!Arc::ptr_eq(&second.uri, &third.uri));
        assert_eq!(third.uri.to_string(), "http://API/orders");
        assert_eq!(third_body, "[]");
        assert_eq!(first_body, "{}");
    }
}
