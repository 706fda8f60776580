//! `Endpoint::serve`: one accepted connection, served with the HTTP version the endpoint
//! speaks (`protocol`), and the record of how it closed.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use super::common::End;
use super::conn::{ConnInfo, ConnShared, CountingIo, KillMode};
use super::sniff::{Sniffed, sniff};
use super::{http1, http2};
use crate::config::Protocol;
use crate::endpoint::Endpoint;
use crate::ledger::{CloseKind, CloseRecord, Side};

impl Endpoint {
    /// Serve one accepted connection until it closes, and return (and record) how it closed.
    ///
    /// The endpoint's [`Protocol`] says how: hyper's HTTP/1 server (keep-alive on, no `Date`
    /// header, no header read timeout), the h2 crate's HTTP/2 server with prior knowledge,
    /// or, for `Auto`, whichever the connection's first bytes ask for (the HTTP/2 preface,
    /// `PRI * HTTP/2.0`, or anything else). The endpoint closes a connection only as its
    /// `keep_alive` says or as a step fails. Must run inside a tokio runtime (steps are
    /// spawned tasks).
    pub async fn serve<IO>(&self, io: IO, conn: ConnInfo) -> CloseRecord
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let inner = &*self.inner;
        let shared = Arc::new(ConnShared::new(
            conn.conn_id,
            inner.clock(),
            inner.ledger.clone(),
            inner.keep_alive.idle_timeout.is_some(),
        ));
        let io = CountingIo::new(io, Arc::clone(&shared));
        let end = match inner.protocol {
            Protocol::Http1 => http1::serve(self, io, &shared, &conn).await,
            // Boxed, so that a connection served with HTTP/1 (most of them, and every one of
            // a fleet's) does not carry the room of the HTTP/2 server's state.
            Protocol::Http2 => Box::pin(http2::serve(self, io, &shared, &conn)).await,
            Protocol::Auto => Box::pin(self.serve_either(io, &shared, &conn)).await,
        };

        let now_ms = inner.clock().now_ms();
        let (at_ms, by, how) = match (shared.close_note(), end) {
            (Some(note), _) => note,
            (None, End::Kill(KillMode::Fin) | End::Done) => (now_ms, Side::Server, CloseKind::Fin),
            (None, End::Kill(KillMode::Reset)) => (now_ms, Side::Server, CloseKind::Reset),
        };
        let record = CloseRecord {
            conn_id: conn.conn_id,
            at_ms,
            by,
            how,
        };
        inner.ledger.push_close(record);
        record
    }

    /// Serves an `auto` connection with the version its first bytes ask for.
    async fn serve_either<T>(&self, io: T, shared: &Arc<ConnShared>, conn: &ConnInfo) -> End
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        match sniff(io, shared, self.inner.keep_alive.idle_timeout).await {
            Sniffed::Http2(io) => http2::serve(self, io, shared, conn).await,
            Sniffed::Http1(io) => http1::serve(self, io, shared, conn).await,
            Sniffed::Ended(end, io) => {
                if let End::Kill(KillMode::Reset) = end {
                    // Before the transport is dropped, so that it aborts.
                    conn.control.reset();
                }
                drop(io);
                end
            }
        }
    }
}
