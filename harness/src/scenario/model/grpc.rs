//! The gRPC parts of a step: `grpc: <status>` and `pushback:` (docs/scenario-format.md#grpc-steps).

use std::fmt;

use base64::Engine as _;
use retrylab_endpoints::GrpcCode;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::duration::Millis;
use super::latency::one_entry;

/// A gRPC status as a step writes it: its name in snake case (`unavailable`, as gRPC spells
/// it but lower case; upper case is read too) or its number, 0 to 16.
///
/// ```
/// use retrylab::scenario::GrpcStatusSpec;
///
/// let status: GrpcStatusSpec = serde_saphyr::from_str("unavailable").unwrap();
/// assert_eq!(status, GrpcStatusSpec::new(14).unwrap());
/// assert_eq!(status.name(), "UNAVAILABLE");
/// let err = serde_saphyr::from_str::<GrpcStatusSpec>("unavailible").unwrap_err().to_string();
/// assert!(err.contains("expected one of ok, cancelled"), "{err}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GrpcStatusSpec(GrpcCode);

impl GrpcStatusSpec {
    /// The status numbered `code` (0 to 16).
    pub fn new(code: u32) -> Option<GrpcStatusSpec> {
        GrpcCode::new(code).map(GrpcStatusSpec)
    }

    /// The status named `name` (`unavailable`).
    pub fn named(name: &str) -> Option<GrpcStatusSpec> {
        GrpcCode::from_name(name).map(GrpcStatusSpec)
    }

    /// The endpoint's code.
    pub fn code(self) -> GrpcCode {
        self.0
    }

    /// The name as gRPC's documentation spells it (`UNAVAILABLE`).
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

/// What an unknown status says it expected.
fn expected_statuses() -> String {
    let names: Vec<String> = GrpcCode::snake_names().collect();
    format!("one of {}, or a number from 0 to 16", names.join(", "))
}

impl Serialize for GrpcStatusSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.name().to_ascii_lowercase())
    }
}

impl<'de> Deserialize<'de> for GrpcStatusSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = GrpcStatusSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a gRPC status such as `unavailable` or `14`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<GrpcStatusSpec, E> {
                GrpcStatusSpec::named(v).ok_or_else(|| {
                    E::custom(format!(
                        "unknown gRPC status `{v}`, expected {}",
                        expected_statuses()
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<GrpcStatusSpec, E> {
                u32::try_from(v)
                    .ok()
                    .and_then(GrpcStatusSpec::new)
                    .ok_or_else(|| {
                        E::custom(format!(
                            "gRPC status {v} is out of range, expected {}",
                            expected_statuses()
                        ))
                    })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<GrpcStatusSpec, E> {
                Err(E::custom(format!(
                    "gRPC status {v} is out of range, expected {}",
                    expected_statuses()
                )))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The `grpc-retry-pushback-ms` a step sends: a duration (`500ms`, sent as whole
/// milliseconds, `500`) or `{ raw: "..." }`, any text sent verbatim (a negative or
/// malformed value, to try a client's handling of one).
///
/// ```
/// use retrylab::scenario::{Millis, PushbackSpec};
///
/// let pushback: PushbackSpec = serde_saphyr::from_str("500ms").unwrap();
/// assert_eq!(pushback, PushbackSpec::After(Millis::from_ms(500)));
/// assert_eq!(pushback.value(), "500");
/// let raw: PushbackSpec = serde_saphyr::from_str("{ raw: \"-1\" }").unwrap();
/// assert_eq!(raw.value(), "-1");
/// let err = serde_saphyr::from_str::<PushbackSpec>("-500ms").unwrap_err().to_string();
/// assert!(err.contains("negative pushback"), "{err}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PushbackSpec {
    /// Retry after this long.
    After(Millis),
    /// This text, verbatim.
    Raw(String),
}

impl PushbackSpec {
    /// The header value as sent.
    pub fn value(&self) -> String {
        match self {
            PushbackSpec::After(ms) => ms.as_ms().to_string(),
            PushbackSpec::Raw(raw) => raw.clone(),
        }
    }
}

const EXPECTED_PUSHBACK: &str =
    "a duration such as `500ms`, or `{ raw: \"-1\" }` to send any value verbatim";

impl Serialize for PushbackSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PushbackSpec::After(ms) => ms.serialize(serializer),
            PushbackSpec::Raw(raw) => one_entry(serializer, "raw", raw),
        }
    }
}

impl<'de> Deserialize<'de> for PushbackSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PushbackSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED_PUSHBACK)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PushbackSpec, E> {
                if v.trim_start().starts_with('-') {
                    // gRFC A6: a negative pushback means "do not retry"; a file says so
                    // verbatim, so that a typo never sends one.
                    return Err(E::custom(format!(
                        "negative pushback `{v}`, expected {EXPECTED_PUSHBACK} (gRFC A6 reads \
                         a negative one as \"do not retry\")"
                    )));
                }
                Millis::deserialize(de::value::StrDeserializer::<E>::new(v))
                    .map(PushbackSpec::After)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PushbackSpec, E> {
                Millis::deserialize(de::value::U64Deserializer::<E>::new(v))
                    .map(PushbackSpec::After)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PushbackSpec, E> {
                Err(E::custom(format!(
                    "negative pushback `{v}`, expected {EXPECTED_PUSHBACK}"
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PushbackSpec, A::Error> {
                let mut raw = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "raw" => raw = Some(map.next_value::<String>()?),
                        other => return Err(de::Error::unknown_field(other, &["raw"])),
                    }
                }
                raw.map(PushbackSpec::Raw).ok_or_else(|| {
                    de::Error::custom(format!("empty pushback, expected {EXPECTED_PUSHBACK}"))
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A `reply`'s bytes: standard base64, padded or not.
pub(crate) fn decode_reply(reply: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(reply.trim())
}
