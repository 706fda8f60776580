//! Waiting for a virtual instant with one reusable, lazily allocated timer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};

/// A timer slot: `None` until the first wait that is not already due, so a zero-latency
/// network never allocates one.
pub(super) type TimerSlot = Option<Pin<Box<Sleep>>>;

/// Ready once virtual now reaches `at`; otherwise arms `slot` for `at` and registers the task.
pub(super) fn poll_until(slot: &mut TimerSlot, at: Instant, cx: &mut Context<'_>) -> Poll<()> {
    poll_until_from(slot, at, Instant::now(), cx)
}

/// [`poll_until`] for a caller that has just read virtual now (reading tokio's paused clock
/// takes a lock).
pub(super) fn poll_until_from(
    slot: &mut TimerSlot,
    at: Instant,
    now: Instant,
    cx: &mut Context<'_>,
) -> Poll<()> {
    if now >= at {
        return Poll::Ready(());
    }
    let sleep = slot.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
    if sleep.deadline() != at {
        sleep.as_mut().reset(at);
    }
    sleep.as_mut().poll(cx)
}
