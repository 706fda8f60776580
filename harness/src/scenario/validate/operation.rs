//! `operation:`: the request the client sends, and how many calls
//! ([scenario format](../../../../docs/scenario-format.md#operation)).

use super::Validator;
use crate::scenario::locations::join;

impl Validator<'_> {
    pub(super) fn operation(&mut self) {
        let o = &self.s.operation;
        self.endpoint_ref("operation.endpoint", &o.endpoint);
        self.converts(self.s.method_at("operation.method", &o.method));
        self.converts(self.s.request_url());
        if let Some(h) = &o.headers {
            self.headers("operation.headers", h);
        }
        if let Some(k) = &o.idempotency_key {
            self.converts(
                self.s
                    .header_name_at("operation.idempotency_key.header", &k.header),
            );
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
