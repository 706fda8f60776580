//! What serving a request needs whatever the HTTP version: how a serving loop ended, the
//! ledger's note of bytes no step could answer, the record of a response head as it goes out
//! (and its `Date`), the record of a request the client left before its answer, and the idle
//! timer of `keep_alive.idle_timeout`.

use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::Duration;

use http::HeaderValue;

use super::conn::{ConnShared, FlushHook, KillMode};
use crate::endpoint::{Endpoint, Inner};
use crate::http::detach::RequestHead;
use crate::http::response::SentResponse;
use crate::ledger::{RequestId, ResponseOutcome, ResponseRecord, UnreadableRecord};
use crate::script::step::Fail;

/// How a serving loop ended.
pub(crate) enum End {
    /// The endpoint ended the connection itself (a step failed, or a cut was reached).
    Kill(KillMode),
    /// The connection ended: the client closed it, or the endpoint closed it as keep-alive
    /// says.
    Done,
}

/// Files what the client sent on connection `conn_id` that no step could answer, so the run
/// can say so.
pub(crate) fn file_unreadable(inner: &Inner, conn_id: u64, what: String) {
    inner.ledger.push_unreadable(UnreadableRecord {
        conn_id,
        at_ms: inner.clock().now_ms(),
        what,
    });
}

/// Files a request body the client stopped sending part way: `received` bytes of it had
/// arrived when `ended` (the connection closed, the stream was reset).
pub(crate) fn file_body_cut_short(
    endpoint: &Endpoint,
    conn_id: u64,
    head: &RequestHead,
    received: usize,
    ended: &str,
) {
    let of = head
        .headers()
        .get_bytes("content-length")
        .map_or_else(String::new, |len| {
            format!(" of {}", String::from_utf8_lossy(len))
        });
    let what = format!(
        "a request body cut short: {received}{of} byte(s) of `{} {}` arrived before {ended}",
        head.method(),
        head.uri().path(),
    );
    file_unreadable(&endpoint.inner, conn_id, what);
}

/// A response head recorded as it goes out: the hook that completes its record once the
/// last byte is flushed, and the `Date` it carries when the endpoint dates its answers.
pub(crate) struct HeadRecord {
    pub(crate) hook: FlushHook,
    pub(crate) date: Option<HeaderValue>,
}

/// Records the head of `sent`, the answer to request `id`, as it goes out on `conn`: whole,
/// or cut by `fail`. With `dated`, reads its `Date` at the instant of the record, so the date
/// is the head's on either HTTP version.
pub(crate) fn record_head(
    conn: &ConnShared,
    id: RequestId,
    sent: &SentResponse,
    fail: Option<Fail>,
    dated: bool,
) -> HeadRecord {
    let written = conn.written();
    // One reading for the record and the `Date`.
    let at_ms = conn.clock.now_ms();
    let outcome = match fail {
        // A graceful GOAWAY (HTTP/2) leaves the response whole: it goes out just before the
        // head.
        None | Some(Fail::GoAway { .. }) => ResponseOutcome::Sent {
            status: sent.status,
        },
        Some(fail) => ResponseOutcome::Truncated {
            status: sent.status,
            fail,
        },
    };
    let index = conn.ledger.push_response(ResponseRecord {
        request: id,
        conn_id: conn.conn_id,
        at_ms,
        end_ms: None,
        outcome,
        retry_after: sent.retry_after_lines().cloned().collect(),
        outbound: written..written,
        grpc: sent.grpc.clone(),
    });
    let hook = FlushHook {
        response: index,
        // HTTP/2's own faults leave the connection to the serving loop (a GOAWAY) or
        // untouched (a stream reset).
        kill: fail.filter(|f| !f.is_http2()).map(kill_mode),
    };
    let date = dated.then(|| crate::http::date::date_header(&conn.clock, at_ms));
    HeadRecord { hook, date }
}

/// How a fault that cuts a response ends its connection: a reset, or a close.
pub(crate) fn kill_mode(fail: Fail) -> KillMode {
    if fail.is_reset() {
        KillMode::Reset
    } else {
        KillMode::Fin
    }
}

/// Records `Abandoned` if the connection (or, on HTTP/2, the stream) drops the request
/// before its step answers.
pub(crate) struct AbandonGuard<'a> {
    endpoint: &'a Endpoint,
    conn: &'a ConnShared,
    request: RequestId,
    /// The endpoint's life the request was admitted in: if it ended, the request did not
    /// go unanswered because the client left, but because the endpoint crashed.
    life: u64,
    pub(crate) armed: bool,
}

impl<'a> AbandonGuard<'a> {
    /// Armed for `request`, admitted in the endpoint's current life.
    pub(crate) fn new(
        endpoint: &'a Endpoint,
        conn: &'a ConnShared,
        request: RequestId,
    ) -> AbandonGuard<'a> {
        AbandonGuard {
            endpoint,
            conn,
            request,
            life: endpoint.inner.lives.current(),
            armed: true,
        }
    }
}

impl Drop for AbandonGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let written = self.conn.written();
            self.conn.ledger.push_response(ResponseRecord {
                request: self.request,
                conn_id: self.conn.conn_id,
                at_ms: self.conn.clock.now_ms(),
                end_ms: None,
                outcome: if self.endpoint.inner.lives.current() == self.life {
                    ResponseOutcome::Abandoned
                } else {
                    ResponseOutcome::Crashed
                },
                retry_after: Vec::new(),
                outbound: written..written,
                grpc: None,
            });
        }
    }
}

/// The timer of `keep_alive.idle_timeout` for a serving loop that polls it itself (the
/// HTTP/2 loop, and the look at an `auto` connection's first bytes).
pub(crate) struct Idle {
    timeout: Option<Duration>,
    /// Made on first use: a connection of an endpoint without an idle timeout has none.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Idle {
    pub(crate) fn new(timeout: Option<Duration>) -> Idle {
        Idle {
            timeout,
            sleep: None,
        }
    }

    /// Whether the connection has had no request in flight for the idle timeout; otherwise
    /// the timer wakes `cx` when it would have.
    pub(crate) fn poll_expired(&mut self, cx: &mut Context<'_>, shared: &ConnShared) -> bool {
        let (Some(timeout), Some(since)) = (self.timeout, shared.idle_since()) else {
            return false;
        };
        let deadline = since + timeout;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        sleep.as_mut().poll(cx).is_ready()
    }
}
