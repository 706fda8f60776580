//! The endpoint's process: a crash ends its current life (and the requests admitted in it),
//! a restart lets requests in again, with the scripts kept or started over.

use crate::script::crash::ScriptState;

use super::Endpoint;
use super::route_state::Steps;

impl Endpoint {
    /// The endpoint's life requests are admitted in now: it changes at each
    /// [`crash`](Endpoint::crash).
    #[cfg(feature = "turmoil")]
    pub(crate) fn life(&self) -> u64 {
        self.inner.lives.current()
    }

    /// The endpoint's process crashes. Requests being processed end here: none of them
    /// commits or answers from now on (what they committed on arrival stays in the ledger),
    /// and the dedupe table forgets which keys were in flight, as
    /// [`DedupeTable::crash`](crate::DedupeTable::crash) says. The ledger loses nothing.
    ///
    /// Until [`restart`](Endpoint::restart) the endpoint admits no request: one that reaches
    /// it is neither recorded nor answered, and consumes no step.
    ///
    /// This is the endpoint's half of a crash. Its connections are the network's: the
    /// harness resets them and refuses connects until [`restart`](Endpoint::restart).
    ///
    /// ```
    /// use retrylab_endpoints::{ConnectAction, ConnectStep, Endpoint, EndpointConfig, ScriptState, VirtualClock};
    ///
    /// let endpoint = Endpoint::new(
    ///     EndpointConfig::http("api").connect([ConnectStep::refuse(), ConnectStep::accept()]),
    ///     VirtualClock::new(),
    /// );
    /// assert_eq!(endpoint.on_connect(1), ConnectAction::Refuse);
    /// endpoint.crash();
    /// // Restarted with its schedules from the start: the first connect is refused again.
    /// endpoint.restart(ScriptState::Reset);
    /// assert_eq!(endpoint.on_connect(2), ConnectAction::Refuse);
    /// assert_eq!(endpoint.on_connect(3), ConnectAction::Accept);
    /// ```
    pub fn crash(&self) {
        let mut state = self.lock();
        self.inner.lives.end();
        state.down = true;
        if let Some(table) = &mut state.dedupe {
            table.crash();
        }
    }

    /// The endpoint comes back after a [`crash`](Endpoint::crash), with its scripts and
    /// connect schedule where they were ([`ScriptState::Keep`]) or from their first step
    /// ([`ScriptState::Reset`]). Timelines are unaffected either way: their windows are
    /// instants of the run, not of the process.
    pub fn restart(&self, scripts: ScriptState) {
        let mut state = self.lock();
        state.down = false;
        if scripts == ScriptState::Reset {
            for route in &mut state.routes {
                if let Steps::Script(script) = &mut route.steps {
                    script.restart();
                }
            }
            state.connect.restart();
        }
    }
}
