//! gRPC as an endpoint answers it over HTTP/2: a status code, its message, a server pushback
//! and the response message, and the fields and frames they become (the gRPC over HTTP/2
//! protocol, `PROTOCOL-HTTP2.md` in the gRPC repository).
//!
//! Only the vocabulary lives here; sending it on a stream is the HTTP/2 server's work
//! (`server/http2/grpc.rs`).

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderName, HeaderValue};

/// The `grpc-status` trailer.
pub const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
/// The `grpc-message` trailer.
pub const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");
/// The `grpc-retry-pushback-ms` trailer (gRFC A6).
pub const GRPC_RETRY_PUSHBACK_MS: HeaderName = HeaderName::from_static("grpc-retry-pushback-ms");

/// The 17 status codes, in code order, as gRPC's documentation spells them: the one list of
/// them, which the harness's policies and scenario format read too.
const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// A gRPC status code, 0 (`OK`) to 16 (`UNAUTHENTICATED`).
///
/// ```
/// use retrylab_endpoints::GrpcCode;
///
/// let code = GrpcCode::from_name("unavailable").unwrap();
/// assert_eq!((code.code(), code.name()), (14, "UNAVAILABLE"));
/// assert_eq!(GrpcCode::new(0), Some(GrpcCode::OK));
/// assert_eq!(GrpcCode::new(17), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GrpcCode(u8);

impl GrpcCode {
    /// `OK` (0).
    pub const OK: GrpcCode = GrpcCode(0);
    /// `UNKNOWN` (2).
    pub const UNKNOWN: GrpcCode = GrpcCode(2);
    /// `DEADLINE_EXCEEDED` (4).
    pub const DEADLINE_EXCEEDED: GrpcCode = GrpcCode(4);
    /// `PERMISSION_DENIED` (7).
    pub const PERMISSION_DENIED: GrpcCode = GrpcCode(7);
    /// `UNIMPLEMENTED` (12).
    pub const UNIMPLEMENTED: GrpcCode = GrpcCode(12);
    /// `INTERNAL` (13).
    pub const INTERNAL: GrpcCode = GrpcCode(13);
    /// `UNAVAILABLE` (14).
    pub const UNAVAILABLE: GrpcCode = GrpcCode(14);
    /// `UNAUTHENTICATED` (16).
    pub const UNAUTHENTICATED: GrpcCode = GrpcCode(16);

    /// Every name, in code order, as gRPC's documentation spells them (`UNAVAILABLE`).
    pub const NAMES: [&'static str; 17] = NAMES;

    /// The code numbered `code`, if it is one of the 17.
    pub fn new(code: u32) -> Option<GrpcCode> {
        u8::try_from(code)
            .ok()
            .filter(|c| usize::from(*c) < NAMES.len())
            .map(GrpcCode)
    }

    /// The code named `name`, in upper or snake case (`UNAVAILABLE`, `unavailable`).
    pub fn from_name(name: &str) -> Option<GrpcCode> {
        let upper = name.to_ascii_uppercase();
        let index = NAMES.iter().position(|n| *n == upper)?;
        u8::try_from(index).ok().map(GrpcCode)
    }

    /// The code's number.
    pub const fn code(self) -> u8 {
        self.0
    }

    /// The name gRPC's documentation gives it (`UNAVAILABLE`).
    pub fn name(self) -> &'static str {
        NAMES[usize::from(self.0)]
    }

    /// Every name in snake case, in code order (for the messages that list them).
    pub fn snake_names() -> impl Iterator<Item = String> {
        NAMES.iter().map(|n| n.to_ascii_lowercase())
    }
}

/// A gRPC answer to a unary call: the status that ends the stream and, before it, the
/// response message.
///
/// A reply with `OK`, or with a `reply` message given, is sent as a head (`:status 200`,
/// `content-type: application/grpc`), one length-prefixed message (the empty one unless
/// `reply` says otherwise: valid for any proto), and trailers carrying `grpc-status`,
/// `grpc-message` and `grpc-retry-pushback-ms`. Any other status without a message is a
/// trailers-only response: those fields in the head, which ends the stream.
///
/// ```
/// use retrylab_endpoints::{GrpcCode, GrpcReply};
///
/// let reply = GrpcReply::new(GrpcCode::UNAVAILABLE).message("try later").pushback_ms(500);
/// assert!(reply.trailers_only());
/// let fields: Vec<_> = reply.status_fields().iter().map(|(n, v)| format!("{n}: {}", v.to_str().unwrap())).collect();
/// assert_eq!(fields, ["grpc-status: 14", "grpc-message: try later", "grpc-retry-pushback-ms: 500"]);
/// assert_eq!(&GrpcReply::new(GrpcCode::OK).framed_reply()[..], &[0, 0, 0, 0, 0]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcReply {
    /// The status.
    pub code: GrpcCode,
    /// The `grpc-message`, as text (percent-encoded when sent).
    pub message: Option<String>,
    /// The `grpc-retry-pushback-ms` value, as sent (a raw value may be anything a header
    /// holds, so a client's handling of a bad one can be tried).
    pub pushback: Option<HeaderValue>,
    /// The response message's bytes (a serialized protobuf); `None` is the empty message on
    /// `OK` and a trailers-only response otherwise.
    pub reply: Option<Bytes>,
}

impl GrpcReply {
    /// A reply with `code`, no message text, no pushback, the default response message.
    pub fn new(code: GrpcCode) -> GrpcReply {
        GrpcReply {
            code,
            message: None,
            pushback: None,
            reply: None,
        }
    }

    /// Sets the `grpc-message`.
    pub fn message(mut self, message: impl Into<String>) -> GrpcReply {
        self.message = Some(message.into());
        self
    }

    /// Asks the client to retry after `ms` milliseconds (`grpc-retry-pushback-ms`).
    pub fn pushback_ms(mut self, ms: u64) -> GrpcReply {
        self.pushback = Some(HeaderValue::from(ms));
        self
    }

    /// Sends `value` verbatim as `grpc-retry-pushback-ms`.
    pub fn pushback_raw(mut self, value: HeaderValue) -> GrpcReply {
        self.pushback = Some(value);
        self
    }

    /// Sends `bytes` as the response message.
    pub fn reply(mut self, bytes: impl Into<Bytes>) -> GrpcReply {
        self.reply = Some(bytes.into());
        self
    }

    /// Whether the status goes in the head, which ends the stream (no message is sent).
    pub fn trailers_only(&self) -> bool {
        self.code != GrpcCode::OK && self.reply.is_none()
    }

    /// The status fields, in the order sent: `grpc-status`, then `grpc-message` and
    /// `grpc-retry-pushback-ms` when given.
    pub fn status_fields(&self) -> Vec<(HeaderName, HeaderValue)> {
        let mut fields = vec![(GRPC_STATUS, HeaderValue::from(u16::from(self.code.code())))];
        if let Some(message) = &self.message {
            let encoded = percent_encode(message);
            // Percent-encoding leaves only visible ASCII, which a header value always takes.
            if let Ok(value) = HeaderValue::from_str(&encoded) {
                fields.push((GRPC_MESSAGE, value));
            }
        }
        if let Some(pushback) = &self.pushback {
            fields.push((GRPC_RETRY_PUSHBACK_MS, pushback.clone()));
        }
        fields
    }

    /// The response message as sent in DATA frames: a compressed flag (0), its length in
    /// four big-endian bytes, then its bytes.
    pub fn framed_reply(&self) -> Bytes {
        let message = self.reply.clone().unwrap_or_default();
        let mut framed = BytesMut::with_capacity(5 + message.len());
        framed.put_u8(0);
        // A step's reply is at most 1 MiB (the scenario's limit), far below 4 GiB.
        framed.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
        framed.extend_from_slice(&message);
        framed.freeze()
    }
}

/// `grpc-message` encoding: bytes outside visible ASCII, and `%` itself, as `%XX` of their
/// UTF-8 bytes, so any text survives a header field.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if (0x20..=0x7e).contains(&byte) && byte != b'%' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree() {
        for (i, name) in NAMES.iter().enumerate() {
            let code = GrpcCode::from_name(name).unwrap();
            assert_eq!(usize::from(code.code()), i);
            assert_eq!(GrpcCode::new(i as u32), Some(code));
        }
        assert_eq!(
            GrpcCode::from_name("unavailable"),
            Some(GrpcCode::UNAVAILABLE)
        );
        assert_eq!(
            GrpcCode::from_name("UNAVAILABLE"),
            Some(GrpcCode::UNAVAILABLE)
        );
        assert_eq!(GrpcCode::from_name("unavailible"), None);
        assert_eq!(
            GrpcCode::snake_names().nth(3).as_deref(),
            Some("invalid_argument")
        );
    }

    #[test]
    fn the_message_is_percent_encoded() {
        assert_eq!(percent_encode("a b"), "a b");
        assert_eq!(percent_encode("100% sûr\n"), "100%25 s%C3%BBr%0A");
    }

    #[test]
    fn an_ok_reply_frames_its_message() {
        let reply = GrpcReply::new(GrpcCode::OK).reply(&b"\x0a\x02hi"[..]);
        assert!(!reply.trailers_only());
        assert_eq!(&reply.framed_reply()[..], b"\x00\x00\x00\x00\x04\x0a\x02hi");
        // An error with a message is sent in full too.
        assert!(
            !GrpcReply::new(GrpcCode::UNAVAILABLE)
                .reply(Bytes::new())
                .trailers_only()
        );
    }
}
