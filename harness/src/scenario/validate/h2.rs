//! HTTP/2's own faults and settings (`fail: { rst_stream: .. }`, `fail: { goaway: .. }`,
//! `max_concurrent_streams`) need an endpoint that speaks `http2`: an HTTP/1.1 connection
//! has no stream to reset and no GOAWAY to send, and an `auto` endpoint's built-in client
//! asks in HTTP/1.1.

use super::Validator;
use crate::scenario::model::bounds::MAX_AFTER_BYTES;
use crate::scenario::model::endpoint::{EndpointSpec, Protocol};
use crate::scenario::model::step::FailSpec;
use crate::scenario::yaml::locations::join;

impl Validator<'_> {
    /// A step's HTTP/2 fault, at `path` (its `fail`).
    pub(super) fn h2_fail(&mut self, path: &str, fail: FailSpec) {
        if self.protocol != Protocol::Http2 {
            let what = match fail {
                FailSpec::RstStream { .. } => "`rst_stream` resets an HTTP/2 stream",
                _ => "`goaway` is an HTTP/2 frame",
            };
            self.err_expected(
                path,
                format!(
                    "{what}, and this endpoint speaks `{}`",
                    self.protocol.name()
                ),
                "`protocol: http2` on the endpoint, or a failure HTTP/1.1 has: `close`, \
                 `reset`, `hang`, `{ close: { after_bytes: n } }` or \
                 `{ reset: { after_bytes: n } }`",
            );
        }
        if let FailSpec::RstStream {
            body_bytes: Some(n),
            ..
        } = fail
        {
            self.at_most(
                &join(&join(path, "rst_stream"), "body_bytes"),
                n,
                MAX_AFTER_BYTES,
                "bytes (more than any response holds)",
            );
        }
    }

    /// `max_concurrent_streams`: at least 1, on an `http2` endpoint.
    pub(super) fn max_concurrent_streams(&mut self, path: &str, e: &EndpointSpec) {
        let Some(max) = e.max_concurrent_streams else {
            return;
        };
        let key = join(path, "max_concurrent_streams");
        self.count_at_least_one(&key, Some(max), "max_concurrent_streams");
        if e.protocol != Protocol::Http2 {
            self.err_expected(
                &key,
                format!(
                    "`max_concurrent_streams` is an HTTP/2 setting, and this endpoint speaks `{}`",
                    e.protocol.name()
                ),
                "`protocol: http2` on the endpoint",
            );
        }
    }
}
