//! A6 retry throttling: a token count kept per server, in thousandths of a token.

use crate::policy::generic::ConfigError;

/// A service config's `retryThrottling`.
///
/// The model (A6, as grpc-go counts): `token_count` starts at `max_tokens`; every failed
/// attempt the client decides on (a retryable status, or a pushback that forbids a retry)
/// subtracts 1, down to 0; every successful call adds `token_ratio`, up to `max_tokens`. A
/// retry is allowed only while the count, after the failure's subtraction, is still above
/// `max_tokens / 2`. Both numbers are kept to three decimal places, as A6 says of
/// `tokenRatio`. **Model:** the count is kept per client instance: a scenario's client talks
/// to one server.
///
/// ```
/// use retrylab::policy::grpc::RetryThrottling;
///
/// let t = RetryThrottling { max_tokens: 10.0, token_ratio: 0.5 };
/// assert!(t.validate().is_ok());
/// assert!(RetryThrottling { max_tokens: 1001.0, token_ratio: 0.5 }.validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryThrottling {
    /// `maxTokens`, in (0, 1000].
    pub max_tokens: f64,
    /// `tokenRatio`, above 0 (three decimal places count).
    pub token_ratio: f64,
}

impl RetryThrottling {
    /// Checks A6's domain: `maxTokens` in (0, 1000], `tokenRatio` finite and above 0.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.max_tokens > 0.0 && self.max_tokens <= 1000.0) {
            return Err(ConfigError {
                field: "maxTokens",
                message: format!("{} is not in (0, 1000]", self.max_tokens),
            });
        }
        if !(self.token_ratio.is_finite() && self.token_ratio > 0.0) {
            return Err(ConfigError {
                field: "tokenRatio",
                message: format!("{} is not above 0", self.token_ratio),
            });
        }
        // Counted in thousandths: a smaller ratio would refill nothing, never what was meant.
        if milli(self.token_ratio) == 0 {
            return Err(ConfigError {
                field: "tokenRatio",
                message: format!(
                    "{} counts as 0: gRPC keeps three decimal places, so at least 0.001",
                    self.token_ratio
                ),
            });
        }
        Ok(())
    }
}

/// Thousandths of a token, truncated: A6 ignores digits past the third decimal place. The
/// nudge keeps a value such as 0.29 (stored as 0.28999...) at 290. Out-of-domain values
/// saturate (a NaN is 0).
fn milli(x: f64) -> u64 {
    libm::floor(x * 1000.0 + 1e-6) as u64
}

/// The token count of one server, in thousandths of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tokens {
    max: u64,
    ratio: u64,
    count: u64,
}

impl Tokens {
    /// A full bucket for `t`.
    pub(super) fn new(t: RetryThrottling) -> Tokens {
        let max = milli(t.max_tokens);
        Tokens {
            max,
            ratio: milli(t.token_ratio),
            count: max,
        }
    }

    /// The count after a failed attempt, and whether it forbids a retry (at or below half
    /// the maximum).
    pub(super) fn after_failure(self) -> (Tokens, bool) {
        let count = self.count.saturating_sub(1000);
        (
            Tokens { count, ..self },
            count.saturating_mul(2) <= self.max,
        )
    }

    /// The count after a successful call.
    pub(super) fn after_success(self) -> Tokens {
        Tokens {
            count: self.count.saturating_add(self.ratio).min(self.max),
            ..self
        }
    }

    /// `9.5/10`: the count and the maximum, in tokens.
    pub(super) fn describe(&self) -> String {
        format!(
            "tokens {}/{}",
            tokens_text(self.count),
            tokens_text(self.max)
        )
    }
}

/// Thousandths as a decimal without trailing zeros: `9500` is `9.5`.
fn tokens_text(milli: u64) -> String {
    let (whole, frac) = (milli / 1000, milli % 1000);
    if frac == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{}", format!("{frac:03}").trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousandths_are_truncated_and_printed_short() {
        assert_eq!(milli(0.29), 290);
        assert_eq!(milli(0.1234), 123);
        assert_eq!(milli(f64::NAN), 0);
        assert_eq!(tokens_text(9500), "9.5");
        assert_eq!(tokens_text(10_000), "10");
        assert_eq!(tokens_text(4_125), "4.125");
    }
}
