//! `limits.max_client_attempts`, counted where attempts are made, whatever the client path.
//!
//! An attempt of `env.http_client()` is counted when the client sends it; a request that
//! reaches an endpoint without the harness's attempt tag (a client built on
//! `env.connector()`) is counted by the endpoint's [`Gate`] when it arrives, before it reaches
//! the endpoint's script. These are exactly the attempts the trace lists, recorded and
//! reconstructed. The attempt past the limit is refused (never sent, or never answered), so
//! the run holds exactly the limit's attempts and no effect of a refused one, and the run is
//! woken to end at once, even while its client waits on the refused attempt.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

use http::request;
use retrylab_endpoints::wire::{ATTEMPT_HEADER_NAME, HAND_OFF_HEADER_NAME};
use retrylab_endpoints::{Gate, RequestHead};
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// The attempt budget of one run, shared by the harness's client surfaces and the endpoints.
#[derive(Clone, Debug)]
pub(crate) struct AttemptLimit {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Attempts allowed; `None`: no limit.
    max: Option<u64>,
    /// Attempts asked for so far, the refused ones included.
    taken: AtomicU64,
    /// Whether an attempt was refused: the run must stop.
    refused: AtomicBool,
    /// Woken when the first attempt is refused.
    stop: Notify,
}

impl AttemptLimit {
    /// A budget of `max` attempts (`None`: unlimited).
    pub(crate) fn new(max: Option<u64>) -> AttemptLimit {
        AttemptLimit {
            inner: Arc::new(Inner {
                max,
                taken: AtomicU64::new(0),
                refused: AtomicBool::new(false),
                stop: Notify::new(),
            }),
        }
    }

    /// Counts one attempt: `true` if it may go ahead, `false` if it is past the limit (the
    /// first such refusal wakes [`reached`](Self::reached)).
    pub(crate) fn take(&self) -> bool {
        let inner = &*self.inner;
        // One atomic step, so attempts made at once by several tasks or threads cannot
        // overshoot: exactly `max` of them are let through.
        let n = inner.taken.fetch_add(1, Ordering::AcqRel).saturating_add(1);
        match inner.max {
            Some(max) if n > max => {
                if !inner.refused.swap(true, Ordering::AcqRel) {
                    inner.stop.notify_waiters();
                }
                false
            }
            _ => true,
        }
    }

    /// Resolves once an attempt past the limit was refused.
    pub(crate) fn reached(&self) -> Reached<'_> {
        Reached {
            inner: &self.inner,
            // Created before the flag is first read: `notify_waiters` reaches a `Notified`
            // from the moment it exists, so a refusal in between still wakes this wait.
            notified: self.inner.stop.notified(),
            waker: None,
        }
    }
}

pin_project_lite::pin_project! {
    /// The wait [`AttemptLimit::reached`] returns. The run polls it each time the run's task
    /// wakes, most often long before any refusal, so a poll with the waker it already waits
    /// with reads one flag and no more: polling a `Notified` again takes the `Notify`'s
    /// lock, and that was most of the cost of each wake-up of the run.
    pub(crate) struct Reached<'a> {
        inner: &'a Inner,
        #[pin]
        notified: Notified<'a>,
        // The waker the wait is registered with, once it is.
        waker: Option<Waker>,
    }
}

impl Future for Reached<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        // A refusal sets the flag before it notifies: the flag says whether the limit was
        // reached.
        if this.inner.refused.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if this
            .waker
            .as_ref()
            .is_some_and(|w| same_task(w, cx.waker()))
        {
            // Registered with a waker that wakes this same task: a refusal from now on wakes
            // it, and the flag then says so.
            return Poll::Pending;
        }
        // The first poll, or one by another task: register with its waker. Only a refusal
        // notifies, so a notified wait means the limit was reached.
        if this.notified.poll(cx).is_ready() {
            return Poll::Ready(());
        }
        *this.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Whether `kept` (a clone of an earlier poll's waker) wakes the task `current` does.
/// `Waker::will_wake` also compares the vtables' addresses, and a clone made inside tokio
/// carries another copy of the same vtable (the compiler may emit one per codegen unit), so
/// it said no on every poll of the run. The data pointer names the task (tokio's task, or
/// the runtime's handle for `block_on`); a null one, as no-op wakers have, names none.
fn same_task(kept: &Waker, current: &Waker) -> bool {
    kept.will_wake(current) || (!current.data().is_null() && kept.data() == current.data())
}

impl AttemptLimit {
    /// Whether a request that carries the harness's tags (`tagged`) may proceed.
    fn admit_tagged(&self, tagged: bool) -> bool {
        // A request of the harness's own client was counted when it was sent, and a
        // built-in client's dead-letter hand-off is no attempt; anything else is an attempt
        // the trace rebuilds from what the endpoint saw.
        tagged || self.take()
    }
}

impl Gate for AttemptLimit {
    fn admit(&self, parts: &request::Parts) -> bool {
        let headers = &parts.headers;
        self.admit_tagged(
            headers.contains_key(&ATTEMPT_HEADER_NAME)
                || headers.contains_key(&HAND_OFF_HEADER_NAME),
        )
    }

    // The endpoint asks this one: it reads the kept head without rebuilding hyper's parts.
    fn admit_head(&self, head: &RequestHead) -> bool {
        let headers = head.headers();
        self.admit_tagged(
            headers.contains_key(&ATTEMPT_HEADER_NAME)
                || headers.contains_key(&HAND_OFF_HEADER_NAME),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&http::HeaderName, &str)]) -> request::Parts {
        let mut request = http::Request::get("/").body(()).expect("a valid request");
        for (name, value) in headers {
            let value = http::HeaderValue::from_str(value).expect("a valid value");
            request.headers_mut().insert((*name).clone(), value);
        }
        request.into_parts().0
    }

    #[test]
    fn exactly_max_attempts_go_ahead() {
        let limit = AttemptLimit::new(Some(3));
        let taken: Vec<bool> = (0..5).map(|_| limit.take()).collect();
        assert_eq!(taken, [true, true, true, false, false]);
        assert!(AttemptLimit::new(None).take());
    }

    #[test]
    fn the_gate_counts_only_untagged_requests() {
        let limit = AttemptLimit::new(Some(1));
        let tagged = parts(&[(&ATTEMPT_HEADER_NAME, "7")]);
        let hand_off = parts(&[(&HAND_OFF_HEADER_NAME, "dead-letter")]);
        assert!(limit.admit(&tagged));
        assert!(limit.admit(&hand_off));
        assert!(limit.admit(&parts(&[])));
        assert!(!limit.admit(&parts(&[])));
        // Sent before the limit was reached, counted then: still let through.
        assert!(limit.admit(&tagged));

        // The same answers from the head an endpoint keeps, which is what it asks.
        let limit = AttemptLimit::new(Some(1));
        let head = |p: &request::Parts| RequestHead::from(p);
        assert!(limit.admit_head(&head(&tagged)));
        assert!(limit.admit_head(&head(&hand_off)));
        assert!(limit.admit_head(&head(&parts(&[]))));
        assert!(!limit.admit_head(&head(&parts(&[]))));
        assert!(limit.admit_head(&head(&tagged)));
    }

    /// A wait polled again and again by the same task before the refusal (as the run's
    /// root polls it on each of its wake-ups), and one polled by a second task, both wake.
    #[tokio::test(start_paused = true)]
    async fn a_wait_polled_many_times_still_wakes() {
        let limit = AttemptLimit::new(Some(1));
        let waiting = tokio::spawn({
            let limit = limit.clone();
            async move {
                let reached = limit.reached();
                tokio::pin!(reached);
                let mut polls = 0u32;
                loop {
                    tokio::select! {
                        biased;
                        () = &mut reached => return polls,
                        () = tokio::time::sleep(std::time::Duration::from_millis(1)) => polls += 1,
                    }
                }
            }
        });
        let other = tokio::spawn({
            let limit = limit.clone();
            async move { limit.reached().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        assert!(limit.take());
        assert!(!limit.take());
        let polls = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("not panicked");
        assert!(polls >= 5, "polled {polls} times before the refusal");
        tokio::time::timeout(std::time::Duration::from_secs(5), other)
            .await
            .expect("woken")
            .expect("not panicked");
        // Once reached, a new wait is over at once.
        limit.reached().await;
    }

    #[tokio::test]
    async fn the_first_refusal_wakes_a_waiting_run() {
        let limit = AttemptLimit::new(Some(1));
        let waiting = tokio::spawn({
            let limit = limit.clone();
            async move { limit.reached().await }
        });
        tokio::task::yield_now().await;
        assert!(limit.take());
        assert!(!limit.take());
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("not panicked");
    }
}
