//! A received request's headers as the ledger keeps them: compact, and shared between requests
//! that carry the same header names.
//!
//! A ledger keeps every request of a run (up to hundreds of thousands) to the end. hyper hands
//! each request's headers over in a `HeaderMap` sized for growth, with a freshly allocated
//! name for every header it does not know: the largest part of what a record kept. A
//! [`RequestHeaders`] keeps the values in one slice of a buffer that many requests share, and
//! the names, with where each value ends, in a layout that consecutive requests with the same
//! names and value lengths share: a harness request differs from the previous one only in its
//! tags' values, so a run keeps a handful of layouts.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};

/// The headers of a request, as received, in a `HeaderMap`'s order: names in the order they
/// first came, each name's repeated lines together and in the order they came (like
/// [`HeaderMap::get_all`]), not interleaved as on the wire.
///
/// Lookups by name ignore ASCII case, as with a `HeaderMap`. Values are handed out as bytes,
/// which borrow the record, or as [`HeaderValue`]s, which are copies (a record keeps no value
/// in that form: it would cost a 40-byte handle and a reference count per value).
///
/// ```
/// use http::HeaderMap;
/// use retrylab_endpoints::RequestHeaders;
///
/// let mut map = HeaderMap::new();
/// map.insert("x-retrylab-attempt", "7".parse().unwrap());
/// map.append("accept", "a/b".parse().unwrap());
/// let headers = RequestHeaders::from(&map);
/// assert_eq!(headers.get("X-Retrylab-Attempt").unwrap(), "7");
/// assert_eq!(headers.get_bytes("accept"), Some(&b"a/b"[..]));
/// assert!(!headers.contains_key("host"));
/// assert_eq!(headers.to_header_map(), map);
/// ```
#[derive(Clone)]
pub struct RequestHeaders {
    layout: Arc<Layout>,
    /// Every value, concatenated in order: a slice of a buffer that the values of many
    /// requests share ([`LayoutCache::headers`]).
    values: Bytes,
}

/// The names of a request's headers, where each value ends in [`RequestHeaders::values`], and
/// which values were marked sensitive.
#[derive(Debug)]
pub(crate) struct Layout {
    entries: Box<[(HeaderName, usize, bool)]>,
}

impl Layout {
    /// Whether `headers` has exactly these names, value lengths and sensitivity, in order.
    fn fits(&self, headers: &HeaderMap) -> bool {
        let mut end = 0;
        headers.len() == self.entries.len()
            && headers.iter().zip(self.entries.iter()).all(|((n, v), e)| {
                end += v.len();
                *n == e.0 && end == e.1 && v.is_sensitive() == e.2
            })
    }

    fn of(headers: &HeaderMap) -> Self {
        let mut end = 0;
        let entries = headers
            .iter()
            .map(|(n, v)| {
                end += v.len();
                (n.clone(), end, v.is_sensitive())
            })
            .collect();
        Self { entries }
    }
}

/// The layout and values the previous request of a ledger had, for the next one to share.
#[derive(Debug, Default)]
pub(crate) struct LayoutCache {
    last: Option<Arc<Layout>>,
    /// The previous request's values: a request whose values are the same bytes shares them.
    last_values: Bytes,
    /// Where values are copied to, [`VALUES_ARENA`] bytes at a time, so that a request's
    /// values cost no allocation of their own. A run keeps every request's headers to its
    /// end; one small allocation kept per request, between the many a request frees, left
    /// the allocator sorting its free lists on almost every attempt.
    arena: BytesMut,
    /// Copies values into a buffer of their own size instead: for a single copy made outside
    /// a ledger, which an arena would keep [`VALUES_ARENA`] bytes alive for.
    exact: bool,
}

/// The bytes [`LayoutCache::arena`] allocates at a time. A request's values are a few dozen
/// bytes, so one allocation serves hundreds of requests; values larger than this get a
/// buffer of their own size, and the arena stays as it is.
const VALUES_ARENA: usize = 16 * 1024;

impl LayoutCache {
    /// A cache for one copy: its values get a buffer of exactly their size.
    pub(crate) fn exact() -> LayoutCache {
        LayoutCache {
            exact: true,
            ..LayoutCache::default()
        }
    }

    /// A copy of `map`, sharing the previous call's layout, and values, where they fit.
    pub(crate) fn headers(&mut self, map: &HeaderMap) -> RequestHeaders {
        let layout = match &self.last {
            Some(last) if last.fits(map) => Arc::clone(last),
            _ => {
                let layout = Arc::new(Layout::of(map));
                self.last = Some(Arc::clone(&layout));
                layout
            }
        };
        if !same_values(&self.last_values, map) {
            self.last_values = self.copy_values(map);
        }
        RequestHeaders {
            layout,
            values: self.last_values.clone(),
        }
    }

    /// `map`'s values, concatenated, in the arena or, when they are too large for it or this
    /// cache is [`exact`](Self::exact), in a buffer of their own size.
    fn copy_values(&mut self, map: &HeaderMap) -> Bytes {
        let len: usize = map.values().map(|v| v.len()).sum();
        if self.exact || len > VALUES_ARENA {
            let mut own = BytesMut::with_capacity(len);
            for value in map.values() {
                own.extend_from_slice(value.as_bytes());
            }
            return own.freeze();
        }
        if self.arena.capacity() < len {
            self.arena = BytesMut::with_capacity(VALUES_ARENA);
        }
        for value in map.values() {
            self.arena.extend_from_slice(value.as_bytes());
        }
        self.arena.split().freeze()
    }
}

/// Whether `map`'s values, concatenated in order, are the bytes of `values`.
fn same_values(values: &[u8], map: &HeaderMap) -> bool {
    let mut rest = values;
    for value in map.values() {
        match rest.strip_prefix(value.as_bytes()) {
            Some(tail) => rest = tail,
            None => return false,
        }
    }
    rest.is_empty()
}

impl RequestHeaders {
    /// How many header lines (a name repeated counts each time).
    pub fn len(&self) -> usize {
        self.layout.entries.len()
    }

    /// Whether the request had no headers.
    pub fn is_empty(&self) -> bool {
        self.layout.entries.is_empty()
    }

    /// A copy of the first value of `name` (any ASCII case).
    pub fn get(&self, name: impl AsRef<str>) -> Option<HeaderValue> {
        // Found by name first: only the value returned is copied.
        let name = name.as_ref();
        self.spans()
            .find(|(n, _, _)| same(n, name))
            .map(|(_, range, sensitive)| value(&self.values[range], sensitive))
    }

    /// The bytes of the first value of `name` (any ASCII case).
    pub fn get_bytes(&self, name: impl AsRef<str>) -> Option<&[u8]> {
        let name = name.as_ref();
        self.spans()
            .find(|(n, _, _)| same(n, name))
            .map(|(_, range, _)| &self.values[range])
    }

    /// [`get_bytes`](Self::get_bytes) for a name already parsed, which is in lower case as
    /// every name a record keeps: compared as names, without folding case (the trace reads
    /// each request's tags this way).
    pub(crate) fn first_bytes(&self, name: &HeaderName) -> Option<&[u8]> {
        self.spans()
            .find(|(n, _, _)| *n == name)
            .map(|(_, range, _)| &self.values[range])
    }

    /// The bytes of every value of `name`, a name already parsed (see
    /// [`first_bytes`](Self::first_bytes)), in the order received.
    pub(crate) fn all_bytes<'a>(
        &'a self,
        name: &'a HeaderName,
    ) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.spans()
            .filter(move |(n, _, _)| *n == name)
            .map(|(_, range, _)| &self.values[range])
    }

    /// Copies of every value of `name` (any ASCII case), in the order received.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = HeaderValue> + 'a {
        self.spans()
            .filter(move |(n, _, _)| same(n, name))
            .map(|(_, range, sensitive)| value(&self.values[range], sensitive))
    }

    /// Whether the request had a `name` header (any ASCII case).
    pub fn contains_key(&self, name: impl AsRef<str>) -> bool {
        let name = name.as_ref();
        self.layout.entries.iter().any(|e| same(&e.0, name))
    }

    /// Every header line, in a `HeaderMap`'s order (a name's lines together).
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, HeaderValue)> + '_ {
        self.spans()
            .map(|(name, range, sensitive)| (name, value(&self.values[range], sensitive)))
    }

    /// The headers as a `HeaderMap`, for code written against one (it allocates).
    pub fn to_header_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.len());
        for (name, value) in self.iter() {
            map.append(name.clone(), value);
        }
        map
    }

    fn spans(&self) -> impl Iterator<Item = (&HeaderName, std::ops::Range<usize>, bool)> + '_ {
        let mut start = 0usize;
        self.layout
            .entries
            .iter()
            .map(move |(name, end, sensitive)| {
                let end = *end;
                let range = start..end;
                start = end;
                (name, range, *sensitive)
            })
    }
}

/// A value copied out of a record's buffer. Every span there is the bytes of a valid
/// `HeaderValue` (see [`LayoutCache::headers`]), so the check cannot fail.
fn value(bytes: &[u8], sensitive: bool) -> HeaderValue {
    let mut value = match HeaderValue::from_bytes(bytes) {
        Ok(value) => value,
        Err(_) => unreachable!("a received header value is a valid header value"),
    };
    value.set_sensitive(sensitive);
    value
}

fn same(name: &HeaderName, wanted: &str) -> bool {
    name.as_str().eq_ignore_ascii_case(wanted)
}

impl From<&HeaderMap> for RequestHeaders {
    /// A copy of `map` (for tests and for building records outside an endpoint).
    fn from(map: &HeaderMap) -> Self {
        LayoutCache::exact().headers(map)
    }
}

impl std::fmt::Debug for RequestHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for RequestHeaders {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for RequestHeaders {}

impl PartialEq<HeaderMap> for RequestHeaders {
    fn eq(&self, other: &HeaderMap) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|((n, v), (m, w))| n == m && v == w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(values: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in values {
            map.append(*name, HeaderValue::from_str(value).expect("a valid value"));
        }
        map
    }

    #[test]
    fn the_same_values_are_shared_with_the_previous_request() {
        let mut cache = LayoutCache::default();
        let a = cache.headers(&map(&[("x-a", "1"), ("x-b", "22")]));
        let b = cache.headers(&map(&[("x-a", "1"), ("x-b", "22")]));
        assert_eq!(a.values.as_ptr(), b.values.as_ptr());
        assert_eq!(b.get("x-b").expect("x-b"), "22");
    }

    #[test]
    fn different_values_follow_each_other_in_one_buffer() {
        let mut cache = LayoutCache::default();
        let a = cache.headers(&map(&[("x-attempt", "1")]));
        let b = cache.headers(&map(&[("x-attempt", "2")]));
        // One chunk: the second request's values start where the first's end.
        assert_eq!(a.values.as_ptr().wrapping_add(1), b.values.as_ptr());
        assert_eq!(
            (
                a.get("x-attempt").expect("a"),
                b.get("x-attempt").expect("b")
            ),
            ("1".parse().expect("1"), "2".parse().expect("2"))
        );
    }

    #[test]
    fn the_same_bytes_split_otherwise_keep_their_own_boundaries() {
        let mut cache = LayoutCache::default();
        let a = cache.headers(&map(&[("x-a", "ab"), ("x-b", "c")]));
        let b = cache.headers(&map(&[("x-a", "a"), ("x-b", "bc")]));
        assert_eq!(a.get("x-a").expect("a"), "ab");
        assert_eq!(b.get("x-a").expect("a"), "a");
        assert_eq!(b.get("x-b").expect("b"), "bc");
    }

    #[test]
    fn empty_and_missing_values_take_no_room() {
        let mut cache = LayoutCache::default();
        let none = cache.headers(&HeaderMap::new());
        let empty = cache.headers(&map(&[("x-empty", "")]));
        assert!(none.is_empty() && none.values.is_empty());
        assert_eq!(empty.get("x-empty").expect("x-empty"), "");
        assert_eq!(cache.arena.capacity(), 0, "no arena allocated for no bytes");
    }

    #[test]
    fn a_value_larger_than_the_arena_gets_its_own_buffer() {
        let mut cache = LayoutCache::default();
        let small = cache.headers(&map(&[("x-a", "1")]));
        let room = cache.arena.capacity();
        let large = "v".repeat(VALUES_ARENA + 1);
        let big = cache.headers(&map(&[("x-a", &large)]));
        assert_eq!(
            big.get_bytes("x-a").map(<[u8]>::len),
            Some(VALUES_ARENA + 1)
        );
        // The arena is kept for the requests after it.
        assert_eq!(cache.arena.capacity(), room);
        let next = cache.headers(&map(&[("x-a", "2")]));
        assert_eq!(small.values.as_ptr().wrapping_add(1), next.values.as_ptr());
    }

    #[test]
    fn a_copy_outside_a_ledger_is_exactly_its_size() {
        let headers = RequestHeaders::from(&map(&[("x-a", "123")]));
        assert_eq!(&headers.values[..], b"123");
        let mut exact = LayoutCache::exact();
        exact.headers(&map(&[("x-a", "123")]));
        assert_eq!(
            exact.arena.capacity(),
            0,
            "an exact cache allocates no arena"
        );
    }
}
