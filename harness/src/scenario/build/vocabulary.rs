//! The builder's vocabulary: free functions that start its sentences, so a scenario made in
//! code reads like its YAML.
//!
//! ```
//! use retrylab::prelude::*;
//!
//! let scenario = Scenario::builder("503 twice, then 200")
//!     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
//!     .latency(ms(1))
//!     .operation(post("api", "/orders"))
//!     .client(exponential().initial(ms(100)).max_attempts(4))
//!     .expect(expect().outcome(Success).attempts(3).gaps_each(at_most(ms(400))))
//!     .build()
//!     .unwrap();
//! assert_eq!(scenario.client.max_attempts(), Some(4));
//! ```

use crate::scenario::model::client::{ExponentialParams, FixedParams, LinearParams};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::endpoint::EndpointSpec;
use crate::scenario::model::expect::Expectations;
use crate::scenario::model::operation::OperationSpec;
use crate::scenario::model::step::{FailSpec, StepSpec};
use crate::scenario::model::values::BoundSpec;

/// `n` milliseconds.
///
/// ```
/// use retrylab::prelude::*;
/// assert_eq!(ms(2000), secs(2));
/// assert_eq!(ms(1500).as_ms(), 1500);
/// ```
pub const fn ms(n: u64) -> Millis {
    Millis::from_ms(n)
}

/// `n` seconds.
pub const fn secs(n: u64) -> Millis {
    Millis::from_secs(n)
}

/// An HTTP endpoint with no script yet (`kind: http`).
pub fn endpoint() -> EndpointSpec {
    EndpointSpec::http()
}

/// A script step that answers `code`: `status(503).times(2)`.
///
/// ```
/// use retrylab::prelude::*;
/// let step = status(429).times(2);
/// assert_eq!((step.status, step.times), (Some(429), Some(2)));
/// ```
pub fn status(code: u16) -> StepSpec {
    StepSpec::status(code)
}

/// A script step that fails the connection: `fail(FailSpec::Reset)`.
pub fn fail(how: FailSpec) -> StepSpec {
    StepSpec::fail(how)
}

/// A `GET` of `path` on `endpoint`.
pub fn get(endpoint: impl Into<String>, path: impl Into<String>) -> OperationSpec {
    OperationSpec::get(endpoint, path)
}

/// A `POST` to `path` on `endpoint`.
pub fn post(endpoint: impl Into<String>, path: impl Into<String>) -> OperationSpec {
    OperationSpec::post(endpoint, path)
}

/// The `exponential` policy with its defaults (100ms, x2, 20s cap, full jitter, 3 attempts).
///
/// ```
/// use retrylab::prelude::*;
/// let client: ClientSpec = exponential().initial(ms(50)).max_delay(secs(2)).max_attempts(5).into();
/// assert_eq!(client.max_attempts(), Some(5));
/// ```
pub fn exponential() -> ExponentialParams {
    ExponentialParams::default()
}

/// The `fixed` policy: `delay` before every retry.
pub fn fixed(delay: Millis) -> FixedParams {
    FixedParams {
        delay,
        ..FixedParams::default()
    }
}

/// The `linear` policy's parameters with their defaults; a client takes them as
/// `ClientSpec::Linear(linear())` (or `ClientSpec::Fibonacci`, which reads them too).
pub fn linear() -> LinearParams {
    LinearParams::default()
}

/// No expectations yet: `expect().outcome(Success).attempts(3)`.
pub fn expect() -> Expectations {
    Expectations::default()
}

/// A gap bound: between `min` and `max`, inclusive (`within(ms(0), ms(200))`). Panics when `min > max`, a mistake in the
/// test itself (YAML bounds are validated with a located error instead).
#[track_caller]
pub fn within(min: Millis, max: Millis) -> BoundSpec {
    match BoundSpec::within(min, max) {
        Some(bound) => bound,
        None => panic!("within({min}, {max}): the lower bound is above the upper one"),
    }
}

/// A gap bound: at least `min`.
pub fn at_least(min: Millis) -> BoundSpec {
    BoundSpec::AtLeast(min)
}

/// A gap bound: at most `max`.
pub fn at_most(max: Millis) -> BoundSpec {
    BoundSpec::AtMost(max)
}
