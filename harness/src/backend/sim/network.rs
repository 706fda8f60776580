//! The public handle on the simulated network.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::connect::Connect;
use super::ids::EndIndex as _;
use super::state::{HostEntry, Inner};
use super::{Dir, Host, HostId, NetLog, SegmentKind, Side};

/// What clients sent that has not reached its host yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InFlight {
    /// Nothing.
    Nothing,
    /// Data arrives at this instant (the earliest of several).
    Arriving(Instant),
    /// A partition holds data; it moves on at the heal.
    Held,
}

/// The in-memory TCP network of the sim backend.
///
/// Hosts are registered by name; clients [`connect`](Network::connect) to them and get a
/// [`SimStream`](super::SimStream). Every segment has a delivery instant in tokio's virtual
/// time, so the network is meant for a current-thread runtime with paused time. It is cheap
/// to clone (all clones share one state) and `Send + Sync`.
#[derive(Clone)]
pub(crate) struct Network {
    pub(super) inner: Arc<Mutex<Inner>>,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("Network")
            .field("hosts", &inner.by_name.keys().collect::<Vec<_>>())
            .field("connections", &(inner.next_conn - 1))
            .field("events", &inner.events.len())
            .finish()
    }
}

impl Network {
    /// A network with no hosts, whose instants are reported as milliseconds since `start`,
    /// and whose hosts get `default_latency` one way in each direction.
    pub(crate) fn new(start: Instant, default_latency: Duration) -> Network {
        Network {
            inner: Arc::new(Mutex::new(Inner::new(start, default_latency))),
        }
    }

    /// Holds up to `cap` connections open at once (at least the default,
    /// [`MAX_OPEN_CONNECTIONS`](super::failures::MAX_OPEN_CONNECTIONS)).
    pub(crate) fn set_connection_cap(&self, cap: usize) {
        let mut inner = self.lock();
        inner.connection_cap = cap.max(super::failures::MAX_OPEN_CONNECTIONS);
    }

    /// The connects refused so far because the cap's worth of connections were open, and
    /// the cap.
    pub(crate) fn refused_at_cap(&self) -> (u64, usize) {
        let inner = self.lock();
        (inner.refused_at_cap, inner.connection_cap)
    }

    /// Locks the state. A panic while holding the lock leaves it consistent enough to
    /// report on, so poisoning is ignored.
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every operation of the network takes the lock: the run's thread is at work.
        crate::backend::progress::network();
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `host` under `name` with the default latency and returns its id. Registering
    /// a name again replaces its handler for later connections (a restarted host) and keeps
    /// its id, latency and partition state.
    pub(crate) fn add_host(&self, name: &str, host: Arc<dyn Host>) -> HostId {
        let mut inner = self.lock();
        if let Some(&id) = inner.by_name.get(name) {
            inner.host_mut(id).handler = host;
            return id;
        }
        let id = HostId(u32::try_from(inner.hosts.len()).unwrap_or(u32::MAX));
        let latency = inner.default_latency;
        inner.hosts.push(HostEntry {
            name: name.to_owned(),
            handler: host,
            to: latency,
            from: latency,
            sampled: None,
            partitioned: false,
            partitions: 0,
            heal_wakers: Vec::new(),
            down: false,
        });
        inner.by_name.insert(name.to_owned(), id);
        id
    }

    /// Sets the one-way latencies of `host`: `to_host` for client -> host segments and SYNs,
    /// `from_host` for host -> client ones. Applies to segments sent from now on.
    pub(crate) fn set_latency(
        &self,
        host: &str,
        to_host: Duration,
        from_host: Duration,
    ) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        let entry = inner.host_mut(id);
        entry.to = to_host;
        entry.from = from_host;
        Ok(())
    }

    /// Draws the one-way latency of every segment and SYN to or from `host` from
    /// `distribution`, with `stream`, from now on.
    pub(crate) fn set_sampled_latency(
        &self,
        host: &str,
        distribution: retrylab_endpoints::LatencyDistribution,
        stream: crate::rng::Stream,
    ) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        inner.host_mut(id).sampled = Some(super::state::SampledLatency {
            distribution,
            stream,
        });
        Ok(())
    }

    /// The id `name` was registered under.
    #[cfg(test)]
    pub(crate) fn host_id(&self, name: &str) -> Option<HostId> {
        self.lock().by_name.get(name).copied()
    }

    /// Starts connecting to `host`; see [`Connect`] for the timeline. The connection id is
    /// assigned now, in call order. An unknown host fails at once with `NotFound`.
    pub(crate) fn connect(&self, host: &str) -> Connect {
        Connect::start(self.clone(), host)
    }

    /// A `tower_service::Service<Uri>` that connects through this network, for hyper-util.
    #[cfg(test)]
    pub(crate) fn connector(&self) -> super::SimConnector {
        super::SimConnector::new(self.clone())
    }

    /// Cuts `host` off from all clients: segments in both directions are held until
    /// [`heal`](Network::heal), and SYNs in flight to it (sent before
    /// or during the partition) are lost, so those connects never complete. Partitioning a partitioned host does
    /// nothing.
    pub(crate) fn partition(&self, host: &str) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        inner.partition(id, Instant::now());
        Ok(())
    }

    /// Ends the partition of `host`: held segments are delivered at the later of their own
    /// instant and now, in order, as TCP retransmission would. Healing a host that is not
    /// partitioned does nothing.
    pub(crate) fn heal(&self, host: &str) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        inner.heal(id, Instant::now());
        Ok(())
    }

    /// Crashes `host`: its connections are reset from its side and connects to it are
    /// refused until [`restart`](Network::restart). The host's handler is the one to stop its
    /// own work (an endpoint's [`crash`](retrylab_endpoints::Endpoint::crash)).
    pub(crate) fn crash(&self, host: &str) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        inner.crash(id, Instant::now());
        Ok(())
    }

    /// Brings `host` back after a [`crash`](Network::crash): it accepts connects again.
    pub(crate) fn restart(&self, host: &str) -> io::Result<()> {
        let mut inner = self.lock();
        let id = inner.lookup(host)?;
        inner.restart(id, Instant::now());
        Ok(())
    }

    /// A snapshot of the events so far.
    #[cfg(test)]
    pub(crate) fn log(&self) -> NetLog {
        let inner = self.lock();
        NetLog {
            hosts: inner.hosts.iter().map(|h| h.name.clone()).collect(),
            events: inner.events.clone(),
        }
    }

    /// Moves the events so far out, leaving the log empty (events recorded later start a new
    /// log). For the end of a run, where a copy of the log would only be thrown away.
    pub(crate) fn take_log(&self) -> NetLog {
        let mut inner = self.lock();
        NetLog {
            hosts: inner.hosts.iter().map(|h| h.name.clone()).collect(),
            events: std::mem::take(&mut inner.events),
        }
    }

    /// Number of events so far (cheaper than [`log`](Network::log) to poll).
    #[cfg(test)]
    pub(crate) fn log_len(&self) -> usize {
        self.lock().events.len()
    }

    /// What clients sent that is still on its way to a host: the earliest instant at which a
    /// data segment will reach a host that still reads, or that a partition holds one.
    /// Segments already delivered and not read yet are the host's to read, not in flight.
    pub(crate) fn in_flight_to_hosts(&self) -> InFlight {
        let inner = self.lock();
        let now = Instant::now();
        let mut earliest: Option<Instant> = None;
        for conn in inner.conns.iter().filter(|c| c.live) {
            if conn.ends[Side::Server.index()].closed {
                continue;
            }
            let pipe = &conn.pipes[Dir::ClientToServer.index()];
            for seg in pipe.segs.iter().filter(|s| s.kind == SegmentKind::Data) {
                if pipe.is_held(seg.seq) {
                    return InFlight::Held;
                }
                if seg.deliver_at > now {
                    earliest = Some(earliest.map_or(seg.deliver_at, |e| e.min(seg.deliver_at)));
                }
            }
        }
        earliest.map_or(InFlight::Nothing, InFlight::Arriving)
    }

    /// Ends the network with its run: from now on every connect and every operation on a
    /// connection fails with an error saying that the run has ended, so a client that kept
    /// its `Env` past the run fails loudly instead of talking to endpoints nobody records.
    pub(crate) fn end_run(&self) {
        self.lock().end_run();
    }

    /// Whether [`end_run`](Network::end_run) was called.
    pub(crate) fn run_ended(&self) -> bool {
        self.lock().ended
    }

    /// The instant reported as 0.
    pub(crate) fn start(&self) -> Instant {
        self.lock().start
    }

    /// Virtual now, in whole milliseconds since [`start`](Network::start).
    #[cfg(test)]
    pub(crate) fn now_ms(&self) -> u64 {
        self.lock().ms(Instant::now())
    }
}
