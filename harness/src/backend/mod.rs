//! Backends: where endpoints run and how a client reaches them.
//!
//! `sim` (the default) is an in-memory TCP model on a paused tokio runtime; `real` serves the
//! same endpoints on TCP listeners at 127.0.0.1 in real time; `turmoil` (feature `turmoil`)
//! makes each endpoint a host of a turmoil simulation. The attempt limit is enforced
//! at the endpoints and the harness's client, so it holds for every client on either.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Uri;

mod attempt_limit;
mod ended;
mod link_fault;
pub(crate) mod progress;
pub(crate) mod real;
pub(crate) mod sim;
mod stream;
#[cfg(feature = "turmoil")]
pub(crate) mod turmoil;

pub(crate) use attempt_limit::AttemptLimit;
pub(crate) use ended::run_ended_error;
pub(crate) use link_fault::{LinkFault, LinkFaultRecord};
pub(crate) use stream::Stream;

use self::real::{RealConnector, RealNet};
use self::sim::{ConnId, InFlight, NetLog, Network, SimConnector};
#[cfg(feature = "turmoil")]
use self::turmoil::{TurmoilConnector, TurmoilNet};

/// The network of one run.
#[derive(Clone)]
pub(crate) enum Net {
    /// The in-memory TCP model, on virtual time.
    Sim(Network),
    /// Real sockets at 127.0.0.1, in real time.
    Real(RealNet),
    /// Hosts of a turmoil simulation, on its virtual time.
    #[cfg(feature = "turmoil")]
    Turmoil(TurmoilNet),
}

impl Net {
    /// Whether instants are real milliseconds (measured, so checks allow a tolerance).
    pub(crate) fn is_real(&self) -> bool {
        matches!(self, Net::Real(_))
    }

    /// Whether the network logs every connect and segment (the sim network). Without that
    /// log, attempts a client made around the harness's client are rebuilt from the
    /// endpoints' instants, and connection events come from their ledgers.
    pub(crate) fn logs_segments(&self) -> bool {
        matches!(self, Net::Sim(_))
    }

    /// The backend this network is.
    pub(crate) fn kind(&self) -> crate::scenario::BackendKind {
        match self {
            Net::Sim(_) => crate::scenario::BackendKind::Sim,
            Net::Real(_) => crate::scenario::BackendKind::Real,
            #[cfg(feature = "turmoil")]
            Net::Turmoil(_) => crate::scenario::BackendKind::Turmoil,
        }
    }

    /// A connector to the run's endpoints.
    pub(crate) fn connector(&self) -> Connector {
        match self {
            Net::Sim(network) => Connector::Sim(SimConnector::new(network.clone())),
            Net::Real(net) => Connector::Real(RealConnector::new(net.clone())),
            #[cfg(feature = "turmoil")]
            Net::Turmoil(net) => Connector::Turmoil(TurmoilConnector::new(net.clone())),
        }
    }

    /// The base URL of endpoint `name`: `http://<name>` on the sim network, the address it
    /// listens on for real (`http://127.0.0.1:<port>`).
    pub(crate) fn base_url(&self, name: &str) -> String {
        let address = match self {
            Net::Real(net) => net.address(name),
            _ => None,
        };
        match address {
            Some(address) => format!("http://{address}"),
            None => {
                let mut url = String::with_capacity(7 + name.len());
                url.push_str("http://");
                url.push_str(name);
                url
            }
        }
    }

    /// The connects the sim network refused at its cap of open connections, and the cap;
    /// `None` on the other backends, which have no such cap.
    pub(crate) fn refused_at_cap(&self) -> Option<(u64, usize)> {
        match self {
            Net::Sim(network) => Some(network.refused_at_cap()),
            _ => None,
        }
    }

    /// Ends the run's network: from now on every connect fails, saying the run has ended;
    /// on the real backend, the endpoints stop serving.
    pub(crate) fn end_run(&self) {
        match self {
            Net::Sim(network) => network.end_run(),
            Net::Real(net) => net.end_run(),
            #[cfg(feature = "turmoil")]
            Net::Turmoil(net) => net.end_run(),
        }
    }

    /// What is still on its way to an endpoint. The real backend cannot see into the
    /// kernel's buffers: it says nothing, and settling waits a moment of real time instead.
    pub(crate) fn in_flight_to_hosts(&self) -> InFlight {
        match self {
            Net::Sim(network) => network.in_flight_to_hosts(),
            // A held link may carry a request turmoil does not show.
            #[cfg(feature = "turmoil")]
            Net::Turmoil(net) if net.holding() => InFlight::Held,
            _ => InFlight::Nothing,
        }
    }

    /// The turmoil-native faults applied during the run, in order (none elsewhere).
    pub(crate) fn take_link_faults(&self) -> Vec<LinkFaultRecord> {
        match self {
            #[cfg(feature = "turmoil")]
            Net::Turmoil(net) => net.take_faults(),
            _ => Vec::new(),
        }
    }

    /// The sim network's log of connects and segments (the real backend keeps none: its
    /// connection events come from the endpoints' ledgers).
    pub(crate) fn take_log(&self) -> NetLog {
        match self {
            Net::Sim(network) => network.take_log(),
            _ => NetLog::default(),
        }
    }
}

/// A connector to the run's endpoints, on either backend.
#[derive(Clone)]
pub(crate) enum Connector {
    Sim(SimConnector),
    Real(RealConnector),
    #[cfg(feature = "turmoil")]
    Turmoil(TurmoilConnector),
}

/// A connect under way: the connection id it will have when the backend knows it up front
/// (the sim network assigns it at the SYN; on the real backend the endpoint does, on accept).
pub(crate) struct Dialing {
    pub(crate) conn_id: Option<u64>,
    pub(crate) future: ConnectFuture,
}

/// The connect of one backend, giving a [`Stream`]: the sim network's by value, so that a
/// connection allocates no future of its own (the real and turmoil backends' connectors box
/// theirs already).
pub(crate) enum ConnectFuture {
    Sim(sim::Connect),
    Real(<RealConnector as tower_service::Service<Uri>>::Future),
    #[cfg(feature = "turmoil")]
    Turmoil(<TurmoilConnector as tower_service::Service<Uri>>::Future),
}

impl Future for ConnectFuture {
    type Output = io::Result<Stream>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every variant is `Unpin`: the sim's connect holds its timer boxed, the others are
        // boxes.
        match self.get_mut() {
            ConnectFuture::Sim(c) => Pin::new(c).poll(cx).map_ok(Stream::from),
            ConnectFuture::Real(c) => c.as_mut().poll(cx).map_ok(Stream::from),
            #[cfg(feature = "turmoil")]
            ConnectFuture::Turmoil(c) => c.as_mut().poll(cx).map_ok(Stream::from),
        }
    }
}

impl Connector {
    /// Whether the run this connector belongs to has ended.
    pub(crate) fn run_ended(&self) -> bool {
        match self {
            Connector::Sim(c) => c.run_ended(),
            Connector::Real(c) => c.run_ended(),
            #[cfg(feature = "turmoil")]
            Connector::Turmoil(c) => c.run_ended(),
        }
    }

    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        use tower_service::Service;
        match self {
            Connector::Sim(c) => c.poll_ready(cx),
            Connector::Real(c) => c.poll_ready(cx),
            #[cfg(feature = "turmoil")]
            Connector::Turmoil(c) => c.poll_ready(cx),
        }
    }

    pub(crate) fn connect(&mut self, uri: Uri) -> Dialing {
        use tower_service::Service;
        match self {
            Connector::Sim(c) => {
                let connect = c.call(uri);
                Dialing {
                    conn_id: connect.conn_id().map(|ConnId(id)| id),
                    future: ConnectFuture::Sim(connect),
                }
            }
            Connector::Real(c) => Dialing {
                conn_id: None,
                future: ConnectFuture::Real(c.call(uri)),
            },
            // As on the real backend, the endpoint assigns the id when it accepts.
            #[cfg(feature = "turmoil")]
            Connector::Turmoil(c) => Dialing {
                conn_id: None,
                future: ConnectFuture::Turmoil(c.call(uri)),
            },
        }
    }
}
