//! What a promise is about and what a client speaks: plain HTTP, or gRPC. A profile is
//! applied only to the promises of its protocol: an HTTP client has nothing to say to a
//! gRPC status in trailers, and a gRPC client cannot send the GET an HTTP promise is about,
//! so such a cell is not applicable rather than silent or an error.

use serde::{Deserialize, Serialize};

use crate::scenario::{EndpointSpec, Scenario, StepSpec};

/// The protocol of a promise, or of a client profile (`protocol:`, `http` by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Protocol {
    /// HTTP requests answered by statuses: every promise and client until gRPC came.
    #[default]
    Http,
    /// gRPC calls answered by gRPC statuses, over HTTP/2.
    Grpc,
}

impl Protocol {
    /// The protocol of the promise `fault`: gRPC when one of its endpoints answers a step
    /// in gRPC (`grpc:`, anywhere in a script, a timeline or a random branch), else HTTP.
    /// Read off the endpoints, not declared, so that a promise file cannot say one thing
    /// and script the other.
    ///
    /// ```
    /// use retrylab::Scenario;
    /// use retrylab::conformance::Protocol;
    ///
    /// let fault = Scenario::from_yaml_str(
    ///     "version: 1\nname: g\nendpoints:\n  api:\n    protocol: http2\n\
    ///      \x20   script: [ { grpc: unavailable }, { grpc: ok } ]\n\
    ///      operation: { endpoint: api, method: POST, path: /echo.v1.Echo/Say }\n",
    ///     "g.yaml",
    /// ).unwrap();
    /// assert_eq!(Protocol::of(&fault), Protocol::Grpc);
    /// ```
    pub fn of(fault: &Scenario) -> Protocol {
        if fault.endpoints.values().any(answers_grpc) {
            Protocol::Grpc
        } else {
            Protocol::Http
        }
    }

    /// How the table and the errors name it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http => "HTTP",
            Protocol::Grpc => "gRPC",
        }
    }
}

/// Whether some step of `endpoint`, on any route, answers in gRPC.
fn answers_grpc(endpoint: &EndpointSpec) -> bool {
    let timeline = |steps: &Option<Vec<crate::scenario::TimelineStep>>| {
        steps
            .iter()
            .flatten()
            .any(|step| grpc_step(&step.as_step()))
    };
    let script = |steps: &Option<Vec<StepSpec>>| steps.iter().flatten().any(grpc_step);
    script(&endpoint.script)
        || timeline(&endpoint.timeline)
        || endpoint
            .routes
            .iter()
            .any(|route| script(&route.script) || timeline(&route.timeline))
}

/// Whether `step`, or a random branch under it, answers in gRPC.
fn grpc_step(step: &StepSpec) -> bool {
    step.grpc.is_some()
        || step.then.as_deref().is_some_and(grpc_step)
        || step.r#else.as_deref().is_some_and(grpc_step)
}

#[cfg(test)]
mod tests {
    use super::Protocol;
    use crate::Scenario;
    use crate::conformance::{ClientProfile, Promise, Verdict, cell};

    const GRPC_PROFILE: &str = "version: 1\nname: a6\nlanguage: Rust\nlibrary: retrylab\n\
        protocol: grpc\n\
        client: { grpc_retry: { service_config: { retryPolicy: { maxAttempts: 3, \
        initialBackoff: 0.1s, maxBackoff: 1s, backoffMultiplier: 2, \
        retryableStatusCodes: [UNAVAILABLE] } } } }\n";

    const HTTP_PROFILE: &str = "version: 1\nname: fixed\nlanguage: Rust\nlibrary: retrylab\n\
        client: { fixed: { delay: 10ms, max_attempts: 2 } }\n";

    fn scenario(endpoint: &str) -> Scenario {
        let src = format!(
            "version: 1\nname: s\nendpoints:\n  api:\n{endpoint}\
             operation: {{ endpoint: api, method: POST, path: /echo.v1.Echo/Say }}\n"
        );
        Scenario::from_yaml_str(&src, "s.yaml").expect("a scenario")
    }

    #[test]
    fn a_grpc_step_anywhere_makes_the_promise_grpc() {
        let http = scenario("    script: [ { status: 503 } ]\n");
        assert_eq!(Protocol::of(&http), Protocol::Http);
        // HTTP/2 alone is not gRPC: a plain status over h2 is an HTTP promise.
        let h2 = scenario("    protocol: http2\n    script: [ { status: 503 } ]\n");
        assert_eq!(Protocol::of(&h2), Protocol::Http);
        let route = scenario(
            "    protocol: http2\n    routes:\n      - match: { path: /echo.v1.Echo/Say }\n\
             \x20       script: [ { status: 503 }, { grpc: ok } ]\n",
        );
        assert_eq!(Protocol::of(&route), Protocol::Grpc);
        let branch = scenario(
            "    protocol: http2\n\
             \x20   script: [ { p: 0.5, then: { grpc: unavailable }, else: { status: 503 } } ]\n",
        );
        assert_eq!(Protocol::of(&branch), Protocol::Grpc);
        let timeline = scenario(
            "    protocol: http2\n    timeline: [ { during: [0s, 1s], grpc: unavailable } ]\n",
        );
        assert_eq!(Protocol::of(&timeline), Protocol::Grpc);
    }

    #[test]
    fn a_profile_of_another_protocol_is_not_applicable_and_not_run() {
        let grpc = ClientProfile::from_yaml_str(GRPC_PROFILE, "a6.yaml").expect("a profile");
        let http = ClientProfile::from_yaml_str(HTTP_PROFILE, "fixed.yaml").expect("a profile");
        assert_eq!(grpc.protocol, Protocol::Grpc);
        assert_eq!(http.protocol, Protocol::Http);
        let burst = Promise {
            name: "burst".into(),
            fault: scenario("    script: [ { status: 503 } ]\n"),
        };
        let cell = cell(&grpc, &burst);
        assert_eq!(cell.verdict, Verdict::NotApplicable);
        assert_eq!(cell.observed, "");
        assert_eq!(cell.verdict.word(), "not applicable");
    }

    #[test]
    fn applying_a_profile_to_another_protocol_is_a_located_error() {
        let grpc = ClientProfile::from_yaml_str(GRPC_PROFILE, "a6.yaml").expect("a profile");
        let fault = scenario("    script: [ { status: 503 } ]\n");
        let error = grpc
            .apply(&fault, "burst")
            .expect_err("not applicable")
            .to_string();
        assert!(
            error.starts_with(
                "a6.yaml:5:11 protocol: the profile's client speaks gRPC, and \
                 the promise burst is about HTTP"
            ),
            "{error}"
        );
        // A profile that does not say speaks HTTP, and is told at its name.
        let http = ClientProfile::from_yaml_str(HTTP_PROFILE, "fixed.yaml").expect("a profile");
        let grpc_fault = scenario("    protocol: http2\n    script: [ { grpc: unavailable } ]\n");
        let error = http
            .apply(&grpc_fault, "g")
            .expect_err("not applicable")
            .to_string();
        assert!(error.starts_with("fixed.yaml:2:7 protocol:"), "{error}");
        assert!(error.contains("`protocol: grpc`"), "{error}");
    }

    #[test]
    fn an_unknown_protocol_is_a_located_error() {
        let src = GRPC_PROFILE.replace("protocol: grpc", "protocol: grcp");
        let error = ClientProfile::from_yaml_str(&src, "a6.yaml")
            .expect_err("grcp")
            .to_string();
        assert!(
            error.starts_with(
                "a6.yaml:5:11 protocol: unknown value `grcp`, expected one of `http`, `grpc`"
            ),
            "{error}"
        );
        assert!(error.contains("grcp"), "{error}");
    }
}
