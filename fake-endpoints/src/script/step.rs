//! One step of a script: what a route does for one request.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};

use super::h2::H2Code;
use super::latency::LatencyDistribution;
use super::trickle::Pace;
use crate::http::grpc::{GrpcCode, GrpcReply};
use crate::http::response::Respond;
use crate::http::retry_after::RetryAfter;

/// A transport failure instead of (or in the middle of) a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fail {
    /// Close the connection (FIN) without sending a byte.
    Close,
    /// Abort the connection (RST) without sending a byte.
    Reset,
    /// Read the request and never answer; the connection stays open.
    Hang,
    /// Send the first `bytes` bytes of the step's response as written on the wire (the head
    /// counts), then FIN.
    CloseAfter {
        /// Bytes of the response sent before the close.
        bytes: u64,
    },
    /// Send the first `bytes` bytes of the step's response as written on the wire (the head
    /// counts), then RST.
    ResetAfter {
        /// Bytes of the response sent before the reset.
        bytes: u64,
    },
    /// HTTP/2 only: reset the request's stream with `RST_STREAM` and `code`, before the head
    /// (`body_bytes: None`), or after the head and the body's first `body_bytes` bytes. The
    /// connection and its other streams go on.
    RstStream {
        /// The `RST_STREAM`'s error code.
        code: H2Code,
        /// Send the head and this many bytes of the body first.
        body_bytes: Option<u64>,
    },
    /// HTTP/2 only: a GOAWAY when the step is reached. Graceful (`code: None`): the step's
    /// response goes out as written, the streams in flight finish, and the connection closes
    /// once they are done. Abrupt (`Some(code)`): GOAWAY with that code, and the connection
    /// closes at once, failing every stream on it, this one included. Its last stream id is
    /// the highest the server has read (h2 chooses it).
    GoAway {
        /// The GOAWAY's error code for an abrupt one.
        code: Option<H2Code>,
    },
}

impl Fail {
    /// [`Fail::CloseAfter`].
    pub fn close_after(bytes: u64) -> Self {
        Self::CloseAfter { bytes }
    }

    /// [`Fail::ResetAfter`].
    pub fn reset_after(bytes: u64) -> Self {
        Self::ResetAfter { bytes }
    }

    /// How many bytes of the response (head included, as written on the wire) go out before
    /// the failure, for the `*After` modes.
    pub fn after_bytes(self) -> Option<u64> {
        match self {
            Self::CloseAfter { bytes } | Self::ResetAfter { bytes } => Some(bytes),
            Self::Close
            | Self::Reset
            | Self::Hang
            | Self::RstStream { .. }
            | Self::GoAway { .. } => None,
        }
    }

    /// Whether the step's response (or its head) goes out before the failure: a cut after
    /// some bytes, a stream reset after the head, a graceful GOAWAY.
    pub fn answers(self) -> bool {
        match self {
            Self::CloseAfter { .. } | Self::ResetAfter { .. } => true,
            Self::RstStream { body_bytes, .. } => body_bytes.is_some(),
            Self::GoAway { code } => code.is_none(),
            Self::Close | Self::Reset | Self::Hang => false,
        }
    }

    /// Whether only HTTP/2 can make the failure (a stream reset, a GOAWAY).
    pub fn is_http2(self) -> bool {
        matches!(self, Self::RstStream { .. } | Self::GoAway { .. })
    }

    /// Whether the failure aborts the connection with RST (otherwise FIN, or nothing for hang).
    pub fn is_reset(self) -> bool {
        matches!(self, Self::Reset | Self::ResetAfter { .. })
    }
}

/// When a step's effect commits (the ledger's effect record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Commit {
    /// As soon as the request has been read.
    Arrival,
    /// After the latency, just before the head is sent (or the failure happens).
    BeforeResponse,
    /// No effect.
    Never,
}

/// A random step's choice: `then` with probability `p`, else `otherwise`.
#[derive(Clone, Debug)]
pub struct Chance {
    /// The probability of `then`, in `[0, 1]`.
    pub p: f64,
    /// The step taken when the draw is below `p`.
    pub then: Arc<Step>,
    /// The step taken otherwise.
    pub otherwise: Arc<Step>,
}

/// Which branch of a random step answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Branch {
    /// `then`, taken with probability `p`.
    Then,
    /// `else`.
    Else,
}

impl Chance {
    /// The branch a draw `u` in `[0, 1)` takes: `then` when `u < p`, so `p: 1` always takes
    /// it and `p: 0` never does.
    pub fn branch(&self, u: f64) -> (Branch, &Arc<Step>) {
        if u < self.p {
            (Branch::Then, &self.then)
        } else {
            (Branch::Else, &self.otherwise)
        }
    }
}

/// Equal when `p` has the same bits: a probability is never NaN here.
impl PartialEq for Chance {
    fn eq(&self, other: &Self) -> bool {
        self.p.to_bits() == other.p.to_bits()
            && self.then == other.then
            && self.otherwise == other.otherwise
    }
}

impl Eq for Chance {}

/// What a route does for one request: a response, or a failure, after a latency.
///
/// ```
/// use retrylab_endpoints::{ms, Commit, Fail, Step};
///
/// let script = [
///     Step::status(429).retry_after(2),
///     Step::status(503).times(2),
///     Step::fail(Fail::Reset).commit(Commit::Arrival),
///     Step::status(200).latency(ms(1500)).header("content-type", "application/json").body(r#"{"id":"o-1"}"#),
///     Step::status(200).body("0123456789").fail_with(Fail::close_after(4)),
/// ];
/// assert_eq!(script[1].times, 2);
/// assert_eq!(script[3].effective_commit(), Commit::BeforeResponse);
/// assert_eq!(script[0].effective_commit(), Commit::Never);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The response; for `Fail::CloseAfter`/`ResetAfter` the one that gets cut short, unused by
    /// the other failures.
    pub respond: Respond,
    /// A failure replacing or truncating the response.
    pub fail: Option<Fail>,
    /// Delay between the request's arrival and the head (or the failure).
    pub latency: Duration,
    /// When set, each request draws its latency from this distribution (from the route's
    /// latency draws, [`Route::latency_draws`](crate::Route::latency_draws)) instead of
    /// waiting `latency`.
    pub latency_distribution: Option<LatencyDistribution>,
    /// Time over which the body is spread after the head, in whole milliseconds (zero: the
    /// body goes out with the head). See [`Step::trickle`] for the chunking.
    pub trickle: Duration,
    /// How many consecutive requests this step answers (the last step of a script repeats
    /// forever whatever this says; `0` skips the step).
    pub times: u32,
    /// When the effect commits; `None` = the default (see [`Step::effective_commit`]).
    pub commit: Option<Commit>,
    /// A random step: the choice that decides which step answers (its `respond`, `fail`,
    /// `latency` and `commit` are the branch's, and the fields above are unused but
    /// `times`).
    pub chance: Option<Chance>,
}

impl Step {
    /// Respond with `status`.
    ///
    /// # Panics
    /// If `status` is outside 100..=999 (a typo in a test, not a runtime condition).
    pub fn status(status: u16) -> Self {
        match StatusCode::from_u16(status) {
            Ok(status) => Self::respond(Respond::new(status)),
            Err(_) => panic!("invalid HTTP status code {status}"),
        }
    }

    /// Respond with a prepared [`Respond`] (for code that already holds validated values).
    pub fn respond(respond: Respond) -> Self {
        Self {
            respond,
            fail: None,
            latency: Duration::ZERO,
            latency_distribution: None,
            trickle: Duration::ZERO,
            times: 1,
            commit: None,
            chance: None,
        }
    }

    /// Answer in gRPC (on an HTTP/2 connection): HTTP 200 and `reply`'s message and status
    /// (see [`GrpcReply`]). Its effect commits by default only when the status is `OK`.
    ///
    /// ```
    /// use retrylab_endpoints::{Commit, GrpcCode, GrpcReply, Step};
    ///
    /// let unavailable = Step::grpc(GrpcReply::new(GrpcCode::UNAVAILABLE).pushback_ms(500)).times(2);
    /// assert_eq!(unavailable.respond.status.as_u16(), 200);
    /// assert_eq!(unavailable.effective_commit(), Commit::Never);
    /// assert_eq!(Step::grpc(GrpcReply::new(GrpcCode::OK)).effective_commit(), Commit::BeforeResponse);
    /// ```
    pub fn grpc(reply: GrpcReply) -> Self {
        let mut respond = Respond::new(StatusCode::OK);
        respond.grpc = Some(Arc::new(reply));
        Self::respond(respond)
    }

    /// A random step: `then` with probability `p` (in `[0, 1]`), else `otherwise`. It counts
    /// as one step of its script whichever branch it takes, so `times` belongs to it; the
    /// draws come from the route's [`Draws`](crate::Draws).
    ///
    /// ```
    /// use retrylab_endpoints::{Fail, Step};
    ///
    /// let flaky = Step::chance(0.3, Step::status(503), Step::status(200)).times(5);
    /// assert_eq!(flaky.times, 5);
    /// assert_eq!(flaky.chance.unwrap().p, 0.3);
    /// # let _ = Step::chance(0.1, Step::fail(Fail::Reset), Step::status(200));
    /// ```
    pub fn chance(p: f64, then: Step, otherwise: Step) -> Self {
        Self {
            chance: Some(Chance {
                p,
                then: Arc::new(then),
                otherwise: Arc::new(otherwise),
            }),
            ..Self::status(200)
        }
    }

    /// Fail instead of responding. For the `*After` modes the truncated response is a bare
    /// 200 unless [`Step::fail_with`] is used on a response step.
    pub fn fail(fail: Fail) -> Self {
        Self::respond(Respond::default()).fail_with(fail)
    }

    /// Add a failure to this step: `Step::status(200).body(..).fail_with(Fail::close_after(4))`.
    pub fn fail_with(mut self, fail: Fail) -> Self {
        self.fail = Some(fail);
        self
    }

    /// Append a header (names may repeat).
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
        self.respond.headers.push(header_pair(name, value));
        self
    }

    /// Set the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.respond.body = body.into();
        self
    }

    /// Send a `Retry-After` header: `2`, `RetryAfter::seconds(-1)`, `"soon"`,
    /// `RetryAfter::http_date(secs(30))`.
    pub fn retry_after(mut self, retry_after: impl Into<RetryAfter>) -> Self {
        self.respond.retry_after = Some(retry_after.into());
        self
    }

    /// Wait this long after the request arrived before the head (or the failure).
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Draw each request's latency from `distribution` instead (from the route's
    /// [`latency_draws`](crate::Route::latency_draws); without them every draw is one half).
    ///
    /// ```
    /// use retrylab_endpoints::{LatencyDistribution, Step};
    ///
    /// let step = Step::status(200)
    ///     .latency_sampled(LatencyDistribution::Exponential { mean_ms: 20, max_ms: Some(2000) });
    /// assert!(step.latency_distribution.is_some());
    /// ```
    pub fn latency_sampled(mut self, distribution: LatencyDistribution) -> Self {
        self.latency_distribution = Some(distribution);
        self
    }

    /// Send the head at once (after the latency), then spread the body over `trickle`: a
    /// body of `len` bytes is split into `n = min(len, trickle in whole ms, 1000)` chunks,
    /// chunk `k` (1..=n) holding bytes `floor((k-1) × len / n)..floor(k × len / n)` (sizes
    /// differ by one byte at most) and leaving `floor(k × trickle / n)` ms after the head, so
    /// the last byte leaves exactly `trickle` after it. Sub-millisecond parts of `trickle` are dropped. With a `*After`
    /// failure the cut happens when the chunk carrying its last byte leaves.
    ///
    /// ```
    /// use retrylab_endpoints::{ms, secs, Step};
    ///
    /// // "0123456789" over 2s: ten one-byte chunks, one every 200ms after the head.
    /// let step = Step::status(200).latency(ms(100)).body("0123456789").trickle(secs(2));
    /// assert_eq!(step.trickle, secs(2));
    /// assert_eq!(step.trickle_schedule(), (1..=10).map(|k| (k * 200, 1)).collect::<Vec<_>>());
    /// ```
    pub fn trickle(mut self, trickle: Duration) -> Self {
        self.trickle = trickle;
        self
    }

    /// The chunks a trickled body goes out in, as (ms after the head, bytes); empty when the
    /// step does not trickle or has no body. See [`Step::trickle`].
    pub fn trickle_schedule(&self) -> Vec<(u64, usize)> {
        let len = self.respond.body.len();
        let Some(pace) = Pace::new(len, self.trickle) else {
            return Vec::new();
        };
        (1..=pace.chunks)
            .map(|k| {
                let bytes = pace.bytes(k);
                (pace.offset_ms(k), bytes.end - bytes.start)
            })
            .collect()
    }

    /// Answer `times` consecutive requests with this step.
    pub fn times(mut self, times: u32) -> Self {
        self.times = times;
        self
    }

    /// Commit the effect at this point instead of the default.
    pub fn commit(mut self, commit: Commit) -> Self {
        self.commit = Some(commit);
        self
    }

    /// The commit point in force: the explicit one, else `BeforeResponse` when the step sends a
    /// 2xx head (complete or truncated), else `Never`.
    pub fn effective_commit(&self) -> Commit {
        if let Some(commit) = self.commit {
            return commit;
        }
        let sends_head = self.fail.is_none_or(|f| f.after_bytes().is_some());
        // A gRPC answer is HTTP 200 whatever its status: only `OK` is a success.
        let succeeded = match &self.respond.grpc {
            Some(reply) => reply.code == GrpcCode::OK,
            None => self.respond.status.is_success(),
        };
        if sends_head && succeeded {
            Commit::BeforeResponse
        } else {
            Commit::Never
        }
    }
}

/// Converts a header pair for the builders.
///
/// # Panics
/// On an invalid name or value, naming it (builders are test code; a clear panic beats a
/// silently dropped header).
pub(crate) fn header_pair<N, V>(name: N, value: V) -> (HeaderName, HeaderValue)
where
    N: TryInto<HeaderName>,
    N::Error: Debug,
    V: TryInto<HeaderValue>,
    V::Error: Debug,
{
    let name = match name.try_into() {
        Ok(name) => name,
        Err(e) => panic!("invalid header name: {e:?}"),
    };
    match value.try_into() {
        Ok(value) => (name, value),
        Err(e) => panic!("invalid value for header {name}: {e:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::DEFAULT_EPOCH_UNIX_MS;
    use std::time::UNIX_EPOCH;

    #[test]
    fn certain_and_impossible_choices() {
        let sure = Chance {
            p: 1.0,
            then: Arc::new(Step::status(503)),
            otherwise: Arc::new(Step::status(200)),
        };
        let (branch, step) = sure.branch(0.999_999);
        assert_eq!((branch, step.respond.status.as_u16()), (Branch::Then, 503));
        let never = Chance { p: 0.0, ..sure };
        let (branch, step) = never.branch(0.0);
        assert_eq!((branch, step.respond.status.as_u16()), (Branch::Else, 200));
    }

    #[test]
    fn default_commit_depends_on_status_and_failure() {
        assert_eq!(Step::status(201).effective_commit(), Commit::BeforeResponse);
        assert_eq!(Step::status(503).effective_commit(), Commit::Never);
        assert_eq!(Step::fail(Fail::Reset).effective_commit(), Commit::Never);
        assert_eq!(Step::fail(Fail::Hang).effective_commit(), Commit::Never);
        let truncated = Step::status(200).fail_with(Fail::close_after(3));
        assert_eq!(truncated.effective_commit(), Commit::BeforeResponse);
        let explicit = Step::fail(Fail::Reset).commit(Commit::BeforeResponse);
        assert_eq!(explicit.effective_commit(), Commit::BeforeResponse);
        assert_eq!(
            Step::status(200).commit(Commit::Never).effective_commit(),
            Commit::Never
        );
    }

    #[test]
    fn render_keeps_header_order_and_appends_retry_after() {
        let step = Step::status(429)
            .header("x-b", "1")
            .header("x-a", "2")
            .header("x-b", "3")
            .retry_after(7);
        let now = UNIX_EPOCH + Duration::from_millis(DEFAULT_EPOCH_UNIX_MS);
        let sent = step.respond.render(now);
        let names: Vec<_> = sent
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                ("x-b", "1"),
                ("x-a", "2"),
                ("x-b", "3"),
                ("retry-after", "7")
            ]
        );
    }

    #[test]
    fn a_trickle_spreads_the_body_in_equal_chunks_ending_on_time() {
        // 7 bytes over 3ms: 3 chunks (2, 2, 3 bytes) at 1, 2 and 3ms.
        let step = Step::status(200)
            .body("abcdefg")
            .trickle(Duration::from_millis(3));
        assert_eq!(step.trickle_schedule(), [(1, 2), (2, 2), (3, 3)]);
        // 3 bytes over 1s: one byte every 333ms, the last at exactly 1000ms.
        let step = Step::status(200)
            .body("abc")
            .trickle(Duration::from_secs(1));
        assert_eq!(step.trickle_schedule(), [(333, 1), (666, 1), (1000, 1)]);
        // A large body over a long time: capped at 1000 chunks, the last at the end.
        let step = Step::status(200)
            .body(vec![b'x'; 4096])
            .trickle(Duration::from_secs(3600));
        let schedule = step.trickle_schedule();
        assert_eq!(schedule.len(), 1000);
        assert_eq!(schedule[0], (3600, 4));
        assert_eq!(schedule[999], (3_600_000, 5));
        assert_eq!(schedule.iter().map(|c| c.1).sum::<usize>(), 4096);
        // Nothing to spread.
        assert!(
            Step::status(200)
                .trickle(Duration::from_secs(1))
                .trickle_schedule()
                .is_empty()
        );
        assert!(
            Step::status(200)
                .body("x")
                .trickle(Duration::from_micros(900))
                .trickle_schedule()
                .is_empty()
        );
    }

    #[test]
    #[should_panic(expected = "invalid HTTP status code")]
    fn invalid_status_panics() {
        let _ = Step::status(42);
    }
}
