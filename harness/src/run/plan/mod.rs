//! A plan: a scenario resolved into exactly what one run needs (endpoint configurations,
//! latencies, the operation, limits), with every name checked and every default applied.

use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName};
use retrylab_endpoints::{EndpointConfig, LatencyDistribution};

mod endpoint;
mod labels;

use self::endpoint::{endpoint_config, header_map, keep, step_latency, with_draws};
pub(crate) use self::labels::{client_start_label, network_latency_label};
use crate::env::Operation;
use crate::scenario::{
    BackendKind, EndpointKind, FaultSpec, Scenario, ScenarioError, ScenarioErrors, ScriptState,
};

/// One endpoint of the run.
#[derive(Debug, Clone)]
pub(crate) struct PlannedEndpoint {
    pub(crate) name: String,
    pub(crate) config: EndpointConfig,
    /// One-way latency, each direction: fixed, or drawn per segment (and SYN) from its own
    /// substream, [`network_latency_label`].
    pub(crate) latency: Result<Duration, LatencyDistribution>,
}

/// A fault at a fixed virtual instant.
#[derive(Debug, Clone)]
pub(crate) enum PlannedFault {
    /// `network.faults: [{ at, partition, for }]`.
    Partition {
        at: Duration,
        endpoint: String,
        lasts: Duration,
    },
    /// `network.faults: [{ at, crash, restart_after, script_state }]`, and on turmoil
    /// `turmoil.crash: [{ at, endpoint, bounce_after }]` (its scripts kept).
    Crash {
        at: Duration,
        endpoint: String,
        /// `None`: it never comes back.
        restart_after: Option<Duration>,
        scripts: retrylab_endpoints::ScriptState,
    },
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) epoch_unix_ms: u64,
    pub(crate) default_latency: Duration,
    pub(crate) endpoints: Vec<PlannedEndpoint>,
    pub(crate) faults: Vec<PlannedFault>,
    pub(crate) operation: Operation,
    pub(crate) key_header: Option<HeaderName>,
    pub(crate) calls: u32,
    /// Calls in flight at once (`operation.concurrency`).
    pub(crate) concurrency: u32,
    /// Client instances (`operation.clients`), each making `calls` calls.
    pub(crate) clients: u32,
    /// When each client starts (`operation.start`): fixed, or drawn per client from its own
    /// substream, [`client_start_label`]. `None`: every client starts at 0.
    pub(crate) start: Option<Result<Duration, LatencyDistribution>>,
    pub(crate) max_virtual_time: Duration,
    /// Whether the file set `limits.max_virtual_time` (else it is the default).
    pub(crate) virtual_time_limit_written: bool,
    pub(crate) max_attempts: Option<u64>,
    pub(crate) wall: Duration,
    pub(crate) drain: Duration,
    pub(crate) https_as_http: bool,
    /// The first `kind: dead_letter` endpoint, where built-in clients hand off messages they
    /// gave up on.
    pub(crate) dead_letter: Option<String>,
    /// Where the run happens.
    pub(crate) backend: BackendKind,
    /// The address the real backend's endpoints listen on (127.0.0.1 unless `retrylab serve
    /// --bind` says otherwise).
    pub(crate) bind: IpAddr,
    /// Served to a client outside (`retrylab serve`): its requests are split into this many
    /// calls after the run, instead of the harness's own calls.
    pub(crate) served_calls: Option<u32>,
    /// `turmoil.hold` and `turmoil.partition`, in the scenario's order.
    pub(crate) turmoil_windows: Vec<TurmoilWindow>,
    /// `turmoil.loss`: the chance a working link starts dropping messages, and the chance a
    /// dropping one works again, drawn at each message.
    #[cfg_attr(not(feature = "turmoil"), allow(dead_code))]
    pub(crate) turmoil_loss: Option<(f64, f64)>,
}

/// A window of a turmoil-native fault on the link between the client's host and an
/// endpoint's.
// Only the turmoil backend applies it; every build settles after its end.
#[cfg_attr(not(feature = "turmoil"), allow(dead_code))]
#[derive(Debug, Clone)]
pub(crate) struct TurmoilWindow {
    pub(crate) kind: TurmoilWindowKind,
    pub(crate) endpoint: String,
    pub(crate) at: Duration,
    pub(crate) lasts: Duration,
}

/// What a turmoil window does to its link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurmoilWindowKind {
    /// `turmoil.hold`: messages wait on the link, and go on when it is released.
    Hold,
    /// `turmoil.partition`: messages are dropped, and never sent again.
    Partition,
}

impl Plan {
    /// Resolves `scenario` for a run with `seed`, or explains, located, why it cannot run.
    ///
    /// The explanation is [`Scenario::validate`]'s, the validation loading runs, so a run
    /// refuses exactly what loading refuses, with the same errors. The conversions below go
    /// through the functions that validation called; after it they cannot fail, and if one
    /// did, its error would be returned, never papered over.
    pub(crate) fn from_scenario(scenario: &Scenario, seed: u64) -> Result<Plan, ScenarioErrors> {
        scenario.validate()?;
        let mut errors = Vec::new();
        let key_header = scenario.operation.idempotency_key.as_ref().and_then(|key| {
            keep(
                scenario.header_name_at("operation.idempotency_key.header", &key.header),
                &mut errors,
            )
        });
        // On turmoil, `turmoil.latency` (fixed: validation refuses the rest) is every link's,
        // and then the network's own latencies are not set.
        let network_latency = scenario
            .turmoil
            .as_ref()
            .and_then(|t| t.latency.as_ref())
            .unwrap_or(&scenario.network.latency);
        let default_latency = step_latency(network_latency);
        let mut endpoints = Vec::with_capacity(scenario.endpoints.len());
        for (name, spec) in &scenario.endpoints {
            let path = format!("endpoints.{name}");
            let config = endpoint_config(
                scenario,
                &path,
                name,
                spec,
                key_header.as_ref(),
                &mut errors,
            );
            let config = with_draws(config, seed);
            let latency = match scenario.network.endpoint_latency.get(name) {
                Some(latency) => step_latency(latency),
                None => default_latency.clone(),
            };
            endpoints.push(PlannedEndpoint {
                name: name.clone(),
                config,
                latency,
            });
        }
        let mut faults = Vec::new();
        for fault in &scenario.network.faults {
            faults.push(match fault {
                FaultSpec::Partition {
                    at,
                    endpoint,
                    r#for,
                } => PlannedFault::Partition {
                    at: at.as_duration(),
                    endpoint: endpoint.clone(),
                    lasts: r#for.as_duration(),
                },
                FaultSpec::Crash {
                    at,
                    endpoint,
                    restart_after,
                    script_state,
                } => PlannedFault::Crash {
                    at: at.as_duration(),
                    endpoint: endpoint.clone(),
                    restart_after: restart_after.map(|r| r.as_duration()),
                    scripts: match script_state {
                        ScriptState::Keep => retrylab_endpoints::ScriptState::Keep,
                        ScriptState::Reset => retrylab_endpoints::ScriptState::Reset,
                    },
                },
            });
        }
        // A turmoil crash is a crash of the endpoint's host, as a `network.faults` one is;
        // a bounce restarts the host's software, and the endpoint's scripts lived outside it.
        for crash in scenario.turmoil.iter().flat_map(|t| &t.crash) {
            faults.push(PlannedFault::Crash {
                at: crash.at.as_duration(),
                endpoint: crash.endpoint.clone(),
                restart_after: crash.bounce_after.map(|b| b.as_duration()),
                scripts: retrylab_endpoints::ScriptState::Keep,
            });
        }
        let operation = operation(scenario, &mut errors);
        let epoch_unix_ms = keep(scenario.epoch_unix_ms(), &mut errors);
        let Some(epoch_unix_ms) = epoch_unix_ms.filter(|_| errors.is_empty()) else {
            return Err(ScenarioErrors::reported(errors));
        };
        let limits = scenario.run_limits();
        Ok(Plan {
            name: scenario.name.clone(),
            seed,
            epoch_unix_ms,
            // Every host gets its own latency below; this one is the network's default.
            default_latency: default_latency.unwrap_or(Duration::ZERO),
            endpoints,
            faults,
            https_as_http: false,
            dead_letter: scenario
                .endpoints
                .iter()
                .find(|(_, e)| e.kind == EndpointKind::DeadLetter)
                .map(|(name, _)| name.clone()),
            operation,
            key_header,
            calls: scenario.operation.calls.max(1),
            concurrency: scenario.operation.concurrency.max(1),
            clients: scenario.operation.clients.max(1),
            start: scenario.operation.start.as_ref().map(step_latency),
            max_virtual_time: limits.max_virtual_time.as_duration(),
            virtual_time_limit_written: scenario.limits.max_virtual_time.is_some(),
            max_attempts: Some(limits.max_client_attempts),
            wall: limits.wall.as_duration(),
            drain: scenario.drain.as_duration(),
            backend: scenario.backend,
            bind: crate::backend::real::LOOPBACK,
            served_calls: None,
            turmoil_windows: turmoil_windows(scenario),
            turmoil_loss: scenario
                .turmoil
                .as_ref()
                .and_then(|t| t.loss)
                .map(|l| (l.fail_rate.value(), l.repair_rate.value())),
        })
    }
}

/// The turmoil windows of `scenario`: holds, then partitions.
fn turmoil_windows(scenario: &Scenario) -> Vec<TurmoilWindow> {
    let Some(t) = &scenario.turmoil else {
        return Vec::new();
    };
    let holds = t.hold.iter().map(|w| (TurmoilWindowKind::Hold, w));
    let partitions = t
        .partition
        .iter()
        .map(|w| (TurmoilWindowKind::Partition, w));
    holds
        .chain(partitions)
        .map(|(kind, w)| TurmoilWindow {
            kind,
            endpoint: w.endpoint.clone(),
            at: w.at.as_duration(),
            lasts: w.r#for.as_duration(),
        })
        .collect()
}

fn operation(scenario: &Scenario, errors: &mut Vec<ScenarioError>) -> Operation {
    let spec = &scenario.operation;
    let method = keep(scenario.method_at("operation.method", &spec.method), errors);
    let url = keep(scenario.request_url(), errors).unwrap_or_default();
    let headers = match &spec.headers {
        Some(headers) => header_map(scenario, "operation.headers", headers, errors),
        None => Vec::new(),
    };
    Operation {
        endpoint: spec.endpoint.clone(),
        method: method.unwrap_or_default(),
        path: spec.path.clone(),
        url,
        headers: headers
            .into_iter()
            .fold(HeaderMap::new(), |mut map, (n, v)| {
                map.append(n, v);
                map
            }),
        body: Bytes::from(spec.body.clone().unwrap_or_default()),
        idempotency_key: None,
        protocol: (scenario.endpoints.get(&spec.endpoint))
            .map_or_else(Default::default, |e| e.protocol),
    }
}

#[cfg(test)]
mod tests;
