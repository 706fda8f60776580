//! `ServiceNow`'s cloud-request retry strategies (docs/retry-behaviours.md#5-servicenow):
//! exponential backoff, [`ServicenowExponential`] (`servicenow_exponential`), and the
//! response-header backoff, [`ServicenowHeader`] (`servicenow_header`).
//!
//! Both strategies share what the vendor's configuration names: a count of retries after the
//! first attempt, the response codes that are retried, and an additional delay window whose
//! uniform draw is added to every delay. They differ in where the delay before the window
//! comes from. The third strategy, a user's `get_delay(attempt, response)`, has no built-in
//! policy: a client registered in Rust plays it (`client: { custom: <name> }`).

mod exponential;
mod header;

#[cfg(test)]
mod tests;

use super::{AttemptView, Observed, StopReason};

pub use exponential::{ServicenowExponential, ServicenowExponentialConfig};
pub use header::{DelayUnit, ServicenowHeader, ServicenowHeaderConfig};

/// What both strategies answer before they compute a delay: stop on a success, on an
/// outcome that is not one of `response_codes`, and after `max_retries` retries; `None`
/// when retry `ctx.n` is due.
///
/// **Model.** The vendor's configuration lists response codes only, so a timeout, a reset
/// or a refused connection, which carry no code, is not retried.
fn stop_reason(ctx: &AttemptView, response_codes: &[u16], max_retries: u32) -> Option<StopReason> {
    match ctx.outcome {
        _ if ctx.outcome.is_success() => Some(StopReason::Success),
        Observed::Status(status) if response_codes.contains(&status) => {
            (ctx.n > max_retries).then_some(StopReason::MaxAttemptsExceeded)
        }
        _ => Some(StopReason::NotRetryable),
    }
}
