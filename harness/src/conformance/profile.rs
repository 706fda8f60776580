//! A client profile: a client (usually a program) and what its documentation promises,
//! written once and applied to any fault file, so that N clients and M faults are N + M
//! files, not N × M.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::protocol::Protocol;
use crate::scenario::model::format::SCENARIO;
use crate::scenario::yaml::error::{ScenarioError, ScenarioErrors};
use crate::scenario::yaml::file;
use crate::scenario::yaml::parse::{source_info, typed};
use crate::scenario::{ClientSpec, PolicySpec, Scenario, SourceInfo};

/// A client and what its documentation promises.
///
/// ```yaml
/// version: 1
/// name: urllib3 Retry(total=3, backoff_factor=0.5)
/// language: Python
/// library: urllib3 2.8.0
/// client:
///   command: [target/conformance/venv/bin/python, tests/conformance/clients/python/urllib3_retry.py, "{url}"]
///   cwd: ../../..
/// documented:
///   conforms_to: { exponential: { initial: 0s, multiplier: 2, jitter: none, max_attempts: 4,
///                  retry_on: [429, 500, 502, 503, 504], retry_after: honour } }
///   methods: [GET, HEAD, PUT, DELETE, OPTIONS, TRACE]
///   promises:
///     retries-503-burst: '"total: Total number of retries to allow."'
/// ```
///
/// Applied to a fault file ([`ClientProfile::apply`]), the file runs with the profile's
/// client and is judged by `conforms_to` the documented policy, for the promises the
/// documentation makes; on the others the documentation is silent, and the run is only
/// observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientProfile {
    /// Format version; must be 1.
    pub version: u32,
    /// The client as the conformance table names it.
    pub name: String,
    /// The language it is written in.
    pub language: String,
    /// The library and its exact version (`urllib3 2.8.0`).
    pub library: String,
    /// What the client speaks, `http` or `grpc` (default `http`): the profile is applied
    /// to the promises of that protocol only ([`Protocol::of`]), the others are not
    /// applicable to it.
    #[serde(default, skip_serializing_if = "is_http")]
    pub protocol: Protocol,
    /// The client: a program (`{ command: [...] }`, its `cwd` relative to the profile), or
    /// a policy of the reference client.
    pub client: ClientSpec,
    /// Files the client needs, relative to its command's `cwd` (else the profile's folder),
    /// such as the stamp an install step leaves: while one is missing the client is not
    /// installed here, and its cells are skipped, naming the file. A program found on
    /// `PATH` (`node`, `java`) says nothing of whether its libraries were installed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// What its documentation promises.
    #[serde(default)]
    pub documented: Documented,
    /// Where the profile came from.
    #[serde(skip)]
    pub source: SourceInfo,
}

/// What a client's documentation promises.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Documented {
    /// The schedule the documentation gives, as a policy: what it retries, how often and
    /// after how long, and whether it honours `Retry-After`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conforms_to: Option<PolicySpec>,
    /// The methods it retries (`None`: every method); a fault whose operation's method is
    /// not among them is judged against no retry at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methods: Option<Vec<String>>,
    /// What the documentation says of each promise, by the name of its fault file (its
    /// stem: `retries-503-burst`), quoted. A promise left out is one the documentation is
    /// silent on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub promises: BTreeMap<String, String>,
}

impl ClientProfile {
    /// Reads the profile at `path`; errors are located, as a scenario's are.
    ///
    /// ```
    /// use retrylab::conformance::ClientProfile;
    ///
    /// let error = ClientProfile::load("no/such/profile.yaml").unwrap_err();
    /// assert_eq!(error.to_string(), "no/such/profile.yaml: no such file or directory");
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<ClientProfile, ScenarioErrors> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes = file::read(path).map_err(|why| ScenarioError::new(&name, None, "", why))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ScenarioError::new(&name, None, "", "the profile is not valid UTF-8"))?;
        let mut profile = ClientProfile::from_yaml_str(&text, &name)?;
        profile
            .source
            .set_dir(path.parent().unwrap_or(Path::new("")));
        Ok(profile)
    }

    /// Reads a profile from YAML text; `name` is the file name used in errors.
    ///
    /// ```
    /// use retrylab::conformance::ClientProfile;
    ///
    /// let profile = ClientProfile::from_yaml_str(
    ///     "version: 1\nname: curl\nlanguage: shell\nlibrary: curl 7.88\n\
    ///      client: { command: [curl, -sf, --retry, '3', '{url}'] }\n",
    ///     "curl.yaml",
    /// ).unwrap();
    /// assert_eq!(profile.client.name(), "command");
    /// assert!(profile.documented.promises.is_empty());
    /// ```
    pub fn from_yaml_str(src: &str, name: &str) -> Result<ClientProfile, ScenarioErrors> {
        let mut profile: ClientProfile = typed(src, name, &SCENARIO).map_err(|e| *e)?;
        profile.source = source_info(src, name, &SCENARIO);
        if profile.version != 1 {
            let at = profile.source.locate("version");
            return Err(ScenarioError::new(
                name,
                at,
                "version",
                format!(
                    "profile format version {} is not supported",
                    profile.version
                ),
            )
            .with_expected("1")
            .into());
        }
        Ok(profile)
    }

    /// `fault`, the file of the promise `promise` (its stem), run by this profile's client
    /// and judged against what the documentation promises: `conforms_to` the documented
    /// policy (or no retry at all, for a method the documentation does not retry) when the
    /// documentation makes the promise, nothing when it is silent. The file's own client and
    /// expectations (those of the reference client it may name, `must_fail` and `status`
    /// included) and its snapshot are replaced; its endpoints, operation, limits and
    /// `tolerance` stay. A command's `cwd` is taken relative to the profile.
    ///
    /// ```
    /// use retrylab::Scenario;
    /// use retrylab::conformance::ClientProfile;
    ///
    /// let profile = ClientProfile::from_yaml_str(
    ///     "version: 1\nname: curl\nlanguage: shell\nlibrary: curl 7.88\n\
    ///      client: { command: [curl, -sf, --retry, '3', '{url}'] }\n\
    ///      documented:\n  conforms_to: { fixed: { delay: 1s, max_attempts: 4 } }\n\
    ///      \x20 promises: { burst: 'retries a transient error 3 times' }\n",
    ///     "curl.yaml",
    /// ).unwrap();
    /// let fault = Scenario::from_yaml_str(
    ///     "version: 1\nname: burst\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
    ///      operation: { endpoint: api }\n",
    ///     "burst.yaml",
    /// ).unwrap();
    ///
    /// let applied = profile.apply(&fault, "burst").unwrap();
    ///
    /// assert_eq!(applied.client, profile.client);
    /// assert_eq!(applied.expect.check_names(), ["conforms_to"]);
    /// ```
    pub fn apply(&self, fault: &Scenario, promise: &str) -> Result<Scenario, ScenarioErrors> {
        let theirs = Protocol::of(fault);
        if theirs != self.protocol {
            // A profile that leaves `protocol` out speaks HTTP: said at its name then.
            let at = (self.source.locate("protocol")).or_else(|| self.source.locate("name"));
            return Err(ScenarioError::new(
                &self.source.file,
                at,
                "protocol",
                format!(
                    "the profile's client speaks {}, and the promise {promise} is about {} \
                     (its endpoints answer {}): the profile does not apply to it",
                    self.protocol.name(),
                    theirs.name(),
                    match theirs {
                        Protocol::Grpc => "in gRPC, with `grpc` steps",
                        Protocol::Http => "with HTTP statuses, no `grpc` step",
                    }
                ),
            )
            .with_expected(format!("`protocol: {}`", theirs.name().to_lowercase()))
            .into());
        }
        let mut applied = fault.clone();
        applied.client = match &self.client {
            ClientSpec::Command(command) => {
                let mut command = command.clone();
                if let Some(dir) = &command.cwd {
                    let base = self.source.dir().unwrap_or(Path::new(""));
                    let joined = base.join(dir);
                    let absolute = std::path::absolute(&joined).unwrap_or(joined);
                    command.cwd = Some(absolute.display().to_string());
                }
                ClientSpec::Command(command)
            }
            other => other.clone(),
        };
        if fault.locate("backend").is_none() {
            applied.imply_backend();
        }
        let header = applied.expect.header.take();
        applied.expect = crate::scenario::Expectations::default();
        applied.must_fail.clear();
        applied.status = None;
        applied.snapshot = false;
        if self.documented.promises.contains_key(promise) {
            if let Some(policy) = &self.documented.conforms_to {
                let retried = self.documented.methods.as_ref().is_none_or(|methods| {
                    methods
                        .iter()
                        .any(|m| m.eq_ignore_ascii_case(&fault.operation.method))
                });
                applied.expect.conforms_to = Some(if retried {
                    policy.clone()
                } else {
                    ClientSpec::NoRetry
                });
            }
            // What the file asks of every attempt's header is the protocol's, not the
            // reference client's (A6's `grpc-previous-rpc-attempts` on each retry): a client
            // whose docs make the promise owes it too.
            applied.expect.header = header;
        }
        applied.validate().map(|()| applied)
    }

    /// The first of [`requires`](ClientProfile::requires) that does not exist, as written.
    ///
    /// ```
    /// use retrylab::conformance::ClientProfile;
    ///
    /// let profile = ClientProfile::from_yaml_str(
    ///     "version: 1\nname: ky\nlanguage: Node\nlibrary: ky 1.14.3\n\
    ///      client: { command: [node, ky.mjs, '{url}'] }\n\
    ///      requires: [no/such/stamp]\n",
    ///     "ky.yaml",
    /// ).unwrap();
    /// assert_eq!(profile.missing().as_deref(), Some("no/such/stamp"));
    /// ```
    pub fn missing(&self) -> Option<String> {
        let base = self.source.dir().unwrap_or(Path::new(""));
        let dir = match &self.client {
            ClientSpec::Command(command) => command
                .cwd
                .as_deref()
                .map_or_else(|| base.to_path_buf(), |cwd| base.join(cwd)),
            _ => base.to_path_buf(),
        };
        self.requires
            .iter()
            .find(|file| !dir.join(file).exists())
            .cloned()
    }

    /// Whether the documentation makes the promise `promise` (a fault file's stem).
    pub fn promises(&self, promise: &str) -> bool {
        self.documented.promises.contains_key(promise)
    }
}

/// Whether `protocol` is the default, left out when a profile is written back.
fn is_http(protocol: &Protocol) -> bool {
    *protocol == Protocol::Http
}
