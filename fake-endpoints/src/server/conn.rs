//! Per-connection state shared by the HTTP service, the response bodies and the byte-counting
//! IO wrapper, and the hooks the harness gives the endpoint for one connection.

use std::fmt;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use crate::clock::VirtualClock;
use crate::ledger::{CloseKind, Ledger, Side};

/// Abrupt termination of a connection, implemented by whoever owns the transport.
pub trait ConnectionControl: Send + Sync {
    /// Abort the connection with a TCP RST: the peer's next read or write fails with
    /// `io::ErrorKind::ConnectionReset`. The endpoint drops its end right after calling this.
    fn reset(&self);
}

/// A [`ConnectionControl`] that cannot reset: a reset degrades to a plain close. For
/// transports without RST, such as `tokio::io::duplex` in tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReset;

impl ConnectionControl for NoReset {
    fn reset(&self) {}
}

/// What the harness tells an endpoint about a connection it hands over.
#[derive(Clone)]
pub struct ConnInfo {
    /// The harness-assigned connection id (used in ledger records and `Scope::Connection`).
    pub conn_id: u64,
    /// How to reset the connection.
    pub control: Arc<dyn ConnectionControl>,
}

impl ConnInfo {
    /// A connection with a way to reset it.
    pub fn new(conn_id: u64, control: Arc<dyn ConnectionControl>) -> Self {
        Self { conn_id, control }
    }

    /// A connection that cannot be reset ([`NoReset`]).
    pub fn without_reset(conn_id: u64) -> Self {
        Self::new(conn_id, Arc::new(NoReset))
    }
}

impl fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnInfo")
            .field("conn_id", &self.conn_id)
            .finish_non_exhaustive()
    }
}

/// How the endpoint itself ends a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillMode {
    Fin,
    Reset,
}

/// Work to do once the bytes hyper has buffered so far reach the transport.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlushHook {
    /// The ledger response record to complete.
    pub(crate) response: usize,
    /// End the connection afterwards (`Fail::CloseAfter`/`ResetAfter`).
    pub(crate) kill: Option<KillMode>,
}

struct ConnState {
    /// Outbound byte offset at which the connection is cut (`Fail::CloseAfter`/`ResetAfter`).
    cut_at: Option<(u64, KillMode)>,
    /// A hook armed when the cut is reached (the record of a trickled response, whose body
    /// is still being handed over when it is cut).
    cut_hook: Option<FlushHook>,
    seq: u32,
    inbound_mark: u64,
    in_flight: u32,
    idle_since: Instant,
    hooks: Vec<FlushHook>,
    kill: Option<KillMode>,
    close_note: Option<(u64, Side, CloseKind)>,
    waker: Option<Waker>,
}

/// State of one served connection.
pub(crate) struct ConnShared {
    pub(crate) conn_id: u64,
    pub(crate) clock: VirtualClock,
    pub(crate) ledger: Ledger,
    read: AtomicU64,
    written: AtomicU64,
    /// Lets every flush skip the lock when no hook is armed.
    hooks_pending: AtomicBool,
    /// Lets every write skip the lock when no cut is armed.
    cut_armed: AtomicBool,
    /// Whether `state.kill` holds a kill, so a check that need not register a waker skips
    /// the lock. Changed only under the lock.
    kill_pending: AtomicBool,
    /// Whether the serving loop closes idle connections, so `idle_since` is worth keeping.
    tracks_idle: bool,
    state: Mutex<ConnState>,
}

impl ConnShared {
    /// State for connection `conn_id`; `tracks_idle` when the endpoint has an idle timeout.
    pub(crate) fn new(
        conn_id: u64,
        clock: VirtualClock,
        ledger: Ledger,
        tracks_idle: bool,
    ) -> Self {
        Self {
            conn_id,
            clock,
            ledger,
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            hooks_pending: AtomicBool::new(false),
            cut_armed: AtomicBool::new(false),
            kill_pending: AtomicBool::new(false),
            tracks_idle,
            state: Mutex::new(ConnState {
                cut_at: None,
                cut_hook: None,
                seq: 0,
                inbound_mark: 0,
                in_flight: 0,
                idle_since: Instant::now(),
                hooks: Vec::new(),
                kill: None,
                close_note: None,
                waker: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes written to the transport so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Bytes read from the transport so far.
    pub(crate) fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// A request ended without a response whose flush would count it done (an HTTP/2
    /// stream the client reset, or one whose step hangs): the connection may be idle again.
    pub(crate) fn end_unanswered(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 && self.tracks_idle {
            state.idle_since = Instant::now();
        }
    }

    /// A request head arrived: its 1-based sequence number on this connection.
    pub(crate) fn begin_request(&self) -> u32 {
        let mut state = self.lock();
        state.seq = state.seq.saturating_add(1);
        state.in_flight += 1;
        state.seq
    }

    /// The inbound byte range of the request just read completely.
    pub(crate) fn take_inbound_range(&self) -> Range<u64> {
        let read = self.read.load(Ordering::Relaxed);
        let mut state = self.lock();
        let range = state.inbound_mark..read.max(state.inbound_mark);
        state.inbound_mark = range.end;
        range
    }

    /// Run `hook` once the bytes buffered so far have been flushed.
    pub(crate) fn arm(&self, hook: FlushHook) {
        self.lock().hooks.push(hook);
        self.hooks_pending.store(true, Ordering::Release);
    }

    /// The transport reported a completed flush: complete armed responses.
    fn on_flushed(&self) {
        if !self.hooks_pending.swap(false, Ordering::AcqRel) {
            return;
        }
        let now_ms = self.clock.now_ms();
        let written = self.written();
        let mut guard = self.lock();
        // Reborrow through a plain reference so the fields can be borrowed separately.
        let state = &mut *guard;
        let mut finished = 0;
        for hook in state.hooks.drain(..) {
            self.ledger.finish_response(hook.response, now_ms, written);
            finished += 1;
            if let Some(kill) = hook.kill {
                state.kill.get_or_insert(kill);
                self.kill_pending.store(true, Ordering::Release);
            }
        }
        state.in_flight = state.in_flight.saturating_sub(finished);
        if state.in_flight == 0 && self.tracks_idle {
            state.idle_since = Instant::now();
        }
        if state.kill.is_some() {
            if let Some(waker) = &state.waker {
                waker.wake_by_ref();
            }
        }
    }

    /// Cut the connection once `bytes` more bytes (from now) have been written to it: the
    /// bytes past the cut are dropped and the connection ends with `mode`; `hook`, if any,
    /// is armed when the cut is reached.
    pub(crate) fn cut_after(&self, bytes: u64, mode: KillMode, hook: Option<FlushHook>) {
        let at = self.written().saturating_add(bytes);
        let mut state = self.lock();
        if state.cut_at.is_none() {
            state.cut_hook = hook;
        }
        state.cut_at.get_or_insert((at, mode));
        self.cut_armed.store(true, Ordering::Release);
    }

    /// How many of `len` bytes about to be written may go out before an armed cut; arms the
    /// kill when the cut is reached.
    fn allowance(&self, len: usize) -> usize {
        if !self.cut_armed.load(Ordering::Acquire) {
            return len;
        }
        let written = self.written();
        let mut state = self.lock();
        let Some((at, mode)) = state.cut_at else {
            return len;
        };
        let room = usize::try_from(at.saturating_sub(written)).unwrap_or(usize::MAX);
        if room <= len {
            // The cut stays armed: everything after it is swallowed until the kill lands.
            state.kill.get_or_insert(mode);
            if let Some(hook) = state.cut_hook.take() {
                // Completed by the flush that follows this write.
                state.hooks.push(hook);
                self.hooks_pending.store(true, Ordering::Release);
            }
            self.kill_pending.store(true, Ordering::Release);
            if let Some(waker) = &state.waker {
                waker.wake_by_ref();
            }
            room
        } else {
            len
        }
    }

    /// End the connection as soon as the serving task sees it.
    pub(crate) fn kill(&self, mode: KillMode) {
        let mut state = self.lock();
        state.kill.get_or_insert(mode);
        self.kill_pending.store(true, Ordering::Release);
        if let Some(waker) = &state.waker {
            waker.wake_by_ref();
        }
    }

    /// Registers the serving task's waker and takes a pending kill.
    pub(crate) fn poll_kill(&self, waker: &Waker) -> Option<KillMode> {
        let mut state = self.lock();
        match &state.waker {
            Some(current) if current.will_wake(waker) => {}
            _ => state.waker = Some(waker.clone()),
        }
        self.kill_pending.store(false, Ordering::Release);
        state.kill.take()
    }

    /// Takes a pending kill, for a check right after [`ConnShared::poll_kill`] registered
    /// the waker in the same poll: without a kill it does not lock.
    pub(crate) fn take_kill(&self) -> Option<KillMode> {
        if !self.kill_pending.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.lock();
        self.kill_pending.store(false, Ordering::Release);
        state.kill.take()
    }

    /// When the connection became idle, or `None` while a request is in flight. Kept only
    /// when the connection tracks idleness (see [`ConnShared::new`]).
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        let state = self.lock();
        (state.in_flight == 0).then_some(state.idle_since)
    }

    /// Remember the first close observed on the transport.
    fn note_close(&self, by: Side, how: CloseKind) {
        let now_ms = self.clock.now_ms();
        self.lock().close_note.get_or_insert((now_ms, by, how));
    }

    /// The first close observed on the transport: (ms, side, kind).
    pub(crate) fn close_note(&self) -> Option<(u64, Side, CloseKind)> {
        self.lock().close_note
    }
}

fn close_kind(error: &io::Error) -> CloseKind {
    match error.kind() {
        io::ErrorKind::ConnectionReset => CloseKind::Reset,
        kind => CloseKind::Error(kind),
    }
}

/// The transport as hyper sees it: counts bytes for the ledger's byte ranges, completes
/// responses when their bytes are flushed, and notes who closed first.
pub(crate) struct CountingIo<IO> {
    io: IO,
    shared: Arc<ConnShared>,
}

impl<IO> CountingIo<IO> {
    pub(crate) fn new(io: IO, shared: Arc<ConnShared>) -> Self {
        Self { io, shared }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for CountingIo<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let result = ready!(Pin::new(&mut this.io).poll_read(cx, buf));
        match &result {
            Ok(()) => {
                let n = buf.filled().len() - before;
                if n == 0 && wanted {
                    this.shared.note_close(Side::Client, CloseKind::Fin);
                } else {
                    this.shared.read.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
            Err(e) => this.shared.note_close(Side::Client, close_kind(e)),
        }
        Poll::Ready(result)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for CountingIo<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let allowed = this.shared.allowance(buf.len());
        if allowed < buf.len() {
            // The cut: what fits goes out, the rest is swallowed (the connection ends next,
            // so hyper must not see a short write it would retry).
            if allowed > 0 {
                let result = ready!(Pin::new(&mut this.io).poll_write(cx, &buf[..allowed]));
                this.count_write(&result);
                result?;
            }
            return Poll::Ready(Ok(buf.len()));
        }
        let result = ready!(Pin::new(&mut this.io).poll_write(cx, buf));
        this.count_write(&result);
        Poll::Ready(result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.shared.cut_armed.load(Ordering::Acquire) {
            // Cut accounting works one buffer at a time.
            let first = bufs
                .iter()
                .find(|b| !b.is_empty())
                .map_or(&[][..], |b| &**b);
            return Pin::new(this).poll_write(cx, first);
        }
        let result = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs));
        this.count_write(&result);
        Poll::Ready(result)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = ready!(Pin::new(&mut this.io).poll_flush(cx));
        match &result {
            // hyper flushes its transport only after writing everything it buffered, so this is
            // the moment a response's last byte has left.
            Ok(()) => this.shared.on_flushed(),
            Err(e) => this.shared.note_close(Side::Client, close_kind(e)),
        }
        Poll::Ready(result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.shared.note_close(Side::Server, CloseKind::Fin);
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

impl<IO> CountingIo<IO> {
    fn count_write(&self, result: &io::Result<usize>) {
        match result {
            Ok(n) => {
                self.shared.written.fetch_add(*n as u64, Ordering::Relaxed);
            }
            Err(e) => self.shared.note_close(Side::Client, close_kind(e)),
        }
    }
}
