//! The scenario itself: the top-level keys of the format.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::client::ClientSpec;
use super::duration::Millis;
use super::endpoint::EndpointSpec;
use super::expect::Expectations;
use super::limits::{LimitsSpec, ScenarioStatus, SeedRange};
use super::network::NetworkSpec;
use super::operation::OperationSpec;
use super::search::SearchSpec;
use super::turmoil::{BackendKind, TurmoilSpec};
use crate::scenario::yaml::error::{Location, ScenarioError};
use crate::scenario::yaml::locations::SourceInfo;

/// A parsed, validated scenario (docs/scenario-format.md).
///
/// Load one from a file with [`Scenario::load`], from text with [`Scenario::from_yaml_str`],
/// or build one in code with [`Scenario::builder`]; write it back with [`Scenario::to_yaml`].
/// Every way in runs the same validation, so a `Scenario` value is always well-formed.
///
/// `client` defaults to `no_retry`: a scenario run against a Rust client under test does not
/// need one, and one that exercises a reference client names its policy.
///
/// ```
/// use retrylab::scenario::Scenario;
///
/// let yaml = r#"
/// version: 1
/// name: 503 twice, then success
/// endpoints:
///   api:
///     script:
///       - { status: 503, times: 2 }
///       - { status: 200 }
/// operation: { endpoint: api, method: POST, path: /orders }
/// client:
///   exponential: { initial: 100ms, max_attempts: 4 }
/// expect:
///   outcome: success
///   attempts: 3
/// "#;
/// let s = Scenario::from_yaml_str(yaml, "503-twice.yaml").unwrap();
/// assert_eq!(s.name, "503 twice, then success");
/// assert_eq!(s.client.max_attempts(), Some(4));
/// assert!(s.unsupported().is_empty());
/// assert_eq!(Scenario::from_yaml_str(&s.to_yaml(), "again.yaml").unwrap(), s);
/// ```
///
/// A `Scenario` is plain data, `Send` and `Sync`: load it once and run it from many test
/// threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Scenario {
    /// Format version; must be 1.
    pub version: u32,
    /// A human name, used in reports and snapshot names.
    pub name: String,
    /// What the scenario shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The seed of every random substream (default 0; `RETRYLAB_SEED` overrides it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
    /// Run once per seed in this inclusive range; the snapshot is taken for `seed` only. At
    /// most 10,000 seeds, and 1,000,000 calls over all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<SeedRange>,
    /// `known_failure` for a regression expected to fail until fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ScenarioStatus>,
    /// The fake endpoints, by name (at most 1,000; names of at most 255 characters).
    pub endpoints: BTreeMap<String, EndpointSpec>,
    /// The simulated network.
    #[serde(default, skip_serializing_if = "NetworkSpec::is_default")]
    pub network: NetworkSpec,
    /// What each logical call does.
    pub operation: OperationSpec,
    /// The reference client's policy (default `no_retry`).
    #[serde(default, skip_serializing_if = "ClientSpec::is_no_retry")]
    pub client: ClientSpec,
    /// The checks.
    #[serde(default, skip_serializing_if = "Expectations::is_empty")]
    pub expect: Expectations,
    /// Checks that must fail (and only these): the scenario demonstrates a caught defect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_fail: Vec<String>,
    /// Limits of a run.
    #[serde(default, skip_serializing_if = "LimitsSpec::is_default")]
    pub limits: LimitsSpec,
    /// Assert an insta snapshot of the trace (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub snapshot: bool,
    /// How long the run continues after the client returns, to catch late requests (at
    /// most 3650d).
    #[serde(default, skip_serializing_if = "Millis::is_zero")]
    pub drain: Millis,
    /// The virtual wall clock at the start (RFC 3339, an offset converted to UTC, or an
    /// HTTP-date; from 1970 on, in whole milliseconds; default 2026-01-01T00:00:00Z).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// Where the scenario runs (default `sim`).
    #[serde(default, skip_serializing_if = "BackendKind::is_sim")]
    pub backend: BackendKind,
    /// Slack added to every timing bound of the checks, in the direction that forgives
    /// measurement jitter (default 50 ms on `backend: real`, none elsewhere; at most 1m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Millis>,
    /// Turmoil-native faults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turmoil: Option<TurmoilSpec>,
    /// Property search: the cases a search around this scenario tries, and what must hold in
    /// each (run by the scenario suite and `retrylab search`, with retrylab's `search`
    /// feature; a plain run ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSpec>,
    /// Where the scenario came from; not serialized, never part of equality.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub source: SourceInfo,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Scenario {
    /// Sets the backend a scenario that names none runs on, when its client implies one: a
    /// command client (`client: { command: [...] }`) runs on real sockets. Loading, the
    /// builder and `--client` call it when no backend was written.
    ///
    /// ```
    /// use retrylab::scenario::{BackendKind, ClientSpec, CommandClient, Scenario};
    ///
    /// let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
    /// let mut s = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// s.client = ClientSpec::Command(CommandClient::new(["curl", "{url}"]));
    /// s.imply_backend();
    /// assert_eq!(s.backend, BackendKind::Real);
    /// ```
    pub fn imply_backend(&mut self) {
        if matches!(self.client, ClientSpec::Command(_)) {
            self.backend = BackendKind::Real;
        }
    }

    /// The tolerance of `backend: real` when the scenario sets none: its instants are real
    /// milliseconds, measured with the OS scheduler's jitter.
    pub const REAL_TOLERANCE: Millis = Millis::from_ms(50);

    /// The slack, in ms, every timing bound of the checks is judged with: `tolerance` when
    /// the scenario sets it, else [`Scenario::REAL_TOLERANCE`] on `backend: real`, else 0 (a
    /// simulated run's instants are exact, so its bounds are too).
    ///
    /// A lower bound is lowered by it and an upper bound raised (saturating); counts are not
    /// widened (docs/scenario-format.md#top-level).
    ///
    /// ```
    /// use retrylab::scenario::{BackendKind, Millis, Scenario};
    ///
    /// let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
    /// let s = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
    /// assert_eq!(s.tolerance_ms(), 0);
    ///
    /// // Set, it applies on any backend: a scenario ported from `real` keeps its slack.
    /// let s = Scenario::from_yaml_str(&format!("{yaml}tolerance: 20ms\n"), "x.yaml").unwrap();
    /// assert_eq!(s.tolerance_ms(), 20);
    ///
    /// let mut real = s.clone();
    /// real.backend = BackendKind::Real;
    /// real.tolerance = None;
    /// assert_eq!(real.tolerance_ms(), 50);
    /// real.tolerance = Some(Millis::ZERO);
    /// assert_eq!(real.tolerance_ms(), 0);
    /// ```
    pub fn tolerance_ms(&self) -> u64 {
        match self.tolerance {
            Some(t) => t.as_ms(),
            None if self.backend == BackendKind::Real => Self::REAL_TOLERANCE.as_ms(),
            None => 0,
        }
    }

    /// The position of the value at `path` (such as `client.exponential.jitter`), if the
    /// scenario came from a file that wrote it.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// assert_eq!(s.locate("operation.endpoint").map(|l| l.line), Some(4));
    /// assert_eq!(s.locate("client"), None);
    /// ```
    pub fn locate(&self, path: &str) -> Option<Location> {
        self.source.locate(path)
    }

    /// An error about `path`, located at its value, or at its nearest written ancestor when
    /// the file left it to a default. Renders as `file:line:col path: message`.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// let e = s.error_at("operation.endpoint", "cannot reach it");
    /// assert_eq!(e.to_string(), "x.yaml:4:24 operation.endpoint: cannot reach it");
    /// ```
    pub fn error_at(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let at = self.source.locate_nearest(path, false);
        let message = self.source.as_written(at, message.into());
        ScenarioError::new(self.source.file.clone(), at, path, message)
    }

    /// Like [`Scenario::error_at`], located at the key rather than the value (for errors
    /// about the key's presence, such as "not supported yet").
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// assert_eq!(s.error_at_key("operation.endpoint", "m").column, 14);
    /// ```
    pub fn error_at_key(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(
            self.source.file.clone(),
            self.source.locate_nearest(path, true),
            path,
            message,
        )
    }

    /// The endpoint named by `operation.endpoint`.
    ///
    /// ```
    /// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario};
    ///
    /// let s = Scenario::builder("x")
    ///     .endpoint("api", EndpointSpec::http())
    ///     .operation(OperationSpec::get("api", "/"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(s.operation_endpoint(), Some(&EndpointSpec::http()));
    /// ```
    pub fn operation_endpoint(&self) -> Option<&EndpointSpec> {
        self.endpoints.get(&self.operation.endpoint)
    }

    /// The scenario as YAML; parsing it gives back an equal scenario. Defaults are left
    /// out, so the text is short.
    ///
    /// ```
    /// use retrylab::scenario::{EndpointSpec, OperationSpec, StepSpec};
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::builder("two 503s")
    ///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(503).times(2), StepSpec::status(200)]))
    ///     .operation(OperationSpec::get("api", "/"))
    ///     .build()
    ///     .unwrap();
    /// let yaml = s.to_yaml();
    /// assert!(yaml.contains("times: 2"));
    /// assert_eq!(Scenario::from_yaml_str(&yaml, "back.yaml").unwrap(), s);
    /// ```
    ///
    /// Every string reads back byte for byte: when one would not survive the emitter's plain
    /// or block styles (a space at either end, a line break, a run of spaces, a long line),
    /// every string value of the document is quoted.
    pub fn to_yaml(&self) -> String {
        let options = serde_saphyr::SerializerOptions {
            quote_all: serde_json::to_value(self).is_ok_and(|v| has_fragile_string(&v)),
            ..serde_saphyr::SerializerOptions::default()
        };
        // The model holds only strings, numbers, booleans, sequences and string-keyed maps,
        // which the serializer always accepts; an error here would be a bug in a hand-written
        // `Serialize`, and the message says so rather than panicking.
        serde_saphyr::to_string_with_options(self, options)
            .unwrap_or_else(|e| format!("# retrylab could not serialize this scenario: {e}\n"))
    }
}

/// Whether `value` holds a string value that serde-saphyr's unquoted styles may not give back
/// byte for byte. Plain scalars lose spaces at either end; block scalars (chosen for a line
/// break, or folded past 80 characters) are exact only for simple text. Quoted scalars are
/// always exact, so any doubt quotes. Keys are names the validation restricts, and are left
/// as they are.
fn has_fragile_string(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => {
            s.trim() != s || s.contains('\n') || s.contains("  ") || s.chars().count() > 80
        }
        serde_json::Value::Array(items) => items.iter().any(has_fragile_string),
        serde_json::Value::Object(map) => map.values().any(has_fragile_string),
        _ => false,
    }
}

#[cfg(feature = "schema")]
/// The JSON Schema of a scenario file, for editors (`# yaml-language-server: $schema=...`).
///
/// ```
/// let schema = retrylab::scenario::json_schema();
/// assert!(schema.contains("\"endpoints\""));
/// ```
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut value = serde_json::to_value(&schema).unwrap_or_default();
    untag_command(&mut value);
    trim_descriptions(&mut value);
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

#[cfg(feature = "schema")]
/// Writes `client: { command: [...] }` as the mapping it is. `ClientSpec`'s command variant is
/// untagged for serde, which schemars 0.8 does not read: it derives `{ command: { command:
/// [...] } }`, which no file writes. The variant's schema becomes `CommandClient`'s own.
fn untag_command(schema: &mut serde_json::Value) {
    let variants = schema
        .pointer_mut("/definitions/ClientSpec/oneOf")
        .and_then(serde_json::Value::as_array_mut);
    let Some(variants) = variants else {
        return;
    };
    for variant in variants {
        let tagged = variant
            .pointer("/properties/command/$ref")
            .and_then(serde_json::Value::as_str)
            == Some("#/definitions/CommandClient");
        if tagged {
            let description = variant.get("description").cloned();
            let mut untagged = serde_json::json!({
                "allOf": [ { "$ref": "#/definitions/CommandClient" } ]
            });
            if let (Some(description), Some(map)) = (description, untagged.as_object_mut()) {
                map.insert("description".to_owned(), description);
            }
            *variant = untagged;
        }
    }
}

#[cfg(feature = "schema")]
/// Keeps the prose of each description: the doc examples are for rustdoc, not editor hovers.
fn trim_descriptions(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(text)) = map.get_mut("description") {
                if let Some(i) = text.find("```") {
                    text.truncate(i);
                }
                *text = text.trim().to_string();
            }
            map.values_mut().for_each(trim_descriptions);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(trim_descriptions),
        _ => {}
    }
}
