//! How much one run may do where parts of a scenario multiply: the calls times the attempts
//! each makes, and the bytes of the requests the endpoints keep, one per attempt
//! ([scenario format](../../../../docs/scenario-format.md#limits-of-the-format)).

use super::Validator;
use crate::scenario::model::bounds::{MAX_ATTEMPTS, MAX_CALLS, MAX_KEPT_REQUEST_BYTES};
use crate::scenario::model::operation::OperationSpec;
use crate::scenario::run_limits::attempts_per_call;

impl Validator<'_> {
    pub(super) fn run_size(&mut self) {
        let s = self.s;
        let o = &s.operation;
        let calls = u64::from(o.calls);
        // Each factor past its own limit has its error already.
        if let Some(per_call) = attempts_per_call(&s.client) {
            if per_call <= MAX_ATTEMPTS
                && calls <= MAX_CALLS
                && calls.saturating_mul(per_call) > MAX_ATTEMPTS
            {
                self.over_limit(
                    "operation.calls",
                    format!(
                        "{} attempts ({calls} calls of up to {per_call} attempts each, `{}`)",
                        calls * per_call,
                        s.client.name(),
                    ),
                    format!(
                        "at most {MAX_ATTEMPTS} attempts per run (fewer calls, or fewer attempts \
                         per call)"
                    ),
                );
            }
        }
        let (attempts, whose) = match s.limits.max_client_attempts {
            Some(n) => (n.min(MAX_ATTEMPTS), "`limits.max_client_attempts`"),
            None => (
                s.default_max_client_attempts(),
                "the default of `limits.max_client_attempts`",
            ),
        };
        let each = request_bytes(o);
        let kept = each.saturating_mul(attempts);
        if kept > MAX_KEPT_REQUEST_BYTES {
            let path = if o.body.is_some() {
                "operation.body"
            } else if o.headers.is_some() {
                "operation.headers"
            } else {
                "operation"
            };
            self.over_limit(
                path,
                format!(
                    "{kept} bytes of requests (the endpoint keeps each request: {each} bytes of \
                     body, headers, method and path, for each of up to {attempts} attempts, \
                     {whose})"
                ),
                format!(
                    "at most {MAX_KEPT_REQUEST_BYTES} bytes of requests per run (a smaller \
                     body, or a lower `limits.max_client_attempts`)"
                ),
            );
        }
    }
}

/// The bytes of one request of the operation that an endpoint keeps: its body, headers,
/// method and path (the harness's own few headers aside).
fn request_bytes(o: &OperationSpec) -> u64 {
    let headers: usize = o
        .headers
        .iter()
        .flat_map(|h| h.entries())
        .map(|(name, value)| name.len() + value.len())
        .sum();
    let body = o.body.as_ref().map_or(0, String::len);
    u64::try_from(headers + body + o.method.len() + o.path.len()).unwrap_or(u64::MAX)
}
