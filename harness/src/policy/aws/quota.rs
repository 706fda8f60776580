//! The retry quota: a per-client token bucket that retries draw from (docs/retry-behaviours.md#2-aws-sdk-retry-modes).

use std::collections::BTreeMap;

/// The retry quota of one client.
///
/// A retry is made only when the quota can pay its cost; a success refunds what the call's
/// last retry cost, or adds 1 (`NO_RETRY_INCREMENT`) when the call
/// succeeded on its first attempt; the quota never rises above its maximum. (botocore's
/// `RetryQuotaChecker`: the cost of the last acquisition is kept in the request context and
/// released on a 2xx.) Calls of one client may be in flight at once: each is named by its
/// index among the client's calls, and keeps its own last cost, while all draw on one bucket.
///
/// ```
/// use retrylab::policy::aws::RetryQuota;
///
/// let mut quota = RetryQuota::new(500);
/// quota.start_call(0);
/// quota.start_call(1); // a second call, in flight beside the first
/// assert!(quota.charge(0, 5));
/// assert!(quota.charge(1, 10));
/// assert_eq!(quota.available(), 485);
/// quota.success(0); // refunds call 0's last retry, 5
/// assert_eq!(quota.available(), 490);
/// quota.success(1); // and call 1's, 10
/// quota.start_call(2);
/// quota.success(2); // a first-attempt success adds 1
/// assert_eq!(quota.to_string(), "quota 500/500");
/// quota.start_call(3);
/// assert!(quota.charge(3, 5));
/// quota.end_call(3); // failed: nothing comes back
/// assert_eq!(quota.available(), 495);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryQuota {
    available: u32,
    max: u32,
    /// What each call in flight paid for its last retry, by call index; a call that has made
    /// no retry has no entry, and a call's entry goes when it ends.
    last_cost: BTreeMap<u32, u32>,
}

impl RetryQuota {
    /// A full quota of `max` tokens.
    pub fn new(max: u32) -> RetryQuota {
        RetryQuota {
            available: max,
            max,
            last_cost: BTreeMap::new(),
        }
    }

    /// Tokens left.
    pub fn available(&self) -> u32 {
        self.available
    }

    /// The bucket's size.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Whether a retry costing `cost` can be paid for.
    pub fn can_pay(&self, cost: u32) -> bool {
        cost <= self.available
    }

    /// Call `call` begins: it has paid for no retry yet.
    pub fn start_call(&mut self, call: u32) {
        self.last_cost.remove(&call);
    }

    /// Pays for a retry of call `call`; false (and nothing changes) when the quota cannot.
    pub fn charge(&mut self, call: u32, cost: u32) -> bool {
        if !self.can_pay(cost) {
            return false;
        }
        self.available -= cost;
        self.last_cost.insert(call, cost);
        true
    }

    /// Call `call` succeeded: refund its last retry's cost, or add 1 without a retry.
    pub fn success(&mut self, call: u32) {
        let refund = self
            .last_cost
            .remove(&call)
            .unwrap_or(super::NO_RETRY_INCREMENT);
        self.available = self.available.saturating_add(refund).min(self.max);
    }

    /// Call `call` ended without a success: nothing is refunded, and its cost is forgotten.
    pub fn end_call(&mut self, call: u32) {
        self.last_cost.remove(&call);
    }
}

impl std::fmt::Display for RetryQuota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "quota {}/{}", self.available, self.max)
    }
}
