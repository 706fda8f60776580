//! A token bucket in front of an endpoint's routes: `kind: rate_limiter`.
//!
//! The bucket's level is kept in whole units of a millionth of a token, and its rate in
//! thousandths of a token per second: one millisecond then refills exactly `rate` units, so
//! the level at any whole millisecond is an integer and the refill schedule has no rounding
//! drift. A token is a million units.

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderName, HeaderValue, StatusCode};

use crate::http::headers::RequestHeaders;
use crate::http::response::{Respond, SentResponse};
use crate::http::retry_after::RetryAfter;
use crate::http::wire::CLIENT_HEADER_NAME;

/// Units of level in one token.
const TOKEN: u64 = 1_000_000;

/// Which requests share a bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LimitScope {
    /// One bucket for the whole endpoint.
    #[default]
    Endpoint,
    /// One bucket per value of the `x-retrylab-client` request header (a request without it
    /// shares the bucket of the other requests without it).
    Client,
}

/// A token bucket: `rate` tokens a second, up to `burst`, full at the start of the run.
///
/// Every request that arrives takes a token if the bucket has one and goes on to the
/// endpoint's routes; one that finds the bucket empty is answered at once with
/// [`when_empty`](RateLimit::when_empty), takes nothing, consumes no script step and commits
/// nothing. That answer carries a `Retry-After` of the whole seconds until the next token
/// (the wait rounded up), unless the response sets its own: a client that waits exactly that
/// long finds a token, unless another request took it first.
///
/// The refill instant of a token can fall between two milliseconds (3 tokens a second refill
/// one every 333.3 ms): the token is there from the first whole millisecond at or after that
/// instant, and the fraction of the next token refilled by then is kept. A full bucket
/// refills nothing until a token is taken from it.
///
/// The buckets follow the run's clock, not the endpoint's process: a
/// [`crash`](crate::Endpoint::crash) and [`restart`](crate::Endpoint::restart) leave them as
/// they were, as a limiter that keeps its counts in a store of its own does.
///
/// ```
/// use retrylab_endpoints::{EndpointConfig, LimitScope, RateLimit, Step};
///
/// // 2 tokens a second, 5 at most, one bucket per client, answering code 530.
/// let config = EndpointConfig::http("broker")
///     .rate_limit(RateLimit::per_second(2).burst(5).scope(LimitScope::Client).rocketmq_throttled())
///     .script([Step::status(200)]);
/// assert_eq!(config.rate_limit.as_ref().map(|r| r.burst), Some(5));
/// assert_eq!(RateLimit::per_second(3).wait_for_token(0), 334);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Tokens refilled per second, in thousandths (2,500 is 2.5 tokens a second); above 0.
    pub millitokens_per_second: u64,
    /// The bucket's size, at least 1; the bucket starts full.
    pub burst: u32,
    /// Which requests share a bucket.
    pub scope: LimitScope,
    /// The answer to a request that finds its bucket empty (default: a bare 429); a
    /// `Retry-After` from the refill time is appended when it sets none.
    pub when_empty: Respond,
}

impl RateLimit {
    /// `n` tokens a second, a bucket of one, answering a bare 429 with its `Retry-After`.
    ///
    /// # Panics
    /// If `n` is 0: such a bucket never refills.
    pub fn per_second(n: u32) -> Self {
        Self::millitokens_per_second(u64::from(n) * 1000)
    }

    /// `m` thousandths of a token a second (500 is a token every 2 seconds).
    ///
    /// # Panics
    /// If `m` is 0: such a bucket never refills.
    pub fn millitokens_per_second(m: u64) -> Self {
        assert!(m > 0, "a rate limiter's rate must be above 0");
        Self {
            millitokens_per_second: m,
            burst: 1,
            scope: LimitScope::Endpoint,
            when_empty: Respond::new(StatusCode::TOO_MANY_REQUESTS),
        }
    }

    /// The bucket's size.
    ///
    /// # Panics
    /// If `burst` is 0: such a bucket never holds a token.
    pub fn burst(mut self, burst: u32) -> Self {
        assert!(burst > 0, "a rate limiter's burst must be at least 1");
        self.burst = burst;
        self
    }

    /// Which requests share a bucket.
    pub fn scope(mut self, scope: LimitScope) -> Self {
        self.scope = scope;
        self
    }

    /// The answer to a request that finds the bucket empty.
    pub fn when_empty(mut self, respond: Respond) -> Self {
        self.when_empty = respond;
        self
    }

    /// Answers as an AWS service throttling a JSON protocol request does: 400 with
    /// `x-amzn-ErrorType: ThrottlingException` and a `__type` body naming it.
    pub fn aws_throttling(self) -> Self {
        self.when_empty(json_respond(
            StatusCode::BAD_REQUEST,
            r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#,
            Some((
                HeaderName::from_static("x-amzn-errortype"),
                HeaderValue::from_static("ThrottlingException"),
            )),
        ))
    }

    /// Answers as a `RocketMQ` broker over its flow control: 429 with
    /// `{"code": 530, "message": "TOO_MANY_REQUESTS"}`, the broker's own answer to code 530
    /// ([`Broker::error_code`](crate::Broker::error_code)).
    pub fn rocketmq_throttled(self) -> Self {
        self.when_empty(crate::Broker::error_code(530).respond)
    }

    /// How many milliseconds a bucket of `level` (in millionths of a token, below one token)
    /// waits for its next token: the exact refill instant rounded up to a whole millisecond.
    ///
    /// A rate of 0 (possible only by writing the field) never refills: the wait is then
    /// `u64::MAX`, which no run reaches.
    pub fn wait_for_token(&self, level: u64) -> u64 {
        if self.millitokens_per_second == 0 {
            return u64::MAX;
        }
        TOKEN
            .saturating_sub(level)
            .div_ceil(self.millitokens_per_second)
    }
}

fn json_respond(
    status: StatusCode,
    body: &'static str,
    header: Option<(HeaderName, HeaderValue)>,
) -> Respond {
    let mut respond = Respond::new(status);
    respond.headers.extend(header);
    respond
        .headers
        .push((CONTENT_TYPE, HeaderValue::from_static("application/json")));
    respond.body = Bytes::from_static(body.as_bytes());
    respond
}

/// One bucket: its level at `at_ms`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    level: u64,
    at_ms: u64,
}

/// The buckets of a running rate limiter.
pub(crate) struct Limiter {
    config: RateLimit,
    buckets: BTreeMap<Option<HeaderValue>, Bucket>,
}

/// What the limiter decided for a request.
pub(crate) enum Admit {
    /// It took a token: on to the routes.
    Token,
    /// The bucket was empty: this is the answer.
    Empty(SentResponse),
}

impl Limiter {
    pub(crate) fn new(config: RateLimit) -> Self {
        Self {
            config,
            buckets: BTreeMap::new(),
        }
    }

    /// A request with `headers` arrives at `now_ms` (the virtual wall clock reading `wall`):
    /// take a token or answer it.
    pub(crate) fn admit(
        &mut self,
        headers: &RequestHeaders,
        now_ms: u64,
        wall: SystemTime,
    ) -> Admit {
        let key = match self.config.scope {
            LimitScope::Endpoint => None,
            LimitScope::Client => headers.get(&CLIENT_HEADER_NAME),
        };
        let full = u64::from(self.config.burst) * TOKEN;
        let rate = self.config.millitokens_per_second;
        let bucket = self.buckets.entry(key).or_insert(Bucket {
            level: full,
            at_ms: now_ms,
        });
        let elapsed = now_ms.saturating_sub(bucket.at_ms);
        bucket.level = bucket
            .level
            .saturating_add(elapsed.saturating_mul(rate))
            .min(full);
        // Never backwards: on a runtime with several threads a request that read the clock
        // earlier may take the lock later, and must not make the next one refill again.
        bucket.at_ms = bucket.at_ms.max(now_ms);
        if bucket.level >= TOKEN {
            bucket.level -= TOKEN;
            return Admit::Token;
        }
        let wait_ms = self.config.wait_for_token(bucket.level);
        let mut respond = self.config.when_empty.clone();
        // A `Retry-After` the response sets, as its own field or among its headers, is the
        // one it sends.
        let has_own = respond.retry_after.is_some()
            || respond
                .headers
                .iter()
                .any(|(name, _)| name == http::header::RETRY_AFTER);
        if !has_own {
            let seconds = wait_ms.div_ceil(1000);
            respond.retry_after = Some(RetryAfter::Seconds(
                i64::try_from(seconds).unwrap_or(i64::MAX),
            ));
        }
        Admit::Empty(respond.render(wall))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderMap;
    use std::time::UNIX_EPOCH;

    fn retry_after(admit: Admit) -> Option<String> {
        match admit {
            Admit::Token => None,
            Admit::Empty(r) => r
                .retry_after()
                .map(|v| v.to_str().unwrap_or_default().to_owned()),
        }
    }

    fn client(name: &'static str) -> RequestHeaders {
        let mut h = HeaderMap::new();
        h.insert(CLIENT_HEADER_NAME.clone(), HeaderValue::from_static(name));
        RequestHeaders::from(&h)
    }

    #[test]
    fn a_full_bucket_answers_burst_requests_then_throttles_until_the_refill() {
        // 2 tokens a second: one every 500 ms exactly.
        let mut l = Limiter::new(RateLimit::per_second(2).burst(3));
        let h = RequestHeaders::from(&HeaderMap::new());
        for _ in 0..3 {
            assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        }
        // Empty at 0 ms; the next token is due at 500 ms: Retry-After 1 (rounded up).
        assert_eq!(
            retry_after(l.admit(&h, 0, UNIX_EPOCH)).as_deref(),
            Some("1")
        );
        assert_eq!(
            retry_after(l.admit(&h, 499, UNIX_EPOCH)).as_deref(),
            Some("1")
        );
        assert!(matches!(l.admit(&h, 500, UNIX_EPOCH), Admit::Token));
        // Taken at 500 ms; the next is due at 1000 ms.
        assert_eq!(
            retry_after(l.admit(&h, 999, UNIX_EPOCH)).as_deref(),
            Some("1")
        );
        assert!(matches!(l.admit(&h, 1000, UNIX_EPOCH), Admit::Token));
    }

    #[test]
    fn a_fractional_refill_instant_is_rounded_up_to_the_next_millisecond() {
        // 3 tokens a second: tokens due at 333.3, 666.7 and 1000 ms after the bucket empties.
        let rate = RateLimit::per_second(3);
        assert_eq!(rate.wait_for_token(0), 334);
        let mut l = Limiter::new(rate.clone().burst(2));
        let h = RequestHeaders::from(&HeaderMap::new());
        assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&h, 333, UNIX_EPOCH), Admit::Empty(_)));
        assert!(matches!(l.admit(&h, 334, UNIX_EPOCH), Admit::Token));
        // The 0.002 of a token left over at 334 ms is kept: the next is due at 666.7 ms,
        // found at 667 ms, not at 334 + 334 = 668 ms.
        assert!(matches!(l.admit(&h, 666, UNIX_EPOCH), Admit::Empty(_)));
        assert!(matches!(l.admit(&h, 667, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&h, 999, UNIX_EPOCH), Admit::Empty(_)));
        assert!(matches!(l.admit(&h, 1000, UNIX_EPOCH), Admit::Token));

        // A bucket of one is full from 333.3 ms until the token is taken at 334 ms, and a
        // full bucket refills nothing: the next token is due 333.3 ms after 334 ms.
        let mut one = Limiter::new(rate);
        assert!(matches!(one.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(one.admit(&h, 334, UNIX_EPOCH), Admit::Token));
        assert!(matches!(one.admit(&h, 667, UNIX_EPOCH), Admit::Empty(_)));
        assert!(matches!(one.admit(&h, 668, UNIX_EPOCH), Admit::Token));
    }

    #[test]
    fn waiting_exactly_retry_after_finds_a_token() {
        // One token every 2.5 s (0.4 a second).
        let mut l = Limiter::new(RateLimit::millitokens_per_second(400));
        let h = RequestHeaders::from(&HeaderMap::new());
        assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        for at in [1, 700, 1499, 1500, 2000, 2499] {
            let seconds: u64 = retry_after(l.admit(&h, at, UNIX_EPOCH))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            // Due at 2500 ms: the whole seconds from `at`, rounded up.
            assert_eq!(seconds, (2500 - at).div_ceil(1000), "at {at} ms");
            // A fresh copy of the bucket, asked again exactly Retry-After later, has a token.
            let mut later = Limiter {
                config: l.config.clone(),
                buckets: l.buckets.clone(),
            };
            assert!(matches!(
                later.admit(&h, at + seconds * 1000, UNIX_EPOCH),
                Admit::Token
            ));
        }
    }

    #[test]
    fn client_scope_gives_each_client_its_own_bucket() {
        let mut l = Limiter::new(RateLimit::per_second(1).scope(LimitScope::Client));
        assert!(matches!(l.admit(&client("a"), 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&client("b"), 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(
            l.admit(&client("a"), 10, UNIX_EPOCH),
            Admit::Empty(_)
        ));
        assert!(matches!(
            l.admit(&client("a"), 1000, UNIX_EPOCH),
            Admit::Token
        ));
    }

    #[test]
    fn a_retry_after_among_the_answers_headers_is_the_only_one_sent() {
        let mut own = Respond::new(StatusCode::TOO_MANY_REQUESTS);
        own.headers
            .push((http::header::RETRY_AFTER, HeaderValue::from_static("9")));
        let mut l = Limiter::new(RateLimit::per_second(1).when_empty(own));
        let h = RequestHeaders::from(&HeaderMap::new());
        assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        let Admit::Empty(r) = l.admit(&h, 0, UNIX_EPOCH) else {
            panic!("the bucket is empty")
        };
        let lines: Vec<&[u8]> = r.retry_after_lines().map(|v| v.as_bytes()).collect();
        assert_eq!(lines, [&b"9"[..]]);
    }

    #[test]
    fn a_bucket_never_holds_more_than_burst() {
        let mut l = Limiter::new(RateLimit::per_second(10).burst(2));
        let h = RequestHeaders::from(&HeaderMap::new());
        // Take one token at 0, then an hour idle refills the bucket to two, not 36,001.
        assert!(matches!(l.admit(&h, 0, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&h, 3_600_000, UNIX_EPOCH), Admit::Token));
        assert!(matches!(l.admit(&h, 3_600_000, UNIX_EPOCH), Admit::Token));
        assert!(matches!(
            l.admit(&h, 3_600_000, UNIX_EPOCH),
            Admit::Empty(_)
        ));
    }

    #[test]
    fn presets_answer_as_aws_and_rocketmq_do() {
        let h = RequestHeaders::from(&HeaderMap::new());
        let mut aws = Limiter::new(RateLimit::per_second(1).aws_throttling());
        aws.admit(&h, 0, UNIX_EPOCH);
        let Admit::Empty(r) = aws.admit(&h, 0, UNIX_EPOCH) else {
            panic!("the bucket is empty")
        };
        assert_eq!(r.status, 400);
        assert!(r.body.starts_with(br#"{"__type":"ThrottlingException""#));
        let mut mq = Limiter::new(RateLimit::per_second(1).rocketmq_throttled());
        mq.admit(&h, 0, UNIX_EPOCH);
        let Admit::Empty(r) = mq.admit(&h, 0, UNIX_EPOCH) else {
            panic!("the bucket is empty")
        };
        assert_eq!(
            (r.status.as_u16(), &r.body[..9]),
            (429, &b"{\"code\":5"[..])
        );
    }
}
