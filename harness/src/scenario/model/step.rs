//! Script steps: what an endpoint does with the n-th request that reaches a route.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::duration::Millis;
use super::grpc::{GrpcStatusSpec, PushbackSpec};
use super::h2_fail::{GoAwayValue, RstStreamValue};
use super::headers::HeadersSpec;
use super::latency::{LatencySpec, one_entry};
use super::retry_after::RetryAfterSpec;
use super::values::{DurationRange, Probability, status_code};

/// Declares a step struct: the shared step fields plus some of its own. Script steps and
/// timeline steps differ only in `times` and `during`, and serde's `flatten` (which would
/// share the fields) loses source locations.
macro_rules! step_struct {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$pre_meta:meta])* $pre:ident : $pre_ty:ty, )*
        }
        {
            $( $(#[$post_meta:meta])* $post:ident : $post_ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$pre_meta])* pub $pre: $pre_ty, )*
            /// Respond with this status (100-599).
            #[serde(
                default,
                deserialize_with = "status_code::option",
                skip_serializing_if = "Option::is_none"
            )]
            #[cfg_attr(feature = "schema", schemars(range(min = 100, max = 599)))]
            pub status: Option<u16>,
            /// Response headers, as a mapping or a list of pairs (at most 64, of 64 KiB in
            /// all).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub headers: Option<HeadersSpec>,
            /// Response body (at most 1 MiB).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub body: Option<String>,
            /// A `Retry-After` header: seconds (at most 315,360,000 either way), an HTTP-date
            /// (at most 3650d away), or raw text (at most 64 KiB).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub retry_after: Option<RetryAfterSpec>,
            /// Time before the response head (or before the failure).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub latency: Option<LatencySpec>,
            /// Send the head at once and spread the body over this long after it (needs a
            /// non-empty `body`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub trickle: Option<Millis>,
            /// Fail the connection instead of responding.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fail: Option<FailSpec>,
            /// When the request's effect is committed (default: `before_response` for 2xx,
            /// `never` otherwise).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub commit: Option<CommitSpec>,
            /// Probability of taking `then` rather than `else`, drawn from the route's own
            /// substream of the run's seed.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub p: Option<Probability>,
            /// The step taken with probability `p`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub then: Option<Box<StepSpec>>,
            /// The step taken otherwise.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub r#else: Option<Box<StepSpec>>,
            /// Broker error code, such as 530, answered as `{"code": n, "message": ...}` with
            /// 429 for a throttling code (530, 42900, 215) and 500 for any other (broker
            /// endpoints only, 1 to 99,999).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub error_code: Option<i64>,
            /// Answer in gRPC with this status (`unavailable`, or a number 0-16): HTTP 200,
            /// the status in trailers, or in the head for an error without a `reply`
            /// (`protocol: http2` endpoints only).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub grpc: Option<GrpcStatusSpec>,
            /// The `grpc-message` of a `grpc` step: the status's text (percent-encoded when
            /// sent).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub message: Option<String>,
            /// The `grpc-retry-pushback-ms` of a `grpc` step: a duration, or `{ raw: "..." }`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub pushback: Option<PushbackSpec>,
            /// The response message of a `grpc` step, base64 (a serialized protobuf; the
            /// default is the empty message on `ok`, and none, a trailers-only answer,
            /// otherwise).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reply: Option<String>,
            $( $(#[$post_meta])* pub $post: $post_ty, )*
        }
    };
}

step_struct! {
    /// One step of a `script:`: respond (`status` with `headers`, `body`, `retry_after`,
    /// `latency`, `trickle`), fail the connection (`fail`), or choose at random (`p`, `then`,
    /// `else`); repeated `times` times. Exactly one of `status`, `fail` and `p` is given
    /// (or `error_code` on a broker).
    ///
    /// ```
    /// use retrylab::scenario::{FailSpec, Millis, RetryAfterSpec, StepSpec};
    ///
    /// let burst = StepSpec::status(503).times(2);
    /// assert_eq!((burst.status, burst.times), (Some(503), Some(2)));
    /// let limited = StepSpec::status(429).retry_after(RetryAfterSpec::Seconds(2));
    /// let slow = StepSpec::status(200).latency(Millis::from_ms(1500)).body(r#"{"id":"o-1"}"#);
    /// let reset = StepSpec::fail(FailSpec::reset());
    /// # let _ = (limited, slow, reset);
    /// ```
    StepSpec {
    }
    {
        /// Repeat this step for this many requests (at least 1); the last step repeats
        /// forever.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        times: Option<u32>,
    }
}

step_struct! {
    /// One step of a `timeline:`: the step fields plus `during: [a, b]`, the window of virtual
    /// time in which requests get this step: from `a` up to, not including, `b`.
    ///
    /// ```
    /// use retrylab::scenario::{DurationRange, Millis, TimelineStep};
    ///
    /// let mut t = TimelineStep::default();
    /// t.during = DurationRange::new(Millis::ZERO, Millis::from_secs(30)).unwrap();
    /// t.status = Some(503);
    /// assert_eq!(t.during.max, Millis::from_secs(30));
    /// ```
    TimelineStep {
        /// The window of virtual time, from the start of the run: a request arriving at `t`
        /// with `min <= t < max` gets this step.
        during: DurationRange,
    }
    {
    }
}

impl TimelineStep {
    /// Its step fields, as a script step (they differ only in `times` and `during`), for
    /// what treats both alike: support and the plan.
    pub(crate) fn as_step(&self) -> StepSpec {
        StepSpec {
            status: self.status,
            headers: self.headers.clone(),
            body: self.body.clone(),
            retry_after: self.retry_after.clone(),
            latency: self.latency.clone(),
            trickle: self.trickle,
            fail: self.fail,
            commit: self.commit,
            p: self.p,
            then: self.then.clone(),
            r#else: self.r#else.clone(),
            error_code: self.error_code,
            grpc: self.grpc,
            message: self.message.clone(),
            pushback: self.pushback.clone(),
            reply: self.reply.clone(),
            times: None,
        }
    }
}

impl StepSpec {
    /// A step that responds with `status`.
    pub fn status(status: u16) -> Self {
        StepSpec {
            status: Some(status),
            ..StepSpec::default()
        }
    }

    /// A broker's step that answers with error `code` (429 for a throttling code, else 500,
    /// with a JSON `{"code", "message"}` body).
    ///
    /// ```
    /// use retrylab::scenario::StepSpec;
    /// assert_eq!(StepSpec::error_code(530).error_code, Some(530));
    /// ```
    pub fn error_code(code: i64) -> Self {
        StepSpec {
            error_code: Some(code),
            ..StepSpec::default()
        }
    }

    /// A step that answers in gRPC with `status`.
    ///
    /// ```
    /// use retrylab::scenario::{GrpcStatusSpec, StepSpec};
    ///
    /// let unavailable = StepSpec::grpc(GrpcStatusSpec::named("unavailable").unwrap()).times(2);
    /// assert_eq!(unavailable.grpc.map(|s| s.name()), Some("UNAVAILABLE"));
    /// ```
    pub fn grpc(status: GrpcStatusSpec) -> Self {
        StepSpec {
            grpc: Some(status),
            ..StepSpec::default()
        }
    }

    /// Sets a `grpc` step's `grpc-retry-pushback-ms`.
    pub fn pushback(mut self, pushback: PushbackSpec) -> Self {
        self.pushback = Some(pushback);
        self
    }

    /// A step that fails the connection.
    pub fn fail(fail: FailSpec) -> Self {
        StepSpec {
            fail: Some(fail),
            ..StepSpec::default()
        }
    }

    /// A step that takes `then` with probability `p`, else `otherwise`.
    pub fn chance(p: Probability, then: StepSpec, otherwise: StepSpec) -> Self {
        StepSpec {
            p: Some(p),
            then: Some(Box::new(then)),
            r#else: Some(Box::new(otherwise)),
            ..StepSpec::default()
        }
    }

    /// Repeats the step `n` times.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers
            .get_or_insert_with(HeadersSpec::default)
            .push(name, value);
        self
    }

    /// Sets the response body.
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sets the `Retry-After` header.
    pub fn retry_after(mut self, retry_after: RetryAfterSpec) -> Self {
        self.retry_after = Some(retry_after);
        self
    }

    /// Waits this long before the response head.
    pub fn latency(mut self, latency: impl Into<LatencySpec>) -> Self {
        self.latency = Some(latency.into());
        self
    }

    /// Commits the request's effect at this point.
    pub fn commit(mut self, commit: CommitSpec) -> Self {
        self.commit = Some(commit);
        self
    }
}

/// When a step commits the request's effect to the endpoint's ledger.
///
/// ```
/// use retrylab::scenario::CommitSpec;
/// assert_eq!(serde_saphyr::to_string(&CommitSpec::BeforeResponse).unwrap().trim(), "before_response");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CommitSpec {
    /// As soon as the request arrives (the client may still see a failure).
    Arrival,
    /// Just before the response head is sent.
    BeforeResponse,
    /// Never.
    Never,
}

/// How a step fails the connection: `close` (FIN), `reset` (RST), `hang` (read the request
/// and never answer), or `{ close: { after_bytes: n } }` / `{ reset: { after_bytes: n } }`
/// after sending part of the response. On HTTP/2, also the protocol's own faults: a stream
/// reset, `{ rst_stream: refused_stream }` before the head or
/// `{ rst_stream: { code: cancel, body_bytes: n } }` after it, and a GOAWAY,
/// `{ goaway: graceful }` or `{ goaway: enhance_your_calm }` (abrupt, with its code).
///
/// ```
/// use retrylab::scenario::FailSpec;
/// assert_eq!(FailSpec::close_after(10), FailSpec::Close { after_bytes: Some(10) });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailSpec {
    /// Close the connection with a FIN.
    Close {
        /// Send this many bytes of the response first (at most 16 MiB).
        after_bytes: Option<u64>,
    },
    /// Reset the connection with an RST.
    Reset {
        /// Send this many bytes of the response first (at most 16 MiB).
        after_bytes: Option<u64>,
    },
    /// Read the request and never answer; the connection stays open.
    Hang,
    /// HTTP/2: reset the request's stream with this code, before the head (`body_bytes:
    /// None`) or after the head and that many bytes of the body.
    RstStream {
        /// The `RST_STREAM`'s error code.
        code: retrylab_endpoints::H2Code,
        /// The body bytes sent before the reset, after the head.
        body_bytes: Option<u64>,
    },
    /// HTTP/2: a GOAWAY, graceful (`None`: the response goes out, streams in flight finish)
    /// or abrupt with a code (the connection closes under every stream on it).
    GoAway {
        /// The abrupt GOAWAY's code.
        code: Option<retrylab_endpoints::H2Code>,
    },
}

impl FailSpec {
    /// Whether only HTTP/2 can make this failure.
    pub fn is_http2(&self) -> bool {
        matches!(self, FailSpec::RstStream { .. } | FailSpec::GoAway { .. })
    }

    /// Whether the step's response (its status, headers and body) goes out, at least in
    /// part, before the failure.
    pub fn answers(&self) -> bool {
        match *self {
            FailSpec::Close { after_bytes } | FailSpec::Reset { after_bytes } => {
                after_bytes.is_some()
            }
            FailSpec::RstStream { body_bytes, .. } => body_bytes.is_some(),
            FailSpec::GoAway { code } => code.is_none(),
            FailSpec::Hang => false,
        }
    }

    /// `close`.
    pub fn close() -> Self {
        FailSpec::Close { after_bytes: None }
    }

    /// `reset`.
    pub fn reset() -> Self {
        FailSpec::Reset { after_bytes: None }
    }

    /// `{ close: { after_bytes: n } }`.
    pub fn close_after(n: u64) -> Self {
        FailSpec::Close {
            after_bytes: Some(n),
        }
    }

    /// `{ reset: { after_bytes: n } }`.
    pub fn reset_after(n: u64) -> Self {
        FailSpec::Reset {
            after_bytes: Some(n),
        }
    }
}

/// The `{ after_bytes: n }` of a partial close or reset.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct AfterBytes {
    after_bytes: u64,
}

const FAIL_TAGS: &[&str] = &["close", "reset", "rst_stream", "goaway"];
const FAIL_WORDS: &[&str] = &["close", "reset", "hang"];

impl Serialize for FailSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            FailSpec::Close { after_bytes: None } => serializer.serialize_str("close"),
            FailSpec::Reset { after_bytes: None } => serializer.serialize_str("reset"),
            FailSpec::Hang => serializer.serialize_str("hang"),
            FailSpec::GoAway { code } => one_entry(serializer, "goaway", &GoAwayValue(code)),
            FailSpec::RstStream { code, body_bytes } => one_entry(
                serializer,
                "rst_stream",
                &RstStreamValue { code, body_bytes },
            ),
            FailSpec::Close {
                after_bytes: Some(n),
            } => one_entry(serializer, "close", &AfterBytes { after_bytes: n }),
            FailSpec::Reset {
                after_bytes: Some(n),
            } => one_entry(serializer, "reset", &AfterBytes { after_bytes: n }),
        }
    }
}

impl<'de> Deserialize<'de> for FailSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FailSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`close`, `reset`, `hang`, `{ close: { after_bytes: n } }`, `{ reset: { after_bytes: n } }`, `{ rst_stream: <code> }` or `{ goaway: graceful | <code> }`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FailSpec, E> {
                match v {
                    "close" => Ok(FailSpec::close()),
                    "reset" => Ok(FailSpec::reset()),
                    "hang" => Ok(FailSpec::Hang),
                    other => Err(E::unknown_variant(other, FAIL_WORDS)),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FailSpec, A::Error> {
                super::values::one_key_map(map, FAIL_TAGS, |tag, map| match tag {
                    "rst_stream" => {
                        let RstStreamValue { code, body_bytes } = map.next_value()?;
                        Ok(FailSpec::RstStream { code, body_bytes })
                    }
                    "goaway" => {
                        let GoAwayValue(code) = map.next_value()?;
                        Ok(FailSpec::GoAway { code })
                    }
                    tag => {
                        let AfterBytes { after_bytes } = map.next_value()?;
                        Ok(if tag == "close" {
                            FailSpec::close_after(after_bytes)
                        } else {
                            FailSpec::reset_after(after_bytes)
                        })
                    }
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}
