//! An endpoint of `retrylab-endpoints` as a host of the sim network.

use std::sync::Arc;

use retrylab_endpoints::{ConnInfo, ConnectAction, ConnectionControl, Endpoint};

use super::{ConnId, Host, ResetHandle, SimStream};

/// An endpoint as a host of the sim network.
pub(crate) struct EndpointHost {
    endpoint: Endpoint,
}

impl EndpointHost {
    pub(crate) fn new(endpoint: Endpoint) -> EndpointHost {
        EndpointHost { endpoint }
    }
}

impl Host for EndpointHost {
    fn on_syn(&self, conn: ConnId) -> ConnectAction {
        self.endpoint.on_connect(conn.0)
    }

    fn accept(&self, conn: ConnId, stream: SimStream) {
        let control = Arc::new(StreamControl(stream.reset_handle()));
        let info = ConnInfo::new(conn.0, control);
        let endpoint = self.endpoint.clone();
        // Boxed: spawning moves the future through several layers, and the serving future
        // (hyper's connection state included) is about a kilobyte.
        tokio::spawn(Box::pin(async move { endpoint.serve(stream, info).await }));
    }
}

/// Lets an endpoint reset a connection whose stream hyper owns.
struct StreamControl(ResetHandle);

impl ConnectionControl for StreamControl {
    fn reset(&self) {
        self.0.reset();
    }
}
