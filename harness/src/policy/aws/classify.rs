//! How the AWS retry modes classify an attempt (docs/retry-behaviours.md#2-aws-sdk-retry-modes).

use crate::policy::{AttemptView, Observed};

/// Error codes that mark a throttling error, retried (2.1: at the throttling cost and base).
pub(crate) const THROTTLING_ERROR_CODES: &[&str] = &[
    "PriorRequestNotComplete",
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "EC2ThrottledException",
];

/// Error codes that mark a transient error, retried whatever the status.
pub(crate) const TRANSIENT_ERROR_CODES: &[&str] = &["RequestTimeout", "RequestTimeoutException"];

/// HTTP statuses retried as transient errors.
pub(crate) const TRANSIENT_STATUSES: &[u16] = &[500, 502, 503, 504];

/// The status botocore 1.44.18 retries as a throttle when no error code says otherwise
/// (`ThrottlingStatusCodeChecker` in `botocore/retries/standard.py`).
pub(crate) const THROTTLING_STATUS: u16 = 429;

/// What an attempt came to, in the AWS SDKs' terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// A 2xx.
    Success,
    /// A throttling error code, whatever the status.
    Throttling,
    /// The client's own timeout (connect or read).
    Timeout,
    /// A transport error: reset, close before the head, refused connect.
    Io,
    /// A transient error code, or a bare 500/502/503/504.
    Transient,
    /// Anything else: a 4xx (a bare 429 included, but with [`Reading::bare_429_throttles`]),
    /// other statuses, unknown codes.
    NotRetryable,
}

/// What an SDK's reading adds to the classes every SDK shares.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reading {
    /// A 429 that names no throttling code is a throttle (botocore 1.44.18), instead of not
    /// retryable (the specification's list, and smithy-rs).
    pub(crate) bare_429_throttles: bool,
}

impl Class {
    /// The class of `ctx` as every SDK reads it. A throttling code wins over the status
    /// (S3's `503 SlowDown` is a throttle), then a transient code, then the status.
    // Only the tests classify with the default reading; the policies pass theirs.
    #[cfg(test)]
    pub(crate) fn of(ctx: &AttemptView) -> Class {
        Class::read(ctx, Reading::default())
    }

    /// The class of `ctx` as `reading` reads it: with `bare_429_throttles`, a 429 whose code
    /// is no throttling code is a throttle too, whatever else its code is (botocore asks
    /// whether the code is one of the operation's modelled errors, which retrylab cannot
    /// know: it reads every such 429 as an unmodelled one).
    pub(crate) fn read(ctx: &AttemptView, reading: Reading) -> Class {
        let code = ctx.error_code.as_deref();
        match ctx.outcome {
            Observed::Status(200..=299) => Class::Success,
            Observed::Timeout => Class::Timeout,
            Observed::Transport(_) | Observed::Refused => Class::Io,
            Observed::Status(status) => {
                if code.is_some_and(|c| THROTTLING_ERROR_CODES.contains(&c))
                    || (reading.bare_429_throttles && status == THROTTLING_STATUS)
                {
                    Class::Throttling
                } else if code.is_some_and(|c| TRANSIENT_ERROR_CODES.contains(&c))
                    || TRANSIENT_STATUSES.contains(&status)
                {
                    Class::Transient
                } else {
                    Class::NotRetryable
                }
            }
        }
    }

    pub(crate) fn is_retryable(self) -> bool {
        !matches!(self, Class::Success | Class::NotRetryable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn status(s: u16) -> AttemptView {
        AttemptView::new(1, Observed::Status(s), 0, Some(1), 1)
    }

    #[test]
    fn classes() {
        assert_eq!(Class::of(&status(200)), Class::Success);
        for s in [500, 502, 503, 504] {
            assert_eq!(Class::of(&status(s)), Class::Transient, "{s}");
        }
        for s in [400, 404, 429, 501, 505, 599, 301] {
            assert_eq!(Class::of(&status(s)), Class::NotRetryable, "{s}");
        }
        assert_eq!(
            Class::of(&status(400).with_error_code("ThrottlingException")),
            Class::Throttling
        );
        assert_eq!(
            Class::of(&status(503).with_error_code("SlowDown")),
            Class::Throttling
        );
        assert_eq!(
            Class::of(&status(429).with_error_code("TooManyRequestsException")),
            Class::Throttling
        );
        assert_eq!(
            Class::of(&status(400).with_error_code("RequestTimeout")),
            Class::Transient
        );
        assert_eq!(
            Class::of(&status(400).with_error_code("ValidationException")),
            Class::NotRetryable
        );
        assert_eq!(
            Class::of(&status(503).with_error_code("ServiceUnavailable")),
            Class::Transient
        );
        let timeout = AttemptView::new(1, Observed::Timeout, 0, None, 5);
        assert_eq!(Class::of(&timeout), Class::Timeout);
        let reset = AttemptView::new(
            1,
            Observed::Transport(io::ErrorKind::ConnectionReset),
            0,
            None,
            5,
        );
        assert_eq!(Class::of(&reset), Class::Io);
        let refused = AttemptView::new(1, Observed::Refused, 0, None, 5);
        assert_eq!(Class::of(&refused), Class::Io);
        assert_eq!(THROTTLING_ERROR_CODES.len(), 14);
    }

    #[test]
    fn botocore_1_44_reads_a_bare_429_as_a_throttle() {
        let reading = Reading {
            bare_429_throttles: true,
        };
        assert_eq!(Class::read(&status(429), reading), Class::Throttling);
        let coded = status(429).with_error_code("SomethingElse");
        assert_eq!(Class::read(&coded, reading), Class::Throttling);
        // Only 429: the other statuses read as every SDK reads them.
        assert_eq!(Class::read(&status(400), reading), Class::NotRetryable);
        assert_eq!(Class::read(&status(503), reading), Class::Transient);
        assert_eq!(Class::of(&status(429)), Class::NotRetryable);
    }
}
