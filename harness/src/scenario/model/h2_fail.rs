//! The values of HTTP/2's own faults in a step's `fail:`: an error code by its name
//! (`refused_stream`), `rst_stream`'s `code` with the body bytes sent before the reset, and
//! `goaway`'s `graceful` or code.

use std::fmt;
use std::sync::LazyLock;

use retrylab_endpoints::H2Code;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

/// An HTTP/2 error code written by its name, as h2's `Reason` names it in snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodeName(pub(crate) H2Code);

/// The code `name` stands for, or an error listing the names there are.
fn code<E: de::Error>(name: &str) -> Result<H2Code, E> {
    H2Code::from_name(name).ok_or_else(|| E::unknown_variant(name, H2Code::NAMES))
}

impl Serialize for CodeName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CodeName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CodeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an HTTP/2 error code such as `refused_stream` or `cancel`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CodeName, E> {
                code(v).map(CodeName)
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// `goaway`'s value: `graceful` (`None`), or the code of an abrupt one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GoAwayValue(pub(crate) Option<H2Code>);

impl Serialize for GoAwayValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => serializer.serialize_str("graceful"),
            Some(code) => CodeName(code).serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for GoAwayValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = GoAwayValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`graceful`, or an HTTP/2 error code such as `enhance_your_calm`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<GoAwayValue, E> {
                if v == "graceful" {
                    return Ok(GoAwayValue(None));
                }
                H2Code::from_name(v)
                    .map(|code| GoAwayValue(Some(code)))
                    .ok_or_else(|| E::unknown_variant(v, &GOAWAY_WORDS[..]))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// What `goaway` takes: `graceful`, then the codes (the endpoints crate's list, the one
/// copy of their names).
pub(crate) static GOAWAY_WORDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    std::iter::once("graceful")
        .chain(H2Code::NAMES.iter().copied())
        .collect()
});

/// `rst_stream`'s value: a code alone (`refused_stream`: before the head), or
/// `{ code, body_bytes }` (after the head and that many bytes of the body).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RstStreamValue {
    pub(crate) code: H2Code,
    pub(crate) body_bytes: Option<u64>,
}

impl Serialize for RstStreamValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.body_bytes {
            None => CodeName(self.code).serialize(serializer),
            Some(n) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("code", &CodeName(self.code))?;
                map.serialize_entry("body_bytes", &n)?;
                map.end()
            }
        }
    }
}

const RST_FIELDS: &[&str] = &["code", "body_bytes"];

impl<'de> Deserialize<'de> for RstStreamValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RstStreamValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an HTTP/2 error code (`refused_stream`), or `{ code, body_bytes }`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RstStreamValue, E> {
                Ok(RstStreamValue {
                    code: code(v)?,
                    body_bytes: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RstStreamValue, A::Error> {
                let (mut found, mut body_bytes) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "code" => found = Some(map.next_value::<CodeName>()?.0),
                        "body_bytes" => body_bytes = Some(map.next_value::<u64>()?),
                        other => return Err(de::Error::unknown_field(other, RST_FIELDS)),
                    }
                }
                let code = found.ok_or_else(|| de::Error::missing_field("code"))?;
                // `body_bytes` says the head goes out: without it, write the code alone.
                let body_bytes = Some(body_bytes.ok_or_else(|| {
                    de::Error::custom(
                        "missing field `body_bytes` (the body bytes sent before the reset; \
                         for a reset before the head write `rst_stream: <code>`)",
                    )
                })?);
                Ok(RstStreamValue { code, body_bytes })
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::FailSpec;

    fn parse(yaml: &str) -> Result<FailSpec, String> {
        serde_saphyr::from_str::<FailSpec>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn http2_faults_read_and_write_back_as_written() {
        let cases = [
            (
                "{ rst_stream: refused_stream }",
                FailSpec::RstStream {
                    code: H2Code::REFUSED_STREAM,
                    body_bytes: None,
                },
            ),
            (
                "{ rst_stream: { code: cancel, body_bytes: 4 } }",
                FailSpec::RstStream {
                    code: H2Code::CANCEL,
                    body_bytes: Some(4),
                },
            ),
            ("{ goaway: graceful }", FailSpec::GoAway { code: None }),
            (
                "{ goaway: enhance_your_calm }",
                FailSpec::GoAway {
                    code: Some(H2Code::ENHANCE_YOUR_CALM),
                },
            ),
        ];
        for (yaml, expected) in cases {
            let parsed = parse(yaml).unwrap();
            assert_eq!(parsed, expected, "{yaml}");
            let written = serde_json::to_string(&parsed).unwrap();
            let again: FailSpec = serde_json::from_str(&written).unwrap();
            assert_eq!(again, expected, "{written}");
        }
    }

    #[test]
    fn unknown_codes_and_bare_goaway_are_refused() {
        assert!(parse("{ rst_stream: refused }").is_err());
        assert!(parse("{ goaway: calm }").is_err());
        // The bare words stay HTTP/1.1's: a GOAWAY says how it goes away.
        assert!(parse("goaway").is_err());
    }

    #[test]
    fn goaway_takes_graceful_and_every_code() {
        assert_eq!(GOAWAY_WORDS[0], "graceful");
        assert_eq!(&GOAWAY_WORDS[1..], H2Code::NAMES);
    }
}
