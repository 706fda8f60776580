//! What the HTTP/2 answers share, plain and gRPC (`stream.rs`, `grpc.rs`): the header lines
//! HTTP/2 forbids, and handing bytes to a stream as flow control allows.

use std::future::poll_fn;

use ::h2::SendStream;
use bytes::Bytes;
use http::header::{CONNECTION, TE, TRANSFER_ENCODING, UPGRADE};
use http::{HeaderName, HeaderValue};

/// Whether HTTP/2 forbids the header line (RFC 9113 section 8.2.2).
pub(super) fn connection_specific(name: &HeaderName, value: &HeaderValue) -> bool {
    *name == CONNECTION
        || *name == TRANSFER_ENCODING
        || *name == UPGRADE
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
        || (*name == TE && value.as_bytes() != b"trailers")
}

/// Hands `data` to the stream as the flow-control windows allow; `end` marks its last DATA
/// frame as the end of the stream. `None` when the stream went away first.
pub(super) async fn send_all(
    stream: &mut SendStream<Bytes>,
    mut data: Bytes,
    end: bool,
) -> Option<()> {
    if data.is_empty() {
        return stream.send_data(data, end).ok();
    }
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let granted = poll_fn(|cx| stream.poll_capacity(cx)).await?.ok()?;
        let chunk = data.split_to(granted.min(data.len()));
        stream.send_data(chunk, end && data.is_empty()).ok()?;
    }
    Some(())
}
