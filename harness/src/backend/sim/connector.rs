//! The hyper-util connector over the simulated network.

use std::io;
use std::task::{Context, Poll};

use http::Uri;

use super::{Connect, Network, SimStream};

/// A `tower_service::Service<Uri>` that connects to the [`Network`] host named by the URI's
/// host. The port is ignored and `https` is served as plain TCP (version 1 has no TLS).
#[derive(Clone, Debug)]
pub(crate) struct SimConnector {
    net: Network,
}

impl SimConnector {
    /// A connector over `net` (also [`Network::connector`]).
    pub(crate) fn new(net: Network) -> SimConnector {
        SimConnector { net }
    }

    /// Whether the network's run has ended (every connect fails from then on).
    pub(crate) fn run_ended(&self) -> bool {
        self.net.run_ended()
    }
}

impl tower_service::Service<Uri> for SimConnector {
    type Response = SimStream;
    type Error = io::Error;
    type Future = Connect;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        match uri.host() {
            Some(host) => self.net.connect(host),
            None => Connect::failed(
                self.net.clone(),
                io::Error::new(io::ErrorKind::InvalidInput, "uri has no host"),
            ),
        }
    }
}
