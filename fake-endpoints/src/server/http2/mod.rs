//! Serving one connection with the h2 crate's HTTP/2 server (h2c with prior knowledge).
//!
//! The h2 crate rather than hyper's HTTP/2 server, because the endpoint needs each stream in
//! its hands: the faults to come (a stream reset with a code, a GOAWAY graceful or abrupt)
//! are a [`SendResponse::send_reset`](::h2::server::SendResponse::send_reset) or a
//! [`Connection::graceful_shutdown`](::h2::server::Connection::graceful_shutdown) away, from
//! the stream's future or from the loop below.
//!
//! One task serves the connection and all its streams: the loop accepts the streams that
//! arrived, polls each stream's future in the order the streams were accepted, and polls the
//! connection again to write what they queued, so nothing depends on the order in which a
//! runtime would run separate tasks. A stream's future (`stream`) reads its request, admits
//! it and sends its answer; the connection-wide ends (a step that fails with `close` or
//! `reset`, a response cut after some bytes, keep-alive) go through the same
//! [`ConnShared`] as HTTP/1's.

mod fault;
mod frames;
mod grpc;
mod stream;

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::common::{End, Idle, file_unreadable};
use super::conn::{ConnInfo, ConnShared, KillMode};
use crate::endpoint::{Endpoint, Inner};

/// A stream being served: its request read, admitted and answered.
type StreamFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Serves one accepted connection with HTTP/2 until it closes, and says how it ended. The
/// transport is dropped before this returns: for a kill, that drop is the close, and a reset
/// is asked of `conn` before it.
pub(super) async fn serve<T>(
    endpoint: &Endpoint,
    io: T,
    shared: &Arc<ConnShared>,
    conn: &ConnInfo,
) -> End
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let inner = &*endpoint.inner;
    let mut idle = Idle::new(inner.keep_alive.idle_timeout);
    // The server's settings are h2's defaults (64 KiB windows), with the endpoint's cap on
    // concurrent streams when it sets one (none by default).
    let mut builder = ::h2::server::Builder::new();
    if let Some(max) = inner.max_concurrent_streams {
        builder.max_concurrent_streams(max);
    }
    let handshake = builder.handshake::<T, Bytes>(io);
    let mut handshake = pin!(handshake);
    // Polled in a fixed order (kill, handshake, idle timer), as every serving loop is.
    let connection = poll_fn(|cx| {
        if let Some(kill) = shared.poll_kill(cx.waker()) {
            return Poll::Ready(Err(End::Kill(kill)));
        }
        match handshake.as_mut().poll(cx) {
            Poll::Ready(Ok(connection)) => return Poll::Ready(Ok(connection)),
            Poll::Ready(Err(_)) => {
                not_a_preface(inner, shared);
                return Poll::Ready(Err(End::Done));
            }
            Poll::Pending => {}
        }
        if idle.poll_expired(cx, shared) {
            return Poll::Ready(Err(End::Done));
        }
        Poll::Pending
    })
    .await;
    let mut connection = match connection {
        Ok(connection) => connection,
        Err(end) => {
            if let End::Kill(KillMode::Reset) = end {
                // Before the handshake (and the transport it holds) is dropped on return.
                conn.control.reset();
            }
            return end;
        }
    };

    let max_requests = inner.keep_alive.max_requests;
    let mut streams: Vec<StreamFuture> = Vec::new();
    let faults = Arc::new(fault::Faults::default());
    let mut shutting_down = false;
    // The stream `keep_alive.max_requests` allows last has been accepted.
    let mut last_taken = false;
    // Polled in a fixed order (kill, then connection and streams until neither has anything
    // new, then the idle timer) so that outcomes never depend on a random branch choice.
    let end = poll_fn(|cx| {
        if let Some(kill) = shared.poll_kill(cx.waker()) {
            return Poll::Ready(End::Kill(kill));
        }
        let mut first = true;
        loop {
            // Accepts what arrived, and writes (and flushes) what the streams queued.
            let mut accepted = false;
            loop {
                match connection.poll_accept(cx) {
                    Poll::Ready(Some(Ok((request, mut respond)))) => {
                        if last_taken {
                            // keep_alive.max_requests was reached: a stream the client opened
                            // before it read the GOAWAY is refused, unread (RFC 9113 section
                            // 8.7: safe to retry), as a request after HTTP/1's close is never
                            // read.
                            respond.send_reset(::h2::Reason::REFUSED_STREAM);
                            continue;
                        }
                        faults.accepted(u32::from(respond.stream_id()));
                        let seq = shared.begin_request();
                        if max_requests.is_some_and(|max| seq >= max) {
                            // This stream is the connection's last: a GOAWAY tells the
                            // client, and the connection closes once the stream is done.
                            faults.go_away(
                                &mut connection,
                                fault::GoAway::Graceful,
                                inner,
                                shared.conn_id,
                            );
                            shutting_down = true;
                            last_taken = true;
                        }
                        streams.push(Box::pin(stream::serve(
                            endpoint.clone(),
                            Arc::clone(shared),
                            seq,
                            request,
                            respond,
                            Arc::clone(&faults),
                        )));
                        accepted = true;
                    }
                    Poll::Ready(Some(Err(error))) => {
                        connection_error(inner, shared.conn_id, &error);
                        return Poll::Ready(End::Done);
                    }
                    Poll::Ready(None) => return Poll::Ready(End::Done),
                    Poll::Pending => break,
                }
            }
            if !first && !accepted {
                break;
            }
            first = false;
            // Each stream in the order it was accepted; a finished one is dropped.
            streams.retain_mut(|stream| stream.as_mut().poll(cx).is_pending());
            // Steps, bodies and flushes may have asked for a kill just now (the waker is
            // registered already).
            if let Some(kill) = shared.take_kill() {
                return Poll::Ready(End::Kill(kill));
            }
            // A step asked for a GOAWAY: asked of h2 now, and written by the accept pass of
            // the poll this wake brings (the same task, so no order changes).
            if let Some(goaway) = faults.take() {
                shutting_down |= faults.go_away(&mut connection, goaway, inner, shared.conn_id);
                cx.waker().wake_by_ref();
            }
        }
        if shutting_down && streams.is_empty() {
            // Everything the streams queued, and the GOAWAY, went out in the accept pass
            // above: the endpoint closes the connection itself, as HTTP/1's does after a
            // `connection: close` response, rather than wait for the client to.
            return Poll::Ready(End::Done);
        }
        if !shutting_down && idle.poll_expired(cx, shared) {
            // keep_alive.idle_timeout: the next poll sends a GOAWAY, and the close follows.
            faults.go_away(
                &mut connection,
                fault::GoAway::Graceful,
                inner,
                shared.conn_id,
            );
            shutting_down = true;
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    })
    .await;
    if let End::Kill(KillMode::Reset) = end {
        // Before the connection (and the transport with it) is dropped below.
        conn.control.reset();
    }
    // The streams first: a request still waiting for its answer is abandoned (recorded in
    // the order the streams were accepted), then the connection holding the transport.
    drop(streams);
    drop(connection);
    end
}

/// Files bytes that did not open an HTTP/2 connection, unless there were none (a client that
/// connected and left).
fn not_a_preface(inner: &Inner, shared: &ConnShared) {
    if shared.read() == 0 {
        return;
    }
    file_unreadable(
        inner,
        shared.conn_id,
        "bytes that are not an HTTP/2 connection preface (the endpoint speaks HTTP/2 with \
         prior knowledge)"
            .to_owned(),
    );
}

/// Files a connection the client broke the protocol on; its own close or GOAWAY is no
/// error of the bytes.
fn connection_error(inner: &Inner, conn_id: u64, error: &::h2::Error) {
    if error.is_io() || error.is_remote() || !error.is_library() {
        return;
    }
    let reason = error
        .reason()
        .map_or_else(|| "no reason".to_owned(), |r| format!("{r:?}"));
    file_unreadable(
        inner,
        conn_id,
        format!("HTTP/2 frames that break the protocol ({reason})"),
    );
}
