//! An endpoint's connections: its connect schedule and when it closes them (keep-alive).

use serde::{Deserialize, Serialize};

use super::duration::{DurationOrNone, Millis};

/// One entry of a connect schedule: `{ action: refuse, times: 2 }`, or, for every attempt
/// before an instant, `{ action: refuse, until: 2s }`.
///
/// ```
/// use retrylab::scenario::{ConnectAction, ConnectStepSpec, Millis};
/// assert_eq!(ConnectStepSpec::refuse().times(2).action, ConnectAction::Refuse);
/// assert_eq!(ConnectStepSpec::refuse().until(Millis::from_secs(2)).until, Some(Millis::from_secs(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConnectStepSpec {
    /// What the connection attempt gets.
    pub action: ConnectAction,
    /// For this many connection attempts (at least 1); the last entry repeats forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// For every connection attempt before this instant of the run, instead of `times`;
    /// after a last entry of this kind, connections are accepted. The one form of `refuse`
    /// and `blackhole` real sockets can make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Millis>,
}

impl ConnectStepSpec {
    /// Accept the connection.
    pub fn accept() -> Self {
        ConnectStepSpec {
            action: ConnectAction::Accept,
            times: None,
            until: None,
        }
    }

    /// Refuse it (RST after one round trip).
    pub fn refuse() -> Self {
        ConnectStepSpec {
            action: ConnectAction::Refuse,
            times: None,
            until: None,
        }
    }

    /// Never complete it.
    pub fn blackhole() -> Self {
        ConnectStepSpec {
            action: ConnectAction::Blackhole,
            times: None,
            until: None,
        }
    }

    /// For `n` attempts.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// For every attempt before the instant `at` of the run.
    pub fn until(mut self, at: Millis) -> Self {
        self.until = Some(at);
        self
    }
}

/// What a connection attempt gets: the endpoints' own type, so the scenario, the endpoint
/// and the sim network speak one vocabulary.
///
/// ```
/// use retrylab::scenario::ConnectAction;
/// let a: ConnectAction = serde_saphyr::from_str("blackhole").unwrap();
/// assert_eq!(a, ConnectAction::Blackhole);
/// ```
pub use retrylab_endpoints::ConnectAction;

/// When the endpoint closes connections: `{ idle_timeout: none | <dur>, max_requests: n }`.
///
/// ```
/// use retrylab::scenario::{DurationOrNone, KeepAliveSpec, Millis};
///
/// let mut k = KeepAliveSpec::default();
/// assert_eq!(k.idle_timeout, DurationOrNone::None);
/// k.idle_timeout = DurationOrNone::After(Millis::from_secs(5));
/// k.max_requests = Some(100);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct KeepAliveSpec {
    /// Close a connection idle this long (default `none`).
    #[serde(default, skip_serializing_if = "DurationOrNone::is_none")]
    pub idle_timeout: DurationOrNone,
    /// Close a connection after this many requests (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u32>,
}
