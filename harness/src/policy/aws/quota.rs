//! The retry quota: a per-client token bucket that retries draw from (docs/retry-behaviours.md#2-aws-sdk-retry-modes).

/// The retry quota of one client.
///
/// A retry is made only when the quota can pay its cost; a success refunds what the call's
/// last retry cost, or adds 1 (`NO_RETRY_INCREMENT`) when the call
/// succeeded on its first attempt; the quota never rises above its maximum. (botocore's
/// `RetryQuotaChecker`: the cost of the last acquisition is kept in the request context and
/// released on a 2xx.)
///
/// ```
/// use retrylab::policy::aws::RetryQuota;
///
/// let mut quota = RetryQuota::new(500);
/// quota.start_call();
/// assert!(quota.charge(5));
/// assert!(quota.charge(10));
/// assert_eq!(quota.available(), 485);
/// quota.success(); // refunds the last retry's 10, not the 15 paid
/// assert_eq!(quota.available(), 495);
/// quota.start_call();
/// quota.success(); // a first-attempt success adds 1
/// assert_eq!(quota.to_string(), "quota 496/500");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryQuota {
    available: u32,
    max: u32,
    /// What the current call's last retry cost, if it made one.
    last_cost: Option<u32>,
}

impl RetryQuota {
    /// A full quota of `max` tokens.
    pub fn new(max: u32) -> RetryQuota {
        RetryQuota {
            available: max,
            max,
            last_cost: None,
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

    /// A new call begins: it has paid for no retry yet.
    pub fn start_call(&mut self) {
        self.last_cost = None;
    }

    /// Pays for a retry; false (and nothing changes) when the quota cannot.
    pub fn charge(&mut self, cost: u32) -> bool {
        if !self.can_pay(cost) {
            return false;
        }
        self.available -= cost;
        self.last_cost = Some(cost);
        true
    }

    /// The call succeeded: refund its last retry's cost, or add 1 without a retry.
    pub fn success(&mut self) {
        let refund = self.last_cost.take().unwrap_or(super::NO_RETRY_INCREMENT);
        self.available = self.available.saturating_add(refund).min(self.max);
    }
}

impl std::fmt::Display for RetryQuota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "quota {}/{}", self.available, self.max)
    }
}
