//! The gRPC status of an attempt, as the HTTP/1 model carries it.
//!
//! The simulated server speaks HTTP/1, so a gRPC status travels as the `grpc-status`
//! *response header*; trailers are not modelled. The rules ([`status_of`]):
//!
//! - a `grpc-status` header holding a number is that code (numbers above 16 are kept: a
//!   retry policy lists only 0 to 16, so they are never retried); the first header counts;
//! - a `grpc-status` that is not a number is `INTERNAL`, as grpc-go reports a malformed
//!   status;
//! - without `grpc-status`, the HTTP status maps as gRPC's "HTTP to gRPC Status Code
//!   Mapping" says (400 `INTERNAL`, 401 `UNAUTHENTICATED`, 403 `PERMISSION_DENIED`, 404
//!   `UNIMPLEMENTED`, 429, 502, 503 and 504 `UNAVAILABLE`, anything else `UNKNOWN`), except
//!   that a 2xx is `OK`. **Model:** a real gRPC response without a status in its trailers is
//!   an error; with trailers not modelled, a plain 2xx is read as a success so that a scripted
//!   `status: 200` means one;
//! - a refused connect or a transport error is `UNAVAILABLE` (what gRPC reports when a
//!   connection fails or breaks);
//! - an attempt the client gave up on (its `attempt_timeout`) is `DEADLINE_EXCEEDED`.
//!   **Model:** the attempt timeout plays the part of the call's deadline.

use crate::policy::{AttemptView, Observed};

/// `OK`.
pub const OK: u16 = 0;
/// `UNKNOWN`.
pub const UNKNOWN: u16 = 2;
/// `DEADLINE_EXCEEDED`.
pub const DEADLINE_EXCEEDED: u16 = 4;
/// `PERMISSION_DENIED`.
pub const PERMISSION_DENIED: u16 = 7;
/// `UNIMPLEMENTED`.
pub const UNIMPLEMENTED: u16 = 12;
/// `INTERNAL`.
pub const INTERNAL: u16 = 13;
/// `UNAVAILABLE`.
pub const UNAVAILABLE: u16 = 14;
/// `UNAUTHENTICATED`.
pub const UNAUTHENTICATED: u16 = 16;

/// The response header that carries the status in the HTTP/1 model.
pub const STATUS_HEADER: &str = "grpc-status";

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

/// The canonical names of the codes 0 to 16, by code: the one list the policy's messages and
/// the scenario format's status names read.
pub(crate) const NAMES: [&str; 17] = [
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

/// The canonical name of a code 0 to 16 (`UNAVAILABLE`), or its number.
pub fn name(code: u16) -> String {
    NAMES
        .get(usize::from(code))
        .map_or_else(|| code.to_string(), |n| (*n).to_owned())
}
