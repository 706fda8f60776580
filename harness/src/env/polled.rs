//! Which call of the run is being polled, for a client built once per run that must still
//! tag each request with the call that sent it (the AWS SDK's: its retry strategy and
//! quota live as long as the client, so the adapter builds one per run).
//!
//! The run polls each call's future inside [`polled`], which names the call on the run's
//! thread for the duration of the poll. A client sends its request synchronously within
//! that poll, so [`polled_call`] names the call that sent it, also when calls run
//! concurrently. A task the client spawns is polled outside any call: it has no call.

#[cfg(feature = "aws")]
pub(crate) use self::marked::{polled, polled_call};

#[cfg(feature = "aws")]
mod marked {
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use crate::Env;

    thread_local! {
        /// The call being polled on this thread.
        static POLLED: RefCell<Option<Env>> = const { RefCell::new(None) };
    }

    pin_project_lite::pin_project! {
        /// A call's future that names its call while it is polled.
        pub(crate) struct Polled<F> {
            #[pin]
            inner: F,
            env: Env,
        }
    }

    /// `call`, naming `env`'s call while it is polled.
    pub(crate) fn polled<F: Future>(env: Env, call: F) -> Polled<F> {
        Polled { inner: call, env }
    }

    /// The `Env` of the call being polled on this thread, if any.
    pub(crate) fn polled_call() -> Option<Env> {
        POLLED.with(|cell| cell.borrow().clone())
    }

    /// Puts back the call that was named before a poll, also when the poll panics.
    struct Restore(Option<Env>);

    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            POLLED.with(|cell| *cell.borrow_mut() = previous);
        }
    }

    impl<F: Future> Future for Polled<F> {
        type Output = F::Output;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            let this = self.project();
            let previous = POLLED.with(|cell| cell.replace(Some(this.env.clone())));
            let _restore = Restore(previous);
            this.inner.poll(cx)
        }
    }
}

/// Without an adapter that needs it, a call's future as it is.
#[cfg(not(feature = "aws"))]
pub(crate) fn polled<F: std::future::Future>(_env: crate::Env, call: F) -> F {
    call
}
