//! The network's shared state and every transition of it, behind one mutex.
//!
//! One lock for everything keeps a segment's queueing, its log entry and the partition state
//! consistent, and costs one uncontended lock per operation on the single-threaded runtime.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::time::Instant;

use super::failures::{MAX_OPEN_CONNECTIONS, broken_pipe, reset_error, run_ended};
use super::ids::EndIndex as _;
use super::pipe::{Pipe, Seg};
use super::{ConnId, Dir, Host, HostId, NetEvent, SegmentEvent, SegmentKind, Side};

/// A registered host.
pub(super) struct HostEntry {
    pub name: String,
    pub handler: Arc<dyn Host>,
    /// One-way latency client -> host.
    pub to: Duration,
    /// One-way latency host -> client.
    pub from: Duration,
    /// When set, every segment and SYN to or from the host draws its one-way latency here
    /// instead, in the order they are sent.
    pub sampled: Option<SampledLatency>,
    pub partitioned: bool,
    /// Number of partitions started so far: a SYN that sees it change in flight was lost.
    pub partitions: u64,
    /// Connects whose reply is held by the partition, woken at heal.
    pub heal_wakers: Vec<Waker>,
    /// Crashed and not restarted: SYNs are refused without asking the handler.
    pub down: bool,
}

/// A host's latency distribution and its own substream of the seed.
pub(crate) struct SampledLatency {
    pub(crate) distribution: retrylab_endpoints::LatencyDistribution,
    pub(crate) stream: crate::rng::Stream,
}

/// The state of one end of a connection.
#[derive(Clone, Copy, Default)]
pub(super) struct End {
    /// The stream object is gone (or was never handed out: abandoned connect).
    pub released: bool,
    /// The end receives nothing any more (dropped or reset): data reaching it is answered
    /// with RST.
    pub closed: bool,
    pub fin_sent: bool,
    /// This end sent or scheduled an RST, so it never sends a second one.
    pub rst_sent: bool,
    /// Every operation fails with `ConnectionReset` (an RST was read or sent).
    pub reset: bool,
    /// The peer's FIN was read.
    pub eof: bool,
}

/// A connection slot. Slots are reused so the pipes' queue allocations are too.
pub(super) struct Conn {
    pub live: bool,
    pub id: ConnId,
    pub host: HostId,
    /// Indexed by [`Dir::index`].
    pub pipes: [Pipe; 2],
    /// Indexed by [`Side::index`].
    pub ends: [End; 2],
}

/// What a read finds.
pub(super) enum ReadStep {
    Data(Bytes),
    Eof,
    Reset,
    /// The network's run has ended.
    Ended,
    /// Nothing readable yet: wait for the instant, or for a wake-up when `None`.
    Wait(Option<Instant>),
}

/// The whole network.
pub(super) struct Inner {
    pub start: Instant,
    pub default_latency: Duration,
    pub hosts: Vec<HostEntry>,
    pub by_name: BTreeMap<String, HostId>,
    pub next_conn: u64,
    pub conns: Vec<Conn>,
    pub free: Vec<u32>,
    pub events: Vec<NetEvent>,
    /// The run the network belongs to has ended: connects and stream operations fail.
    pub ended: bool,
    /// The most connections open at once ([`MAX_OPEN_CONNECTIONS`] unless the run set more).
    pub connection_cap: usize,
    /// Connects refused because `connection_cap` were open: the harness's failures, not the
    /// service's, which the run reports as such.
    pub refused_at_cap: u64,
    /// Connects whose SYN has not reached its host yet.
    pub connecting: usize,
    /// Where written data is copied to become segments: one buffer that consecutive
    /// segments share instead of an allocation each, reused once the segments cut from it
    /// have been read ([`SEGMENT_ARENA`]).
    pub arena: BytesMut,
    /// The latest segment instant turned into milliseconds, and its milliseconds
    /// ([`Inner::segment_ms`]).
    pub segment_ms: Option<(Instant, u64)>,
}

/// The bytes [`Inner::arena`] allocates at a time (a write larger than this gets a buffer of
/// its own size). Most segments are a request's or a response's few hundred bytes, so one
/// allocation serves a dozen of them; a segment left unread (held by a partition, say)
/// keeps at most this much alive with it.
const SEGMENT_ARENA: usize = 4096;

/// Whole milliseconds from `start` to `t`.
pub(super) fn ms(start: Instant, t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX)
}

impl Inner {
    pub(super) fn new(start: Instant, default_latency: Duration) -> Inner {
        Inner {
            start,
            default_latency,
            hosts: Vec::new(),
            by_name: BTreeMap::new(),
            next_conn: 1,
            conns: Vec::new(),
            free: Vec::new(),
            events: Vec::new(),
            ended: false,
            connection_cap: MAX_OPEN_CONNECTIONS,
            refused_at_cap: 0,
            connecting: 0,
            arena: BytesMut::new(),
            segment_ms: None,
        }
    }

    /// Connections open now: on their way (SYN sent) or established and not yet closed at
    /// both ends.
    pub(super) fn open_connections(&self) -> usize {
        self.connecting + (self.conns.len() - self.free.len())
    }

    pub(super) fn ms(&self, t: Instant) -> u64 {
        ms(self.start, t)
    }

    pub(super) fn lookup(&self, name: &str) -> io::Result<HostId> {
        self.by_name.get(name).copied().ok_or_else(|| {
            let known: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "unknown host `{name}` (known hosts: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }

    pub(super) fn host(&self, id: HostId) -> &HostEntry {
        &self.hosts[id.0 as usize]
    }

    pub(super) fn host_mut(&mut self, id: HostId) -> &mut HostEntry {
        &mut self.hosts[id.0 as usize]
    }

    /// The partition epoch a SYN sent now carries: `None` if the host is partitioned (the SYN
    /// is lost whatever happens later).
    pub(super) fn syn_epoch(&self, host: HostId) -> Option<u64> {
        let h = self.host(host);
        (!h.partitioned).then_some(h.partitions)
    }

    /// Whether a SYN sent with `epoch` is lost: a partition was in force at some moment of
    /// its flight.
    pub(super) fn syn_lost(&self, host: HostId, epoch: Option<u64>) -> bool {
        epoch.is_none() || epoch != self.syn_epoch(host)
    }

    /// The one-way latency of the next segment (or SYN) `dir` of `host`: fixed, or drawn.
    /// Delivery order holds whatever is drawn: a segment is never delivered before the one
    /// sent before it.
    pub(super) fn latency(&mut self, host: HostId, dir: Dir) -> Duration {
        let h = self.host_mut(host);
        if let Some(s) = &mut h.sampled {
            return s.distribution.sample(&mut s.stream);
        }
        match dir {
            Dir::ClientToServer => h.to,
            Dir::ServerToClient => h.from,
        }
    }

    /// The live connection in `slot`, if it is still `id` (a [`ResetHandle`] may outlive it).
    ///
    /// [`ResetHandle`]: super::ResetHandle
    fn conn_mut(&mut self, slot: u32, id: ConnId) -> Option<&mut Conn> {
        self.conns
            .get_mut(slot as usize)
            .filter(|c| c.live && c.id == id)
    }

    /// Creates the connection state at SYN arrival; returns its slot.
    pub(super) fn open_conn(&mut self, id: ConnId, host: HostId) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.conns.push(Conn {
                    live: false,
                    id,
                    host,
                    pipes: Default::default(),
                    ends: [End::default(); 2],
                });
                u32::try_from(self.conns.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let conn = &mut self.conns[slot as usize];
        conn.live = true;
        conn.id = id;
        conn.host = host;
        conn.ends = [End::default(); 2];
        slot
    }

    fn free_if_released(&mut self, slot: u32) {
        let conn = &mut self.conns[slot as usize];
        if conn.ends.iter().all(|e| e.released) {
            conn.live = false;
            for pipe in &mut conn.pipes {
                pipe.recycle();
            }
            self.free.push(slot);
        }
    }

    /// Puts a segment on the wire at `sent_at` and logs it. Data reaching a closed end is
    /// answered with an RST sent back at its arrival, as a real TCP stack does.
    /// [`ms`] of a segment's instant, remembering the latest: a segment is mostly sent at
    /// the instant the one before it was delivered (an answer), so half the conversions are
    /// looked up instead of worked out.
    fn segment_ms(&mut self, t: Instant) -> u64 {
        match self.segment_ms {
            Some((at, at_ms)) if at == t => at_ms,
            _ => {
                let at_ms = ms(self.start, t);
                self.segment_ms = Some((t, at_ms));
                at_ms
            }
        }
    }

    fn send(&mut self, slot: u32, dir: Dir, kind: SegmentKind, data: Bytes, sent_at: Instant) {
        let lat = self.latency(self.conns[slot as usize].host, dir);
        let conn = &mut self.conns[slot as usize];
        let id = conn.id;
        let pipe = &mut conn.pipes[dir.index()];
        let mut deliver_at = sent_at + lat;
        if let Some(last) = pipe.last_deliver {
            deliver_at = deliver_at.max(last);
        }
        pipe.last_deliver = Some(deliver_at);
        let seq = pipe.next_seq;
        pipe.next_seq = pipe.next_seq.saturating_add(1);
        let offset = pipe.next_offset;
        let len = data.len();
        pipe.next_offset += len as u64;
        let reader = &mut conn.ends[dir.reader().index()];
        let mut answer_at = None;
        if reader.closed {
            if kind == SegmentKind::Data && !reader.rst_sent {
                reader.rst_sent = true;
                answer_at = Some(deliver_at);
            }
        } else {
            if kind == SegmentKind::Rst {
                pipe.rst = Some((seq, deliver_at));
            }
            let was_empty = pipe.segs.is_empty();
            pipe.segs.push_back(Seg {
                deliver_at,
                seq,
                kind,
                data,
            });
            // A non-empty queue's reader already waits on the head's timer (or on a heal).
            if was_empty {
                pipe.wake();
            }
        }
        let event = NetEvent::Segment(SegmentEvent {
            conn: id,
            dir,
            seq,
            sent_at: self.segment_ms(sent_at),
            deliver_at: self.segment_ms(deliver_at),
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            kind,
        });
        self.events.push(event);
        if let Some(at) = answer_at {
            self.send(slot, dir.reverse(), SegmentKind::Rst, Bytes::new(), at);
        }
    }

    pub(super) fn read(
        &mut self,
        slot: u32,
        id: ConnId,
        side: Side,
        max: usize,
        now: impl FnOnce() -> Instant,
        waker: &Waker,
    ) -> ReadStep {
        if self.ended {
            return ReadStep::Ended;
        }
        let Some(conn) = self.conn_mut(slot, id) else {
            return ReadStep::Reset;
        };
        let end = &mut conn.ends[side.index()];
        if end.reset {
            return ReadStep::Reset;
        }
        let pipe = &mut conn.pipes[side.reads().index()];
        let held = pipe.hold_from;
        let Some(head) = pipe.segs.front_mut() else {
            if end.eof {
                return ReadStep::Eof;
            }
            pipe.register(waker);
            return ReadStep::Wait(None);
        };
        if held.is_some_and(|h| head.seq >= h) {
            pipe.register(waker);
            return ReadStep::Wait(None);
        }
        // The clock is read only here: most reads find nothing queued, or data due long ago.
        if head.deliver_at > now() {
            let at = head.deliver_at;
            // Also registered so a local reset or a heal can wake the reader early.
            pipe.register(waker);
            return ReadStep::Wait(Some(at));
        }
        match head.kind {
            SegmentKind::Data if head.data.len() > max => ReadStep::Data(head.data.split_to(max)),
            SegmentKind::Data => match pipe.segs.pop_front() {
                Some(seg) => ReadStep::Data(seg.data),
                None => ReadStep::Wait(None),
            },
            SegmentKind::Fin => {
                pipe.segs.pop_front();
                end.eof = true;
                ReadStep::Eof
            }
            SegmentKind::Rst => {
                pipe.discard();
                end.reset = true;
                ReadStep::Reset
            }
        }
    }

    pub(super) fn write(
        &mut self,
        slot: u32,
        id: ConnId,
        side: Side,
        data: &[u8],
        now: Instant,
    ) -> io::Result<usize> {
        if self.ended {
            return Err(run_ended());
        }
        let Some(conn) = self.conn_mut(slot, id) else {
            return Err(reset_error());
        };
        let end = conn.ends[side.index()];
        if end.reset || conn.pipes[side.reads().index()].rst_delivered(now) {
            return Err(reset_error());
        }
        if end.fin_sent {
            return Err(broken_pipe());
        }
        if data.is_empty() {
            return Ok(0);
        }
        let n = data.len().min(u32::MAX as usize);
        if self.arena.capacity() < n {
            // Takes the buffer back when every segment cut from it is gone, else a new one.
            self.arena.reserve(n.max(SEGMENT_ARENA));
        }
        self.arena.extend_from_slice(&data[..n]);
        let segment = self.arena.split().freeze();
        self.send(slot, side.writes(), SegmentKind::Data, segment, now);
        Ok(n)
    }

    pub(super) fn shutdown(
        &mut self,
        slot: u32,
        id: ConnId,
        side: Side,
        now: Instant,
    ) -> io::Result<()> {
        if self.ended {
            return Err(run_ended());
        }
        let Some(conn) = self.conn_mut(slot, id) else {
            return Err(reset_error());
        };
        let end = &mut conn.ends[side.index()];
        if end.reset || conn.pipes[side.reads().index()].rst_delivered(now) {
            return Err(reset_error());
        }
        if !end.fin_sent {
            end.fin_sent = true;
            self.send(slot, side.writes(), SegmentKind::Fin, Bytes::new(), now);
        }
        Ok(())
    }

    /// Aborts one end: RST to the peer, and this end's own operations fail from now on.
    pub(super) fn reset(&mut self, slot: u32, id: ConnId, side: Side, now: Instant) {
        let Some(conn) = self.conn_mut(slot, id) else {
            return;
        };
        let end = &mut conn.ends[side.index()];
        if end.closed || end.reset {
            return;
        }
        end.reset = true;
        end.closed = true;
        end.rst_sent = true;
        let incoming = &mut conn.pipes[side.reads().index()];
        incoming.discard();
        // The end's own pending read must see the error now, not at its timer.
        incoming.wake();
        self.send(slot, side.writes(), SegmentKind::Rst, Bytes::new(), now);
    }

    /// The run is over: every later connect and stream operation fails with [`run_ended`],
    /// and a reader waiting now is woken to see it.
    pub(super) fn end_run(&mut self) {
        self.ended = true;
        for conn in self.conns.iter_mut().filter(|c| c.live) {
            for pipe in &mut conn.pipes {
                pipe.wake();
            }
        }
    }

    /// The stream object of one end was dropped: FIN unless already shut down or reset, and
    /// an RST for data still travelling towards it.
    pub(super) fn release(&mut self, slot: u32, id: ConnId, side: Side, now: Instant) {
        let Some(conn) = self.conn_mut(slot, id) else {
            return;
        };
        let end = &mut conn.ends[side.index()];
        end.released = true;
        if !end.closed {
            end.closed = true;
            let send_fin = !end.fin_sent && !end.reset;
            end.fin_sent = true;
            let incoming = &mut conn.pipes[side.reads().index()];
            let arriving = incoming
                .segs
                .iter()
                .find(|s| {
                    s.kind == SegmentKind::Data && (s.deliver_at > now || incoming.is_held(s.seq))
                })
                .map(|s| s.deliver_at.max(now));
            incoming.discard();
            incoming.waker = None;
            let rst_at = if arriving.is_some() && !end.rst_sent {
                end.rst_sent = true;
                arriving
            } else {
                None
            };
            if send_fin {
                self.send(slot, side.writes(), SegmentKind::Fin, Bytes::new(), now);
            }
            if let Some(at) = rst_at {
                self.send(slot, side.writes(), SegmentKind::Rst, Bytes::new(), at);
            }
        }
        self.free_if_released(slot);
    }

    /// The client's connect was dropped after the host accepted: the client has no socket,
    /// so the SYN-ACK arriving at `rst_at` is answered with RST.
    pub(super) fn abandon_client(&mut self, slot: u32, id: ConnId, rst_at: Instant) {
        let Some(conn) = self.conn_mut(slot, id) else {
            return;
        };
        let end = &mut conn.ends[Side::Client.index()];
        end.released = true;
        end.closed = true;
        end.rst_sent = true;
        conn.pipes[Dir::ServerToClient.index()].discard();
        self.send(
            slot,
            Dir::ClientToServer,
            SegmentKind::Rst,
            Bytes::new(),
            rst_at,
        );
        self.free_if_released(slot);
    }

    pub(super) fn partition(&mut self, host: HostId, now: Instant) {
        if self.host(host).partitioned {
            return;
        }
        let entry = self.host_mut(host);
        entry.partitioned = true;
        entry.partitions += 1;
        let at = self.ms(now);
        self.events.push(NetEvent::Partition { at, host });
        for conn in self.conns.iter_mut().filter(|c| c.live && c.host == host) {
            for pipe in &mut conn.pipes {
                pipe.hold(now);
            }
        }
    }

    /// The host crashes: from now on it refuses connects, and each of its connections is
    /// reset from its side, as the kernel of a machine whose server process died does (the
    /// RSTs travel like any segment: a partition holds them). Crashing a crashed host does
    /// nothing.
    pub(super) fn crash(&mut self, host: HostId, now: Instant) {
        if self.host(host).down {
            return;
        }
        self.host_mut(host).down = true;
        let at = self.ms(now);
        self.events.push(NetEvent::Crash { at, host });
        let open: Vec<(u32, ConnId)> = self
            .conns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.live && c.host == host)
            .map(|(slot, c)| (u32::try_from(slot).unwrap_or(u32::MAX), c.id))
            .collect();
        for (slot, id) in open {
            self.reset(slot, id, Side::Server, now);
        }
    }

    /// The host accepts connects again (new connections only: the old ones were reset).
    /// Restarting a host that is up does nothing.
    pub(super) fn restart(&mut self, host: HostId, now: Instant) {
        if !self.host(host).down {
            return;
        }
        self.host_mut(host).down = false;
        let at = self.ms(now);
        self.events.push(NetEvent::Restart { at, host });
    }

    pub(super) fn heal(&mut self, host: HostId, now: Instant) {
        if !self.host(host).partitioned {
            return;
        }
        let entry = self.host_mut(host);
        entry.partitioned = false;
        for w in entry.heal_wakers.drain(..) {
            w.wake();
        }
        let at = self.ms(now);
        self.events.push(NetEvent::Heal { at, host });
        for conn in self.conns.iter_mut().filter(|c| c.live && c.host == host) {
            for dir in [Dir::ClientToServer, Dir::ServerToClient] {
                if let Some((first_seq, end_seq)) = conn.pipes[dir.index()].release(now) {
                    self.events.push(NetEvent::Released {
                        at,
                        conn: conn.id,
                        dir,
                        first_seq,
                        end_seq,
                    });
                }
            }
        }
    }
}
