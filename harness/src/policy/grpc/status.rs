//! The gRPC status of an attempt.
//!
//! Real gRPC (an endpoint with `protocol: http2` and `grpc:` steps) sends the status as the
//! `grpc-status` *trailer* after the response message, or in the head of a trailers-only
//! answer; the reference client reads both and hands the policy the head's fields followed by
//! the trailers'. The HTTP/1 model writes it as a response header. The rules
//! ([`status_of`]):
//!
//! - a `grpc-status` field holding a number is that code (numbers above 16 are kept: a
//!   retry policy lists only 0 to 16, so they are never retried); the first one counts;
//! - a `grpc-status` that is not a number is `INTERNAL`, as grpc-go reports a malformed
//!   status;
//! - without `grpc-status`, the HTTP status maps as gRPC's "HTTP to gRPC Status Code
//!   Mapping" says (400 `INTERNAL`, 401 `UNAUTHENTICATED`, 403 `PERMISSION_DENIED`, 404
//!   `UNIMPLEMENTED`, 429, 502, 503 and 504 `UNAVAILABLE`, anything else `UNKNOWN`), except
//!   that a 2xx is `OK`. **Model:** a real gRPC response without a status in its trailers is
//!   an error; a plain 2xx (a `status: 200` step, an HTTP/1 model's answer) is read as a
//!   success so that a scripted `status: 200` means one;
//! - a refused connect or a transport error is `UNAVAILABLE` (what gRPC reports when a
//!   connection fails or breaks);
//! - an attempt the client gave up on (its `attempt_timeout`) is `DEADLINE_EXCEEDED`.
//!   **Model:** the attempt timeout plays the part of the call's deadline.

use retrylab_endpoints::GrpcCode;

use crate::policy::{AttemptView, Observed};

// The codes as the policy compares them: a `u16`, because a `grpc-status` above 16 is kept
// as read (see the module). Their numbers and names are the endpoints crate's `GrpcCode`.

/// `OK`.
pub const OK: u16 = GrpcCode::OK.code() as u16;
/// `UNKNOWN`.
pub const UNKNOWN: u16 = GrpcCode::UNKNOWN.code() as u16;
/// `DEADLINE_EXCEEDED`.
pub const DEADLINE_EXCEEDED: u16 = GrpcCode::DEADLINE_EXCEEDED.code() as u16;
/// `PERMISSION_DENIED`.
pub const PERMISSION_DENIED: u16 = GrpcCode::PERMISSION_DENIED.code() as u16;
/// `UNIMPLEMENTED`.
pub const UNIMPLEMENTED: u16 = GrpcCode::UNIMPLEMENTED.code() as u16;
/// `INTERNAL`.
pub const INTERNAL: u16 = GrpcCode::INTERNAL.code() as u16;
/// `UNAVAILABLE`.
pub const UNAVAILABLE: u16 = GrpcCode::UNAVAILABLE.code() as u16;
/// `UNAUTHENTICATED`.
pub const UNAUTHENTICATED: u16 = GrpcCode::UNAUTHENTICATED.code() as u16;

/// The field that carries the status: a trailer, a trailers-only head's header, or a response
/// header in the HTTP/1 model.
pub const STATUS_HEADER: &str = "grpc-status";

/// The field that carries the status's message, percent-encoded.
pub const MESSAGE_HEADER: &str = "grpc-message";

/// The gRPC status code of an attempt (see the [module](self) for the rules).
///
/// ```
/// use retrylab::policy::grpc::status::{status_of, OK, UNAVAILABLE};
/// use retrylab::policy::{AttemptView, Observed};
///
/// let unavailable = AttemptView::new(1, Observed::Status(200), 0, Some(5), 5)
///     .with_header("grpc-status", "14");
/// assert_eq!(status_of(&unavailable), UNAVAILABLE);
/// assert_eq!(status_of(&AttemptView::new(1, Observed::Status(503), 0, Some(5), 5)), UNAVAILABLE);
/// assert_eq!(status_of(&AttemptView::new(1, Observed::Status(200), 0, Some(5), 5)), OK);
/// assert_eq!(status_of(&AttemptView::new(1, Observed::Refused, 0, None, 5)), UNAVAILABLE);
/// ```
pub fn status_of(view: &AttemptView) -> u16 {
    match view.outcome {
        Observed::Status(http) => match view.header(STATUS_HEADER) {
            Some(value) => value.trim().parse::<u16>().unwrap_or(INTERNAL),
            None => from_http(http),
        },
        Observed::Transport(_) | Observed::Refused => UNAVAILABLE,
        Observed::Timeout => DEADLINE_EXCEEDED,
    }
}

/// gRPC's mapping of an HTTP status without `grpc-status` (2xx read as `OK`: a model).
fn from_http(http: u16) -> u16 {
    match http {
        200..=299 => OK,
        400 => INTERNAL,
        401 => UNAUTHENTICATED,
        403 => PERMISSION_DENIED,
        404 => UNIMPLEMENTED,
        429 | 502 | 503 | 504 => UNAVAILABLE,
        _ => UNKNOWN,
    }
}

/// The canonical name of a code 0 to 16 (`UNAVAILABLE`), or its number.
pub fn name(code: u16) -> String {
    GrpcCode::new(u32::from(code)).map_or_else(|| code.to_string(), |c| c.name().to_owned())
}

/// What an attempt that carried a `grpc-status` came to, for a failed call's report: the HTTP
/// status, the gRPC status's name and, when the answer had one, its `grpc-message` decoded
/// (`200 grpc UNAVAILABLE: overloaded`). `None` for an answer without a `grpc-status`, which
/// its HTTP status describes.
///
/// ```
/// use retrylab::policy::grpc::status::describe;
/// use retrylab::policy::{AttemptView, Observed};
///
/// let view = AttemptView::new(1, Observed::Status(200), 0, Some(5), 5)
///     .with_header("grpc-status", "14")
///     .with_header("grpc-message", "try%20later %E2%9C%93");
/// assert_eq!(describe(&view).as_deref(), Some("200 grpc UNAVAILABLE: try later \u{2713}"));
/// assert_eq!(describe(&AttemptView::new(1, Observed::Status(503), 0, Some(5), 5)), None);
/// ```
pub fn describe(view: &AttemptView) -> Option<String> {
    let Observed::Status(http) = view.outcome else {
        return None;
    };
    view.header(STATUS_HEADER)?;
    let mut text = format!("{http} grpc {}", name(status_of(view)));
    if let Some(message) = view.header(MESSAGE_HEADER) {
        text.push_str(": ");
        text.push_str(&percent_decode(message));
    }
    Some(text)
}

/// A `grpc-message` as text: each `%XX` is the byte it names, the bytes read as UTF-8 (a
/// malformed escape is kept as written, as gRPC's decoders do).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match bytes.get(i..i + 3) {
            Some([b'%', hi, lo]) => std::str::from_utf8(&[*hi, *lo])
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok()),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_percent_decoded_and_bad_escapes_kept() {
        assert_eq!(percent_decode("100%25 s%C3%BBr%0A"), "100% s\u{fb}r\n");
        assert_eq!(percent_decode("50%"), "50%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
