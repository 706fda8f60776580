//! Attempts the client surfaces did not record (a client that only used `env.connector()`),
//! rebuilt from the endpoint's record and the network's segments; on the real backend, which
//! has no segment log, from the instants the endpoints recorded.

use std::collections::BTreeMap;

use retrylab_endpoints::ResponseOutcome;

use super::{Attempt, AttemptOutcome, ConnUse, EndKind, GrpcAnswer, Interner};
use crate::backend::sim::{ConnId, Dir, NetEvent, NetLog, SegmentKind};
use crate::policy::RetryAfterValue;

/// Where a rebuilt attempt's instants come from.
#[derive(Clone, Copy)]
pub(super) enum InstantSource<'a> {
    /// The sim network's segments: what the client sent and received, and when.
    Segments(&'a SegmentIndex),
    /// The real backend: only the endpoint's own instants exist (the request's arrival, the
    /// head handed to the connection, the last byte written).
    Endpoint,
}

/// An attempt rebuilt from the endpoint's record and the network's segments, for a client that
/// only used `env.connector()`: start = the request's first byte left the client, head = the
/// response's first byte reached it, end = its last byte did. On the real backend, start is
/// the request's arrival, head the instant the endpoint handed the head to the connection and
/// end the instant it wrote the last byte.
pub(super) fn reconstruct(
    instants: InstantSource<'_>,
    interner: &mut Interner,
    request: &retrylab_endpoints::RequestRecord,
    response: Option<&retrylab_endpoints::ResponseRecord>,
    id: u32,
) -> Attempt {
    let conn = ConnId(request.conn_id);
    let start_ms = match instants {
        // docs/architecture.md#attempts-time-and-ordering: start is the connect start on a
        // new connection, the request's first byte on a reused one.
        InstantSource::Segments(segments) => (request.seq == 1)
            .then(|| segments.connect_start(conn))
            .flatten()
            .unwrap_or_else(|| {
                segments
                    .segment_at(conn, Dir::ClientToServer, request.inbound.start)
                    .map_or(request.at_ms, |s| s.0)
            }),
        InstantSource::Endpoint => request.at_ms,
    };
    // A response cut after its head keeps the head's status, and its body broke.
    let mut body_error = None;
    let (head_ms, end_ms, outcome) = match response.map(|r| (r, r.outcome)) {
        Some((r, ResponseOutcome::Sent { status })) => {
            let (head, end) = match instants {
                InstantSource::Segments(segments) => {
                    let head = segments
                        .segment_at(conn, Dir::ServerToClient, r.outbound.start)
                        .map(|s| s.1);
                    let last = r.outbound.end.saturating_sub(1).max(r.outbound.start);
                    let end = segments
                        .segment_at(conn, Dir::ServerToClient, last)
                        .map(|s| s.1);
                    (head, end)
                }
                InstantSource::Endpoint => (Some(r.at_ms), r.end_ms),
            };
            (head, end.or(head), AttemptOutcome::Status(status.as_u16()))
        }
        Some((r, ResponseOutcome::Truncated { status, fail })) => {
            let head = match instants {
                InstantSource::Segments(segments) => segments
                    .segment_at(conn, Dir::ServerToClient, r.outbound.start)
                    .map(|s| s.1),
                InstantSource::Endpoint => Some(r.at_ms),
            };
            body_error = Some(match fail {
                // The stream alone was reset, with its code, after the head.
                retrylab_endpoints::Fail::RstStream { code, .. } => {
                    AttemptOutcome::StreamReset(code)
                }
                fail if fail.is_reset() => AttemptOutcome::Reset,
                _ => AttemptOutcome::Closed,
            });
            (head, head, AttemptOutcome::Status(status.as_u16()))
        }
        Some((r, ResponseOutcome::Failed(fail))) => {
            let outcome = match fail {
                retrylab_endpoints::Fail::Reset | retrylab_endpoints::Fail::ResetAfter { .. } => {
                    AttemptOutcome::Reset
                }
                retrylab_endpoints::Fail::Hang => AttemptOutcome::Abandoned,
                retrylab_endpoints::Fail::RstStream { code, .. } => {
                    AttemptOutcome::StreamReset(code)
                }
                _ => AttemptOutcome::Closed,
            };
            // On real sockets a hung request ends when the client gave up on it (its
            // connection went away), not when it arrived: the delay before the next attempt
            // is measured from there, as for the harness's own client.
            let end = match (instants, fail) {
                (InstantSource::Endpoint, retrylab_endpoints::Fail::Hang) => {
                    r.end_ms.unwrap_or(r.at_ms)
                }
                _ => r.at_ms,
            };
            (None, Some(end), outcome)
        }
        Some((r, ResponseOutcome::Abandoned)) => (None, Some(r.at_ms), AttemptOutcome::Abandoned),
        // The crash reset the connection from the endpoint's side.
        Some((r, ResponseOutcome::Crashed)) => (None, Some(r.at_ms), AttemptOutcome::Reset),
        None => (None, None, AttemptOutcome::Unfinished),
    };
    let path = request
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    Attempt {
        id,
        // The caller attributes the attempt to its client and call.
        client_id: 0,
        call_id: 0,
        n: 0,
        conn_id: Some(request.conn_id),
        conn: if request.seq == 1 {
            ConnUse::New
        } else {
            ConnUse::Reused
        },
        stream_id: request.stream_id,
        method: interner.intern(request.method.as_str()),
        path: interner.intern(&path),
        start_ms,
        head_ms,
        end_ms,
        outcome,
        end: match (end_ms, body_error) {
            (None, _) => EndKind::Unfinished,
            (Some(_), Some(_)) => EndKind::Error,
            (Some(_), None) => EndKind::Body,
        },
        body_error,
        // Recorded as the harness's own client records what it was told, so a rebuilt
        // attempt is judged on the same text.
        retry_after: response
            .and_then(|r| RetryAfterValue::recorded_text_of(&r.retry_after))
            .map(|text| interner.intern(&text)),
        // The endpoint's record keeps `Retry-After` alone.
        amz_retry_after: None,
        resent: false,
        reconstructed: true,
        answered_by: None,
        grpc: response.and_then(|r| GrpcAnswer::of(r, interner)),
    }
}

/// The network log's connect starts and data segments by connection, for rebuilding attempts
/// (a scan of the whole log per rebuilt attempt would be quadratic in long runs).
pub(super) struct SegmentIndex {
    /// The first `ConnectStart` instant of each connection.
    connect_start: BTreeMap<u64, u64>,
    /// Data segments of each (connection, direction), in log order, which is byte order.
    data: BTreeMap<(u64, Dir), Vec<DataSegment>>,
}

/// A data segment's byte range and instants.
#[derive(Clone, Copy)]
struct DataSegment {
    start: u64,
    end: u64,
    sent_at: u64,
    deliver_at: u64,
}

impl SegmentIndex {
    pub(super) fn new(log: &NetLog) -> SegmentIndex {
        let mut connect_start = BTreeMap::new();
        let mut data: BTreeMap<(u64, Dir), Vec<DataSegment>> = BTreeMap::new();
        for event in log.events() {
            match *event {
                NetEvent::ConnectStart { at, conn, .. } => {
                    connect_start.entry(conn.0).or_insert(at);
                }
                NetEvent::Segment(s) if s.kind == SegmentKind::Data => {
                    data.entry((s.conn.0, s.dir))
                        .or_default()
                        .push(DataSegment {
                            start: s.offset,
                            end: s.offset + u64::from(s.len),
                            sent_at: s.sent_at,
                            deliver_at: s.deliver_at,
                        });
                }
                _ => {}
            }
        }
        SegmentIndex {
            connect_start,
            data,
        }
    }

    fn connect_start(&self, conn: ConnId) -> Option<u64> {
        self.connect_start.get(&conn.0).copied()
    }

    /// (`sent_at`, `deliver_at`) of the data segment of `conn` in `dir` that carries byte
    /// `offset`.
    fn segment_at(&self, conn: ConnId, dir: Dir, offset: u64) -> Option<(u64, u64)> {
        let segments = self.data.get(&(conn.0, dir))?;
        // Segments of one direction follow each other without gaps or overlaps, each at
        // least one byte long, so the first one ending past `offset` is the only candidate.
        let s = segments.get(segments.partition_point(|s| s.end <= offset))?;
        (s.start <= offset && offset < s.end).then_some((s.sent_at, s.deliver_at))
    }
}
