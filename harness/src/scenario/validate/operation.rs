//! `operation:`: the request the client sends, and how many calls
//! ([scenario format](../../../../docs/scenario-format.md#operation)).

use super::{Validator, is_token};
use crate::scenario::locations::join;

impl Validator<'_> {
    pub(super) fn operation(&mut self) {
        let o = &self.s.operation;
        self.endpoint_ref("operation.endpoint", &o.endpoint);
        if !is_token(&o.method) {
            self.err_expected(
                "operation.method",
                format!("invalid method `{}`", o.method),
                "an HTTP method such as `GET` or `POST`",
            );
        }
        if !o.path.starts_with('/') || o.path.contains(char::is_whitespace) {
            self.err_expected(
                "operation.path",
                format!("invalid path `{}`", o.path),
                "a path starting with `/`, without spaces",
            );
        }
        if let Some(h) = &o.headers {
            self.headers("operation.headers", h);
        }
        if let Some(k) = &o.idempotency_key {
            if !is_token(&k.header) {
                self.err_expected(
                    "operation.idempotency_key.header",
                    format!("invalid header name `{}`", k.header),
                    "a header name such as `Idempotency-Key`",
                );
            }
        }
        for (key, n) in [
            ("calls", o.calls),
            ("concurrency", o.concurrency),
            ("clients", o.clients),
        ] {
            self.count_at_least_one(&join("operation", key), Some(n), key);
        }
        if let Some(start) = &o.start {
            self.latency("operation.start", start);
        }
    }
}
