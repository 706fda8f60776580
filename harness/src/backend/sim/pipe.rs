//! One direction of a connection: a FIFO of segments with delivery instants.

use std::collections::VecDeque;
use std::task::Waker;

use bytes::Bytes;
use tokio::time::Instant;

use super::SegmentKind;

/// A segment in flight (or delivered and not read yet).
pub(super) struct Seg {
    /// When the reader may see it. Monotonic along the queue.
    pub deliver_at: Instant,
    /// Index within the direction, used to tell which segments a partition holds.
    pub seq: u32,
    pub kind: SegmentKind,
    /// The unread part of the data (empty for FIN and RST).
    pub data: Bytes,
}

/// One direction of a connection.
#[derive(Default)]
pub(super) struct Pipe {
    pub segs: VecDeque<Seg>,
    /// Byte offset of the next data segment.
    pub next_offset: u64,
    pub next_seq: u32,
    /// Delivery instant of the last segment sent, so later segments never overtake it.
    pub last_deliver: Option<Instant>,
    /// Set while the connection's host is partitioned: segments from this seq on are held.
    /// A seq (not a byte offset) because FIN and RST have no length.
    pub hold_from: Option<u32>,
    /// The RST queued in this direction (seq, delivery instant), so the reading end's writes
    /// can fail as soon as it is delivered, even before the data ahead of it is read.
    pub rst: Option<(u32, Instant)>,
    /// The reading task, woken when the head changes other than by its own timer.
    pub waker: Option<Waker>,
}

impl Pipe {
    /// Empties the pipe so its slot (and the queue's allocation) can serve a new connection.
    pub(super) fn recycle(&mut self) {
        self.segs.clear();
        self.next_offset = 0;
        self.next_seq = 0;
        self.last_deliver = None;
        self.hold_from = None;
        self.rst = None;
        self.waker = None;
    }

    /// Whether a partition holds the segment with this seq.
    pub(super) fn is_held(&self, seq: u32) -> bool {
        self.hold_from.is_some_and(|h| seq >= h)
    }

    /// Whether an RST has reached the reading end.
    pub(super) fn rst_delivered(&self, now: Instant) -> bool {
        match self.rst {
            Some((seq, at)) => at <= now && !self.is_held(seq),
            None => false,
        }
    }

    /// Discards everything queued: the reading end is gone.
    pub(super) fn discard(&mut self) {
        self.segs.clear();
        self.rst = None;
    }

    /// Remembers the reading task, cloning its waker only when it changed.
    pub(super) fn register(&mut self, waker: &Waker) {
        match &self.waker {
            Some(w) if w.will_wake(waker) => {}
            _ => self.waker = Some(waker.clone()),
        }
    }

    /// Wakes the reading task, if one waits.
    pub(super) fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// Starts holding every segment not yet delivered at `now`, and every later one.
    pub(super) fn hold(&mut self, now: Instant) {
        if self.hold_from.is_some() {
            return;
        }
        let first = self.segs.iter().find(|s| s.deliver_at > now).map(|s| s.seq);
        self.hold_from = Some(first.unwrap_or(self.next_seq));
    }

    /// Ends a hold at `now`: held segments are delivered at `max(original instant, now)`,
    /// keeping their order. Returns the range of seqs that were held, if any.
    pub(super) fn release(&mut self, now: Instant) -> Option<(u32, u32)> {
        let from = self.hold_from.take()?;
        for seg in self.segs.iter_mut().filter(|s| s.seq >= from) {
            seg.deliver_at = seg.deliver_at.max(now);
        }
        if let Some((seq, at)) = &mut self.rst {
            if *seq >= from {
                *at = (*at).max(now);
            }
        }
        self.wake();
        if from >= self.next_seq {
            return None;
        }
        self.last_deliver = self.last_deliver.map(|l| l.max(now));
        Some((from, self.next_seq))
    }
}
