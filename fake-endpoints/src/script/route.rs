//! Routes: which requests a script answers, and which counter it consumes.

use std::fmt::Debug;

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use super::draw::Draws;
use super::step::{Step, header_pair};
use super::timeline::Window;
use crate::http::headers::RequestHeaders;

/// Which requests share a script counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One counter for the route.
    #[default]
    Endpoint,
    /// One counter per connection.
    Connection,
    /// One counter per value of the `x-retrylab-client` request header.
    Client,
    /// One counter per value of the endpoint's key header (see `EndpointConfig::key_header`).
    Key,
}

/// Which requests a route answers. Every part is optional and matches exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matcher {
    /// The method, if any.
    pub method: Option<Method>,
    /// The path without the query, if any.
    pub path: Option<String>,
    /// Headers that must be present with these values (among the values of that name).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Matcher {
    /// Whether a request with this method, path (no query) and headers matches.
    pub fn matches(&self, method: &Method, path: &str, headers: &HeaderMap) -> bool {
        self.method.as_ref().is_none_or(|m| m == method)
            && self.path.as_deref().is_none_or(|p| p == path)
            && self
                .headers
                .iter()
                .all(|(name, value)| headers.get_all(name).iter().any(|v| v == value))
    }

    /// [`matches`](Self::matches) for the headers an endpoint keeps of a request.
    pub(crate) fn matches_received(
        &self,
        method: &Method,
        path: &str,
        headers: &RequestHeaders,
    ) -> bool {
        self.method.as_ref().is_none_or(|m| m == method)
            && self.path.as_deref().is_none_or(|p| p == path)
            && self
                .headers
                .iter()
                .all(|(name, value)| headers.all_bytes(name).any(|v| v == value.as_bytes()))
    }
}

/// A matcher, the script it runs (or the timeline), and the scope of the script's counter.
///
/// ```
/// use http::Method;
/// use retrylab_endpoints::{Route, Scope, Step};
///
/// let route = Route::post("/orders")
///     .header("x-tenant", "acme")
///     .script([Step::status(503), Step::status(201)])
///     .scope(Scope::Client);
/// assert_eq!(route.matcher.method, Some(Method::POST));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// Which requests this route answers.
    pub matcher: Matcher,
    /// The steps, consumed in arrival order.
    pub script: Vec<Step>,
    /// Steps chosen by the instant a request arrives instead; when not empty, the route runs
    /// it and ignores `script` and `scope` (a timeline counts nothing).
    pub timeline: Vec<Window>,
    /// Which requests share a counter.
    pub scope: Scope,
    /// Where the route's random steps ([`Step::chance`]) draw; without it every draw is one
    /// half.
    pub draws: Option<Draws>,
    /// Where the route's sampled latencies ([`Step::latency_sampled`]) draw: a source apart
    /// from `draws`, so a latency distribution does not shift the random steps' choices.
    /// Without it every draw is one half.
    pub latency_draws: Option<Draws>,
}

impl Route {
    /// A route matching every request.
    pub fn any() -> Self {
        Self::default()
    }

    /// A route for `GET path`.
    pub fn get(path: impl Into<String>) -> Self {
        Self::any().method(Method::GET).path(path)
    }

    /// A route for `POST path`.
    pub fn post(path: impl Into<String>) -> Self {
        Self::any().method(Method::POST).path(path)
    }

    /// Match this method only.
    pub fn method(mut self, method: Method) -> Self {
        self.matcher.method = Some(method);
        self
    }

    /// Match this path only (exactly, query excluded).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.matcher.path = Some(path.into());
        self
    }

    /// Match only requests carrying this header value.
    ///
    /// # Panics
    /// If the name or value is not a valid header name or value.
    pub fn header<N, V>(mut self, name: N, value: V) -> Self
    where
        N: TryInto<HeaderName>,
        N::Error: Debug,
        V: TryInto<HeaderValue>,
        V::Error: Debug,
    {
        self.matcher.headers.push(header_pair(name, value));
        self
    }

    /// The steps this route runs.
    pub fn script(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.script = steps.into_iter().collect();
        self
    }

    /// Steps chosen by the virtual instant a request arrives, instead of a script: see
    /// [`Timeline`](crate::Timeline).
    ///
    /// ```
    /// use retrylab_endpoints::{secs, Route, Step, Window};
    ///
    /// let route = Route::get("/health").timeline([Window::new(secs(0)..secs(30), Step::status(503))]);
    /// assert_eq!(route.timeline.len(), 1);
    /// ```
    pub fn timeline(mut self, windows: impl IntoIterator<Item = Window>) -> Self {
        self.timeline = windows.into_iter().collect();
        self
    }

    /// Where the route's random steps draw: one source per endpoint built, so a run of the
    /// same configuration sees the same choices.
    ///
    /// ```
    /// use retrylab_endpoints::{Draw, Draws, Route, Step};
    ///
    /// struct Low;
    /// impl Draw for Low {
    ///     fn uniform(&mut self) -> f64 {
    ///         0.1
    ///     }
    /// }
    /// let route = Route::any()
    ///     .script([Step::chance(0.3, Step::status(503), Step::status(200))])
    ///     .draws(Draws::new(|| Box::new(Low)));
    /// assert!(route.draws.is_some());
    /// ```
    pub fn draws(mut self, draws: Draws) -> Self {
        self.draws = Some(draws);
        self
    }

    /// Where the route's sampled latencies draw (see [`Route::draws`] for the sources).
    ///
    /// ```
    /// use retrylab_endpoints::{Draw, Draws, LatencyDistribution, Route, Step};
    ///
    /// struct Low;
    /// impl Draw for Low {
    ///     fn uniform(&mut self) -> f64 {
    ///         0.1
    ///     }
    /// }
    /// let slow = LatencyDistribution::Uniform { low_ms: 10, high_ms: 20 };
    /// let route = Route::any()
    ///     .script([Step::status(200).latency_sampled(slow)])
    ///     .latency_draws(Draws::new(|| Box::new(Low)));
    /// assert!(route.latency_draws.is_some());
    /// ```
    pub fn latency_draws(mut self, draws: Draws) -> Self {
        self.latency_draws = Some(draws);
        self
    }

    /// The scope of the script's counter.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_exactly_on_each_part() {
        let route = Route::post("/orders").header("x-tenant", "acme");
        let mut headers = HeaderMap::new();
        headers.append("x-tenant", HeaderValue::from_static("other"));
        assert!(!route.matcher.matches(&Method::POST, "/orders", &headers));
        headers.append("x-tenant", HeaderValue::from_static("acme"));
        assert!(route.matcher.matches(&Method::POST, "/orders", &headers));
        assert!(!route.matcher.matches(&Method::GET, "/orders", &headers));
        assert!(!route.matcher.matches(&Method::POST, "/orders/1", &headers));
        // The same answers from the headers an endpoint keeps.
        let kept = RequestHeaders::from(&headers);
        assert!(
            route
                .matcher
                .matches_received(&Method::POST, "/orders", &kept)
        );
        assert!(
            !route
                .matcher
                .matches_received(&Method::GET, "/orders", &kept)
        );
        // Only the other value: no match, as with the map.
        let mut other = HeaderMap::new();
        other.append("x-tenant", HeaderValue::from_static("other"));
        let other = RequestHeaders::from(&other);
        assert!(
            !route
                .matcher
                .matches_received(&Method::POST, "/orders", &other)
        );
        assert!(
            Route::any()
                .matcher
                .matches(&Method::DELETE, "/x", &HeaderMap::new())
        );
    }
}
