//! `client: { command: [...] }`: a program in any language as the client under test, run on
//! the real backend against the endpoints' sockets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::defaults::{is_s_30, s_30};
use crate::scenario::model::duration::Millis;

/// A program run as the client: `client: { command: [program, args...], env, cwd, per,
/// timeout }`. Its argv runs with no shell; `{url}` (the operation's URL), `{url:<endpoint>}`
/// (an endpoint's base URL), `{call}` (the call's index) and `{seed}` expand in every
/// argument, `{{` and `}}` are literal braces.
///
/// A command client runs on `backend: real` only, which it implies: the program reaches
/// the endpoints through real sockets on 127.0.0.1.
///
/// ```
/// use retrylab::scenario::{CommandClient, Millis, ProcessPer};
///
/// let client = CommandClient::new(["python3", "clients/orders.py", "{url}"])
///     .env("ORDERS_TIMEOUT", "5")
///     .cwd(".")
///     .per(ProcessPer::Run)
///     .timeout(Millis::from_secs(10));
/// assert_eq!(client.program(), "python3");
/// assert_eq!(client.per, ProcessPer::Run);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandClient {
    /// The program and its arguments (argv, no shell; at least the program). `{url}`,
    /// `{url:<endpoint>}`, `{call}` and `{seed}` expand; `{{` and `}}` are braces.
    pub command: Vec<String>,
    /// Variables added to the program's environment, which is otherwise clean: `PATH`,
    /// `HOME`, `USER`, `LANG`, `LC_ALL`, `LC_CTYPE`, `TMPDIR` and `TZ` from retrylab's own,
    /// and the `RETRYLAB_*` variables of the call.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The program's working directory, relative to the scenario file (default: the
    /// directory retrylab runs in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `call` (default): a process per logical call, whose exit status is the call's
    /// result; `run`: one process makes every call of the run, told apart by
    /// `x-retrylab-call` when it sends one, else by the pauses between its requests.
    #[serde(default, skip_serializing_if = "ProcessPer::is_call")]
    pub per: ProcessPer,
    /// How long a process may run before it is killed with its whole process group
    /// (default 30s).
    #[serde(default = "s_30", skip_serializing_if = "is_s_30")]
    pub timeout: Millis,
}

/// How many calls one process of a [`CommandClient`] makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProcessPer {
    /// A process per logical call.
    #[default]
    Call,
    /// One process for the whole run.
    Run,
}

impl ProcessPer {
    /// Whether this is the default, `call`.
    pub fn is_call(&self) -> bool {
        *self == ProcessPer::Call
    }

    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            ProcessPer::Call => "call",
            ProcessPer::Run => "run",
        }
    }
}

impl CommandClient {
    /// The program `argv` runs, with no extra environment, no working directory of its own,
    /// a process per call and the default timeout (30s).
    pub fn new<I, S>(argv: I) -> CommandClient
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CommandClient {
            command: argv.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
            per: ProcessPer::Call,
            timeout: s_30(),
        }
    }

    /// Adds `name=value` to the program's environment.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> CommandClient {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Runs the program in `dir`, relative to the scenario file.
    pub fn cwd(mut self, dir: impl Into<String>) -> CommandClient {
        self.cwd = Some(dir.into());
        self
    }

    /// A process per call, or one for the run.
    pub fn per(mut self, per: ProcessPer) -> CommandClient {
        self.per = per;
        self
    }

    /// Kills a process still running after `timeout`, with its process group.
    pub fn timeout(mut self, timeout: Millis) -> CommandClient {
        self.timeout = timeout;
        self
    }

    /// The program, as written (empty for an empty command, which validation refuses).
    pub fn program(&self) -> &str {
        self.command.first().map_or("", String::as_str)
    }
}

/// A placeholder of a command's argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placeholder<'a> {
    /// Text copied as it is (braces unescaped).
    Text(String),
    /// `{url}`.
    Url,
    /// `{url:<endpoint>}`.
    EndpointUrl(&'a str),
    /// `{call}`.
    Call,
    /// `{seed}`.
    Seed,
}

/// The placeholders a command's argument may hold, for error messages.
pub(crate) const PLACEHOLDERS: &str = "`{url}`, `{url:<endpoint>}`, `{call}`, `{seed}`";

/// `arg` read as text and placeholders, or why it cannot be (an unknown placeholder, an
/// unclosed or unopened brace).
pub(crate) fn placeholders(arg: &str) -> Result<Vec<Placeholder<'_>>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = arg;
    while let Some(at) = rest.find(['{', '}']) {
        text.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{{") {
            text.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            text.push('}');
            rest = after;
        } else if let Some(after) = tail.strip_prefix('{') {
            let Some(end) = after.find('}') else {
                return Err(format!(
                    "`{{` opens a placeholder that is never closed (write `{{{{` for a brace); \
                     the placeholders are {PLACEHOLDERS}"
                ));
            };
            let name = &after[..end];
            let part = match name {
                "url" => Placeholder::Url,
                "call" => Placeholder::Call,
                "seed" => Placeholder::Seed,
                _ => match name.strip_prefix("url:") {
                    Some(endpoint) if !endpoint.is_empty() => Placeholder::EndpointUrl(endpoint),
                    _ => {
                        return Err(format!(
                            "unknown placeholder `{{{name}}}`: the placeholders are \
                             {PLACEHOLDERS} (write `{{{{` for a brace)"
                        ));
                    }
                },
            };
            if !text.is_empty() {
                parts.push(Placeholder::Text(std::mem::take(&mut text)));
            }
            parts.push(part);
            rest = &after[end + 1..];
        } else {
            return Err("a `}` closes no placeholder (write `}}` for a brace)".to_owned());
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Placeholder::Text(text));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_read_and_braces_escaped() {
        assert_eq!(
            placeholders("--url={url}/x"),
            Ok(vec![
                Placeholder::Text("--url=".into()),
                Placeholder::Url,
                Placeholder::Text("/x".into())
            ])
        );
        assert_eq!(
            placeholders("{url:api}{call}{seed}"),
            Ok(vec![
                Placeholder::EndpointUrl("api"),
                Placeholder::Call,
                Placeholder::Seed
            ])
        );
        assert_eq!(
            placeholders("{{\"a\": 1}}"),
            Ok(vec![Placeholder::Text("{\"a\": 1}".into())])
        );
        assert!(placeholders("{nope}").is_err_and(|e| e.contains("unknown placeholder `{nope}`")));
        assert!(placeholders("{url").is_err_and(|e| e.contains("never closed")));
        assert!(placeholders("a}b").is_err_and(|e| e.contains("closes no placeholder")));
        assert!(placeholders("{url:}").is_err());
    }
}
