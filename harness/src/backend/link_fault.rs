//! Faults of turmoil's links and hosts, as the trace shows them.

/// A turmoil-native fault on the link between the client's host and an endpoint's, or on an
/// endpoint's host, as the trace shows it.
// Made by the turmoil backend only: a build without it reads none.
#[cfg_attr(not(feature = "turmoil"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkFault {
    /// Messages to and from the endpoint wait on the link.
    Held,
    /// The held messages go on.
    Released,
    /// Messages to and from the endpoint are dropped.
    Partitioned,
    /// The partition was repaired.
    Repaired,
    /// The endpoint's host crashed: its software and connections are gone.
    Crashed,
    /// The endpoint's host was bounced: its software runs again.
    Bounced,
}

/// A [`LinkFault`] applied at an instant (ms since the run started) to an endpoint's link.
#[cfg_attr(not(feature = "turmoil"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkFaultRecord {
    pub(crate) at_ms: u64,
    pub(crate) endpoint: String,
    pub(crate) fault: LinkFault,
}
