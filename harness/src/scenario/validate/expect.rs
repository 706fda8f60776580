//! `expect:`: checks that need something elsewhere in the scenario to be meaningful
//! ([scenario format](../../../../docs/scenario-format.md#expectations)).

use super::Validator;
use super::is_token;
use crate::scenario::model::bounds::MAX_CODES;
use crate::scenario::model::client::ClientSpec;
use crate::scenario::model::endpoint::EndpointKind;
use crate::scenario::yaml::locations::join;

impl Validator<'_> {
    pub(super) fn expect(&mut self) {
        let s = self.s;
        let e = &s.expect;
        let o = &s.operation;
        if e.outcome.is_some() && e.outcomes.is_some() {
            self.err_key(
                "expect.outcomes",
                "`outcomes` cannot be combined with `outcome`; use one",
            );
        }
        if let Some(outcomes) = &e.outcomes {
            let calls = u64::from(o.calls) * u64::from(o.clients);
            if outcomes.len() as u64 != calls {
                self.err_expected(
                    "expect.outcomes",
                    format!("{} outcomes for {calls} calls", outcomes.len()),
                    "one outcome per logical call",
                );
            }
        }
        if e.stop_reason.is_some() && matches!(s.client, ClientSpec::Custom(_)) {
            self.err(
                "expect.stop_reason",
                "`stop_reason` is reported by reference clients only, and `client` is custom",
            );
        }
        if e.effects.is_some() && o.is_concurrent() && o.idempotency_key.is_none() && !o.call_tag {
            self.err_expected(
                "expect.effects",
                "concurrent calls without an idempotency key or a call tag: effects cannot be attributed to calls",
                "`operation.idempotency_key: { header: ... }` or `operation.call_tag: true`",
            );
        }
        let has_keys =
            o.idempotency_key.is_some() || s.endpoints.values().any(|e| e.dedupe.is_some());
        if e.same_idempotency_key.is_some() && !has_keys {
            self.err_expected(
                "expect.same_idempotency_key",
                "`same_idempotency_key` needs to know which header holds the key",
                "`operation.idempotency_key` or an endpoint's `dedupe.header`",
            );
        }
        // These judge the messages brokers stored.
        let has_broker = s.endpoints.values().any(|e| e.kind == EndpointKind::Broker);
        for (key, set) in [
            ("distinct_keys", e.distinct_keys.is_some()),
            ("duplicates", e.duplicates.is_some()),
            ("consumer", e.consumer.is_some()),
        ] {
            if set && !has_broker {
                self.err_expected(
                    &join("expect", key),
                    format!(
                        "`{key}` judges the messages a broker stored, and no endpoint is a broker"
                    ),
                    "an endpoint with `kind: broker`",
                );
            }
        }
        if e.dead_lettered.is_some()
            && !s
                .endpoints
                .values()
                .any(|e| e.kind == EndpointKind::DeadLetter)
        {
            self.err_expected(
                "expect.dead_lettered",
                "no endpoint is a dead-letter store",
                "an endpoint with `kind: dead_letter`",
            );
        }
        if let Some(h) = &e.header {
            if !is_token(&h.name) {
                self.err_expected(
                    "expect.header.name",
                    format!("invalid header name `{}`", h.name),
                    "a header name",
                );
            }
            if h.values.is_empty() {
                self.err_expected(
                    "expect.header.values",
                    "no values",
                    "at least one allowed value",
                );
            }
        }
        self.expect_fleet_and_timing();
    }

    /// The checks of rates, fleets and timing: `max_rate`, `retry_waves`, `amplification`,
    /// `conforms_to` and `jitter`, each with what its evidence needs.
    fn expect_fleet_and_timing(&mut self) {
        let s = self.s;
        let e = &s.expect;
        let o = &s.operation;
        self.too_many(
            "expect.not_retried_on",
            e.not_retried_on.len(),
            MAX_CODES,
            "statuses",
            "in a list",
        );
        if let Some(m) = &e.max_rate {
            self.positive("expect.max_rate.window", m.window, "`window`");
        }
        if let Some(w) = &e.retry_waves {
            self.positive("expect.retry_waves.window", w.window, "`window`");
            if w.k == 0 {
                self.err_expected(
                    "expect.retry_waves.k",
                    "`k: 0` is not allowed",
                    "at least 1",
                );
            }
            // A wave is `k` distinct clients: a smaller fleet has none, and the check would
            // pass whatever its clients did.
            if w.k > o.clients {
                self.err_expected(
                    "expect.retry_waves.k",
                    format!(
                        "a wave is {} or more clients retrying, and the fleet has {} \
                         (`operation.clients`): no run could show one",
                        w.k, o.clients
                    ),
                    format!("at most {} (`operation.clients`)", o.clients),
                );
            }
        }
        if let Some(a) = &e.amplification {
            if let Some(at_most) = a.at_most.filter(|x| !(x.is_finite() && *x >= 1.0)) {
                self.err_expected(
                    "expect.amplification.at_most",
                    format!("{at_most} is below 1: every call makes at least one request"),
                    "a number of at least 1",
                );
            }
            if a.p99_at_most == Some(0) {
                self.err_expected(
                    "expect.amplification.p99_at_most",
                    "0 is below 1: every call makes at least one attempt",
                    "a count of at least 1",
                );
            }
            if a.at_most.is_none() && a.p99_at_most.is_none() {
                self.err_expected(
                    "expect.amplification",
                    "`amplification` bounds nothing",
                    "`at_most` (requests per call over the run), `p99_at_most` (attempts of \
                     one call at the 99th percentile), or both",
                );
            }
        }
        if let Some(c) = &e.conforms_to {
            self.policy("expect.conforms_to", c);
        }
        // A single call's delays fit some schedule whatever they are: only two calls that
        // retried after the same responses can show a delay that is not a function of them.
        if e.jitter.is_some() && u64::from(o.calls) * u64::from(o.clients) < 2 {
            self.err_expected(
                "expect.jitter",
                "`jitter` compares the delays of calls that retried after the same responses, \
                 and the scenario makes 1 call",
                "`operation.calls` of 2 or more",
            );
        }
    }
}
