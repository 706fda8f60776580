//! An endpoint's deduplication: `dedupe: { key, in_flight, mismatch, replay }`.

use serde::{Deserialize, Serialize};

use super::duration::DurationOrNone;
use super::step::StepSpec;
use super::values::status_code;

/// Idempotency-key deduplication:
/// `{ header: Idempotency-Key, replay: first_committed, in_flight: 409, mismatch: 422, ttl: none }`
/// (only `header` is required; the rest are the defaults). `in_flight` and `mismatch` are a
/// status or a whole answer (`{ status, headers, body, retry_after }`).
///
/// ```
/// use retrylab::scenario::DedupeSpec;
///
/// let d = DedupeSpec::header("Idempotency-Key");
/// assert_eq!((d.in_flight.status(), d.mismatch.status()), (Some(409), Some(422)));
/// let d: DedupeSpec = serde_saphyr::from_str(
///     "{ header: Idempotency-Key, in_flight: { status: 409, retry_after: 1 }, mismatch: 400 }",
/// )
/// .unwrap();
/// assert_eq!((d.in_flight.status(), d.mismatch.status()), (Some(409), Some(400)));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct DedupeSpec {
    /// The header carrying the key.
    pub header: String,
    /// What a repeated key gets.
    #[serde(default, skip_serializing_if = "DedupeReplay::is_default")]
    pub replay: DedupeReplay,
    /// The answer to a key whose first request is still in flight: a status or a step's
    /// `status`, `headers`, `body` and `retry_after` (default 409).
    #[serde(
        default = "default_in_flight",
        skip_serializing_if = "is_default_in_flight"
    )]
    pub in_flight: DedupeAnswerSpec,
    /// The answer to a key reused with a different body: a status or a step's `status`,
    /// `headers`, `body` and `retry_after` (default 422).
    #[serde(
        default = "default_mismatch",
        skip_serializing_if = "is_default_mismatch"
    )]
    pub mismatch: DedupeAnswerSpec,
    /// How long a key is remembered (default `none`: forever).
    #[serde(default, skip_serializing_if = "DurationOrNone::is_none")]
    pub ttl: DurationOrNone,
}

fn default_in_flight() -> DedupeAnswerSpec {
    DedupeAnswerSpec::Status(409)
}
fn is_default_in_flight(v: &DedupeAnswerSpec) -> bool {
    *v == default_in_flight()
}
fn default_mismatch() -> DedupeAnswerSpec {
    DedupeAnswerSpec::Status(422)
}
fn is_default_mismatch(v: &DedupeAnswerSpec) -> bool {
    *v == default_mismatch()
}

impl DedupeSpec {
    /// Deduplicate on `header`, with the default rules.
    pub fn header(header: impl Into<String>) -> Self {
        DedupeSpec {
            header: header.into(),
            replay: DedupeReplay::default(),
            in_flight: default_in_flight(),
            mismatch: default_mismatch(),
            ttl: DurationOrNone::None,
        }
    }

    /// Sets the answer to a key in flight.
    pub fn in_flight(mut self, answer: DedupeAnswerSpec) -> Self {
        self.in_flight = answer;
        self
    }

    /// Sets the answer to a key reused with another body.
    pub fn mismatch(mut self, answer: DedupeAnswerSpec) -> Self {
        self.mismatch = answer;
        self
    }
}

/// What dedupe answers a key in flight, or a key reused with another body: a bare status
/// (`409`), or a step's `status`, `headers`, `body` and `retry_after`, as an API answers with
/// a JSON error and a `Retry-After`.
///
/// ```
/// use retrylab::scenario::DedupeAnswerSpec;
///
/// let a: DedupeAnswerSpec = serde_saphyr::from_str("409").unwrap();
/// assert_eq!(a, DedupeAnswerSpec::Status(409));
/// let a: DedupeAnswerSpec =
///     serde_saphyr::from_str(r#"{ status: 409, body: '{"error":"in flight"}', retry_after: 2 }"#).unwrap();
/// assert_eq!((a.status(), a.step().and_then(|s| s.body.as_deref())), (Some(409), Some(r#"{"error":"in flight"}"#)));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DedupeAnswerSpec {
    /// A bare status.
    Status(u16),
    /// A response written out.
    Step(Box<StepSpec>),
}

impl DedupeAnswerSpec {
    /// The step, when written out.
    pub fn step(&self) -> Option<&StepSpec> {
        match self {
            DedupeAnswerSpec::Step(step) => Some(step),
            DedupeAnswerSpec::Status(_) => None,
        }
    }

    /// The status it answers with; `None` for a written-out answer without one, which
    /// validation reports.
    pub fn status(&self) -> Option<u16> {
        match self {
            DedupeAnswerSpec::Status(status) => Some(*status),
            DedupeAnswerSpec::Step(step) => step.status,
        }
    }
}

impl Serialize for DedupeAnswerSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DedupeAnswerSpec::Status(status) => status.serialize(serializer),
            DedupeAnswerSpec::Step(step) => step.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for DedupeAnswerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DedupeAnswerSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a status code such as `409`, or a step such as `{ status: 409 }`")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DedupeAnswerSpec, E> {
                status_code::check(v).map(DedupeAnswerSpec::Status)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DedupeAnswerSpec, E> {
                Err(E::custom(format!(
                    "status code {v} is out of range, expected {}",
                    status_code::EXPECTED
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DedupeAnswerSpec, A::Error> {
                StepSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|step| DedupeAnswerSpec::Step(Box::new(step)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// What a request with an already-seen key gets.
///
/// ```
/// use retrylab::scenario::DedupeReplay;
/// assert_eq!(DedupeReplay::default(), DedupeReplay::FirstCommitted);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DedupeReplay {
    /// The response of the first request whose effect was committed.
    #[default]
    FirstCommitted,
}

impl DedupeReplay {
    fn is_default(&self) -> bool {
        *self == DedupeReplay::FirstCommitted
    }
}
