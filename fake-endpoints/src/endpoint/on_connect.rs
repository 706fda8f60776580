//! The connection hook: what the endpoint's connect schedule decides for each connection
//! attempt the harness (or a listener) reports, recorded in the ledger.

use crate::ledger::ConnectRecord;
use crate::script::connect::ConnectAction;

use super::Endpoint;

impl Endpoint {
    /// The entries of the endpoint's connect schedule, as configured: a listener on real
    /// sockets reads the windows it must make itself (no listener yet, a full backlog).
    pub fn connect_steps(&self) -> Vec<crate::ConnectStep> {
        self.lock().connect.steps().to_vec()
    }

    /// A connection attempt `conn_id` arrived: consume the connect schedule, record the
    /// decision, and return it (the harness carries it out).
    pub fn on_connect(&self, conn_id: u64) -> ConnectAction {
        let mut state = self.lock();
        let action = state.connect.next_at(self.inner.clock().now_ms());
        self.inner.ledger.push_connect(ConnectRecord {
            conn_id,
            at_ms: self.inner.clock().now_ms(),
            action,
        });
        action
    }

    /// [`on_connect`](Endpoint::on_connect), unless the endpoint is crashed: then `None`, and
    /// no step is consumed and nothing recorded (no process is there to decide). For a host
    /// whose listener outlives the endpoint's crash by a moment (a turmoil host, crashed the
    /// tick after its endpoint).
    #[cfg(feature = "turmoil")]
    pub(crate) fn on_connect_if_up(&self, conn_id: u64) -> Option<ConnectAction> {
        let mut state = self.lock();
        if state.down {
            return None;
        }
        let action = state.connect.next_at(self.inner.clock().now_ms());
        self.inner.ledger.push_connect(ConnectRecord {
            conn_id,
            at_ms: self.inner.clock().now_ms(),
            action,
        });
        Some(action)
    }
}
