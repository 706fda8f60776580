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
///
/// ```
/// use retrylab::prelude::*;
/// assert_eq!(secs(90), ms(90_000));
/// ```
pub const fn secs(n: u64) -> Millis {
    Millis::from_secs(n)
}

/// An HTTP endpoint with no script yet (`kind: http`).
///
/// ```
/// use retrylab::prelude::*;
/// use retrylab::scenario::EndpointKind;
/// let api = endpoint();
/// assert_eq!(api.kind, EndpointKind::Http);
/// assert!(api.script.is_none()); // answers 200 to everything
/// ```
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

/// A script step that fails the connection: `fail(FailSpec::reset())`.
///
/// ```
/// use retrylab::prelude::*;
/// let step = fail(FailSpec::reset()).times(2);
/// assert_eq!((step.fail, step.times), (Some(FailSpec::reset()), Some(2)));
/// ```
pub fn fail(how: FailSpec) -> StepSpec {
    StepSpec::fail(how)
}

/// A `GET` of `path` on `endpoint`.
///
/// ```
/// use retrylab::prelude::*;
/// let op = get("api", "/orders/7");
/// assert_eq!((op.method.as_str(), op.endpoint.as_str(), op.path.as_str()), ("GET", "api", "/orders/7"));
/// ```
pub fn get(endpoint: impl Into<String>, path: impl Into<String>) -> OperationSpec {
    OperationSpec::get(endpoint, path)
}

/// A `POST` to `path` on `endpoint`.
///
/// ```
/// use retrylab::prelude::*;
/// let op = post("api", "/orders").calls(3);
/// assert_eq!((op.method.as_str(), op.calls), ("POST", 3));
/// ```
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
///
/// ```
/// use retrylab::prelude::*;
/// let client: ClientSpec = fixed(ms(250)).max_attempts(4).into();
/// assert_eq!((client.name(), client.max_attempts()), ("fixed", Some(4)));
/// ```
pub fn fixed(delay: Millis) -> FixedParams {
    FixedParams {
        delay,
        ..FixedParams::default()
    }
}

/// The `linear` policy's parameters with their defaults; a client takes them as
/// `ClientSpec::Linear(linear())` (or `ClientSpec::Fibonacci`, which reads them too).
///
/// ```
/// use retrylab::prelude::*;
/// let mut params = linear();
/// params.step = ms(300);
/// let client = ClientSpec::Linear(params);
/// assert_eq!(client.name(), "linear");
/// ```
pub fn linear() -> LinearParams {
    LinearParams::default()
}

/// No expectations yet: `expect().outcome(Success).attempts(3)`.
///
/// ```
/// use retrylab::prelude::*;
/// assert!(expect().check_names().is_empty());
/// assert_eq!(expect().outcome(Success).attempts(3).check_names(), ["outcome", "attempts"]);
/// ```
pub fn expect() -> Expectations {
    Expectations::default()
}

/// A gap bound: between `min` and `max`, inclusive (`within(ms(0), ms(200))`). Panics when
/// `min > max`, a mistake in the test itself (YAML bounds are validated with a located error instead).
///
/// ```
/// use retrylab::prelude::*;
/// let bound = within(ms(100), ms(200));
/// assert!(bound.contains(ms(100)) && bound.contains(ms(200)) && !bound.contains(ms(201)));
/// ```
#[track_caller]
pub fn within(min: Millis, max: Millis) -> BoundSpec {
    match BoundSpec::within(min, max) {
        Some(bound) => bound,
        None => panic!("within({min}, {max}): the lower bound is above the upper one"),
    }
}

/// A gap bound: at least `min`.
///
/// ```
/// use retrylab::prelude::*;
/// assert!(at_least(secs(2)).contains(secs(2)) && !at_least(secs(2)).contains(ms(1999)));
/// ```
pub fn at_least(min: Millis) -> BoundSpec {
    BoundSpec::AtLeast(min)
}

/// A gap bound: at most `max`.
///
/// ```
/// use retrylab::prelude::*;
/// assert!(at_most(ms(400)).contains(ms(0)) && !at_most(ms(400)).contains(ms(401)));
/// ```
pub fn at_most(max: Millis) -> BoundSpec {
    BoundSpec::AtMost(max)
}
