//! Scenarios made in code.

use crate::scenario::model::client::ClientSpec;
use crate::scenario::model::duration::Millis;
use crate::scenario::model::endpoint::EndpointSpec;
use crate::scenario::model::expect::Expectations;
use crate::scenario::model::latency::LatencySpec;
use crate::scenario::model::limits::{LimitsSpec, ScenarioStatus, SeedRange};
use crate::scenario::model::network::NetworkSpec;
use crate::scenario::model::operation::OperationSpec;
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::turmoil::BackendKind;
use crate::scenario::yaml::error::{ScenarioError, ScenarioErrors};
use crate::scenario::yaml::locations::SourceInfo;

/// The file name errors use for scenarios built in code.
///
/// ```
/// use retrylab::scenario::{Scenario, CODE_FILE};
/// let err = Scenario::builder("no operation").build().unwrap_err();
/// assert_eq!(err.0[0].file, CODE_FILE);
/// ```
pub const CODE_FILE: &str = "<code>";

/// Builds a [`Scenario`] in code; [`ScenarioBuilder::build`] runs the same validation as
/// loading a file ([`Scenario::validate`]), so a scenario that uses a feature not built yet
/// is refused here, as a run would refuse it.
///
/// ```
/// use retrylab::scenario::{
///     BoundSpec, EndpointSpec, Expectations, ExponentialParams, Millis,
///     OperationSpec, Outcome, Scenario, StepSpec,
/// };
///
/// let scenario = Scenario::builder("503 twice, then 200")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(503).times(2), StepSpec::status(200)]))
///     .latency(Millis::from_ms(1))
///     .operation(OperationSpec::post("api", "/orders"))
///     .client(ExponentialParams::default().max_attempts(4))
///     .expect(Expectations::default().outcome(Outcome::Success).attempts(3))
///     .build()
///     .unwrap();
/// assert_eq!(scenario.endpoints["api"].script.as_ref().unwrap().len(), 2);
///
/// let err = Scenario::builder("typo")
///     .endpoint("api", EndpointSpec::http())
///     .operation(OperationSpec::get("apj", "/"))
///     .build()
///     .unwrap_err();
/// assert_eq!(err.to_string(),
///     "<code> operation.endpoint: no endpoint is named `apj`, expected one of the endpoints: `api` (did you mean `api`?)");
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
#[non_exhaustive]
pub struct ScenarioBuilder {
    scenario: Scenario,
    operation_set: bool,
    /// Whether `backend` was called: a command client implies `real` otherwise.
    backend_set: bool,
}

impl Scenario {
    /// Starts a scenario named `name` (version 1, seed 0, no endpoints yet).
    ///
    /// ```
    /// use retrylab::scenario::{
    ///     BackendKind, EndpointSpec, LimitsSpec, Millis, OperationSpec, Scenario, SeedRange, StepSpec,
    /// };
    ///
    /// let s = Scenario::builder("every setter")
    ///     .description("what it shows")
    ///     .seed(7)
    ///     .seeds(SeedRange { start: 1, end: 3 })
    ///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(200)]))
    ///     .operation(OperationSpec::get("api", "/"))
    ///     .limits(LimitsSpec::default().wall(Millis::from_secs(5)))
    ///     .snapshot(true)
    ///     .drain(Millis::from_secs(1))
    ///     .epoch("2026-01-01T00:00:00Z")
    ///     .backend(BackendKind::Sim)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!((s.seed, s.version, s.snapshot), (7, 1, true));
    /// ```
    pub fn builder(name: impl Into<String>) -> ScenarioBuilder {
        ScenarioBuilder {
            scenario: Scenario {
                version: 1,
                name: name.into(),
                description: None,
                seed: 0,
                seeds: None,
                status: None,
                endpoints: Default::default(),
                network: NetworkSpec::default(),
                operation: OperationSpec::get("", "/"),
                client: ClientSpec::NoRetry,
                expect: Expectations::default(),
                must_fail: Vec::new(),
                limits: LimitsSpec::default(),
                snapshot: false,
                drain: Millis::ZERO,
                epoch: None,
                backend: BackendKind::Sim,
                tolerance: None,
                turmoil: None,
                search: None,
                source: SourceInfo::code(CODE_FILE),
            },
            operation_set: false,
            backend_set: false,
        }
    }
}

impl ScenarioBuilder {
    /// Describes what the scenario shows.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).description("503s, then success").build().unwrap();
    /// assert_eq!(s.description.as_deref(), Some("503s, then success"));
    /// ```
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.scenario.description = Some(text.into());
        self
    }

    /// Sets the seed.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).seed(42).build().unwrap();
    /// assert_eq!(s.seed, 42);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.scenario.seed = seed;
        self
    }

    /// Runs once per seed of `range`.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::SeedRange;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).seeds(SeedRange { start: 1, end: 20 }).build().unwrap();
    /// assert_eq!(s.seeds.map(|r| r.len()), Some(20));
    /// ```
    pub fn seeds(mut self, range: SeedRange) -> Self {
        self.scenario.seeds = Some(range);
        self
    }

    /// Adds (or replaces) the endpoint `name`.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x")
    ///     .endpoint("api", endpoint())
    ///     .endpoint("api", endpoint().script([status(503), status(200)])) // replaces the first
    ///     .operation(get("api", "/"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(s.endpoints["api"].script.as_ref().map(Vec::len), Some(2));
    /// ```
    pub fn endpoint(mut self, name: impl Into<String>, endpoint: EndpointSpec) -> Self {
        self.scenario.endpoints.insert(name.into(), endpoint);
        self
    }

    /// Sets a fixed one-way network latency.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::LatencySpec;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).latency(ms(5)).build().unwrap();
    /// assert_eq!(s.network.latency, LatencySpec::Fixed(ms(5)));
    /// ```
    pub fn latency(mut self, latency: Millis) -> Self {
        self.scenario.network.latency = LatencySpec::Fixed(latency);
        self
    }

    /// Sets the whole network.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::{LatencySpec, NetworkSpec};
    /// let mut network = NetworkSpec::default();
    /// network.latency = LatencySpec::Fixed(ms(2));
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).network(network.clone()).build().unwrap();
    /// assert_eq!(s.network, network);
    /// ```
    pub fn network(mut self, network: NetworkSpec) -> Self {
        self.scenario.network = network;
        self
    }

    /// Sets what each call does.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x")
    ///     .endpoint("api", endpoint())
    ///     .operation(post("api", "/orders").calls(3))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!((s.operation.method.as_str(), s.operation.calls), ("POST", 3));
    /// ```
    pub fn operation(mut self, operation: OperationSpec) -> Self {
        self.scenario.operation = operation;
        self.operation_set = true;
        self
    }

    /// Sets the reference client's policy.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).client(exponential().max_attempts(5)).build().unwrap();
    /// assert_eq!(s.client.max_attempts(), Some(5));
    /// ```
    pub fn client(mut self, client: impl Into<ClientSpec>) -> Self {
        self.scenario.client = client.into();
        self
    }

    /// Sets the checks.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).expect(expect().outcome(Success).attempts(1)).build().unwrap();
    /// assert_eq!(s.expect.check_names(), ["outcome", "attempts"]);
    /// ```
    pub fn expect(mut self, expect: Expectations) -> Self {
        self.scenario.expect = expect;
        self
    }

    /// Declares that exactly these checks must fail.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).expect(expect().attempts(2)).must_fail(["attempts"]).build().unwrap();
    /// assert_eq!(s.must_fail, ["attempts"]);
    /// assert!(s.run_builtin().passed()); // one attempt, and `attempts` failed as declared
    /// ```
    pub fn must_fail<S: Into<String>>(mut self, checks: impl IntoIterator<Item = S>) -> Self {
        self.scenario.must_fail = checks.into_iter().map(Into::into).collect();
        self
    }

    /// Marks the scenario as a known failure.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::ScenarioStatus;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).known_failure().build().unwrap();
    /// assert_eq!(s.status, Some(ScenarioStatus::KnownFailure));
    /// ```
    pub fn known_failure(mut self) -> Self {
        self.scenario.status = Some(ScenarioStatus::KnownFailure);
        self
    }

    /// Sets the run limits.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::LimitsSpec;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).limits(LimitsSpec::default().wall(secs(10))).build().unwrap();
    /// assert_eq!(s.run_limits().wall, secs(10));
    /// ```
    pub fn limits(mut self, limits: LimitsSpec) -> Self {
        self.scenario.limits = limits;
        self
    }

    /// Asserts a snapshot of the trace.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).snapshot(true).build().unwrap();
    /// assert!(s.snapshot);
    /// ```
    pub fn snapshot(mut self, on: bool) -> Self {
        self.scenario.snapshot = on;
        self
    }

    /// Keeps running this long after the client returns.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).drain(secs(1)).build().unwrap();
    /// assert_eq!(s.drain, secs(1));
    /// ```
    pub fn drain(mut self, drain: Millis) -> Self {
        self.scenario.drain = drain;
        self
    }

    /// Sets the virtual wall clock's start (RFC 3339, an offset converted to UTC, or an
    /// HTTP-date).
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).epoch("2026-03-01T12:00:00+01:00").build().unwrap();
    /// assert_eq!(s.epoch.as_deref(), Some("2026-03-01T12:00:00+01:00"));
    /// ```
    pub fn epoch(mut self, epoch: impl Into<String>) -> Self {
        self.scenario.epoch = Some(epoch.into());
        self
    }

    /// Chooses the backend.
    ///
    /// ```
    /// use retrylab::prelude::*;
    /// use retrylab::scenario::BackendKind;
    /// let s = Scenario::builder("x").endpoint("api", endpoint()).operation(get("api", "/")).backend(BackendKind::Real).build().unwrap();
    /// assert_eq!(s.backend, BackendKind::Real);
    /// ```
    pub fn backend(mut self, backend: BackendKind) -> Self {
        self.scenario.backend = backend;
        self.backend_set = true;
        self
    }

    /// Sets the slack every timing bound of the checks is judged with
    /// ([`Scenario::tolerance_ms`]).
    ///
    /// ```
    /// use retrylab::scenario::{EndpointSpec, Millis, OperationSpec, Scenario};
    ///
    /// let s = Scenario::builder("with slack")
    ///     .endpoint("api", EndpointSpec::http())
    ///     .operation(OperationSpec::get("api", "/"))
    ///     .tolerance(Millis::from_ms(20))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(s.tolerance_ms(), 20);
    /// ```
    pub fn tolerance(mut self, tolerance: Millis) -> Self {
        self.scenario.tolerance = Some(tolerance);
        self
    }

    /// Validates and returns the scenario.
    ///
    /// ```
    /// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
    ///
    /// let err = Scenario::builder("zero times")
    ///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(503).times(0)]))
    ///     .operation(OperationSpec::get("api", "/"))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.0[0].path, "endpoints.api.script[0].times");
    /// ```
    pub fn build(self) -> Result<Scenario, ScenarioErrors> {
        let mut scenario = self.scenario;
        if !self.backend_set {
            scenario.imply_backend();
        }
        if !self.operation_set {
            return Err(ScenarioError::new(
                CODE_FILE,
                None,
                "operation",
                "missing required key `operation`",
            )
            .into());
        }
        scenario.validate().map(|()| scenario)
    }
}
