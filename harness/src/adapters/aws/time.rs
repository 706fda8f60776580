//! The SDK's clock on virtual time.
//!
//! The SDK reads the time through a `TimeSource` (request signing, the `amz-sdk-request`
//! header's TTL, clock-skew correction, the adaptive mode's rate limiter, a refilling retry
//! quota) and sleeps through an `AsyncSleep` (backoff, timeouts). Left to its defaults it
//! reads `SystemTime::now()`, which barely moves while a run covers hours. Its sleeps are
//! aws-smithy-async's `TokioSleep`, whose sleeps are tokio's and so follow the paused clock
//! with no help.

use std::time::SystemTime;

use aws_smithy_async::time::TimeSource;
use retrylab_endpoints::VirtualClock;

/// A `TimeSource` that reads the run's virtual wall clock
/// ([`env.now_system()`](crate::Env::now_system)): the scenario's `epoch` plus the virtual
/// time elapsed.
///
/// ```
/// use aws_smithy_async::time::TimeSource;
/// use retrylab::adapters::aws::VirtualTimeSource;
/// # use retrylab::prelude::*;
/// # let scenario = Scenario::builder("time source")
/// #     .endpoint("api", endpoint().script([status(200)]))
/// #     .operation(post("api", "/"))
/// #     .epoch("2026-03-01T12:00:00Z")
/// #     .build()
/// #     .unwrap();
///
/// let report = scenario.run(|env: Env| async move {
///     let time = VirtualTimeSource::new(&env);
///     tokio::time::sleep(std::time::Duration::from_secs(90)).await; // virtual: instant
///     Ok::<_, ()>(httpdate::fmt_http_date(time.now()))
/// });
///
/// let date = &report.trace().calls[0].result;
/// assert_eq!(date, &retrylab::trace::CallResult::Success(r#""Sun, 01 Mar 2026 12:01:30 GMT""#.into()));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct VirtualTimeSource {
    clock: VirtualClock,
}

impl VirtualTimeSource {
    /// The virtual wall clock of `env`'s run.
    pub fn new(env: &crate::Env) -> VirtualTimeSource {
        VirtualTimeSource {
            clock: *env.clock(),
        }
    }
}

impl TimeSource for VirtualTimeSource {
    fn now(&self) -> SystemTime {
        self.clock.now_system()
    }
}
