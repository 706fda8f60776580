//! `operation:`: the request the client sends, and how many calls
//! ([scenario format](../../../../docs/scenario-format.md#operation)).

use super::Validator;
use crate::scenario::model::bounds::{MAX_CALLS, MAX_CLIENTS, MAX_CONCURRENCY};
use crate::scenario::yaml::locations::join;

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
        self.at_most(
            "operation.calls",
            u64::from(o.calls),
            MAX_CALLS,
            "calls per run",
        );
        self.at_most(
            "operation.concurrency",
            u64::from(o.concurrency),
            u64::from(MAX_CONCURRENCY),
            "calls in flight",
        );
        self.at_most(
            "operation.clients",
            u64::from(o.clients),
            u64::from(MAX_CLIENTS),
            "clients",
        );
        let calls = u64::from(o.calls) * u64::from(o.clients);
        if u64::from(o.calls) <= MAX_CALLS && o.clients <= MAX_CLIENTS && calls > MAX_CALLS {
            self.over_limit(
                "operation.clients",
                format!(
                    "{} clients of {} calls each ({calls} calls)",
                    o.clients, o.calls
                ),
                format!("at most {MAX_CALLS} calls per run"),
            );
        }
        if let Some(body) = &o.body {
            self.body("operation.body", body);
        }
        if let Some(start) = &o.start {
            self.latency("operation.start", start);
        }
    }
}
