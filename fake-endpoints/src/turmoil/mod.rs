//! Endpoints as hosts of a turmoil simulation (feature `turmoil`), for a user's own
//! `turmoil::Sim` and for retrylab's `backend: turmoil`.
//!
//! An endpoint reads its clock from the runtime it runs on, and turmoil gives every host a
//! runtime of its own: so [`host`] makes the endpoint inside its host's runtime, with a clock
//! whose zero and wall clock are the simulation's, and hands it back for its ledger.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::rc::Rc;
use std::sync::Arc;

use crate::clock::VirtualClock;
use crate::config::EndpointConfig;
use crate::endpoint::Endpoint;
use crate::script::connect::ConnectAction;
use crate::script::crash::ScriptState;
use crate::server::conn::{ConnInfo, ConnectionControl, NoReset};
use crate::server::tcp::ConnIds;

mod signals;

pub use signals::{Ends, NoteReset, Signal, Signals};

/// The port endpoints listen on in a simulation: `http://api/` names host `api`, port 80,
/// as an HTTP URL without a port does.
pub const PORT: u16 = 80;

/// Adds a host named `name` to `sim` whose software serves an endpoint made from `config`
/// on [`PORT`], and returns that endpoint, whose ledger records what the host saw and did.
///
/// The endpoint is made inside the host's runtime (turmoil starts a host's software as it
/// adds it), so its instants are milliseconds of the simulation's time, from its start,
/// and its HTTP-dates follow the simulation's epoch. Connection ids count from 1 on this
/// host. turmoil cannot send RST on demand, so a step that resets the connection closes it
/// with a FIN here. turmoil answers a SYN itself, so a connect step that refuses or
/// black-holes acts after the connection is made: see [`Endpoint::serve_turmoil`].
///
/// Crashing the host (`Sim::crash`) drops the endpoint's connections and the work of the
/// requests it was processing; the endpoint itself, its ledger and its scripts, survive.
/// When the host comes back its endpoint has crashed too ([`Endpoint::crash`]): the dedupe
/// keys of the requests the crash dropped are no longer in flight.
/// Bouncing the host (`Sim::bounce`) serves the same endpoint again on the new runtime
/// turmoil gives the host, whose clock the endpoint follows from then on, so its instants
/// go on from where the simulation is.
///
/// # Panics
///
/// As `Sim::host` does when a host named `name` already exists; and if turmoil did not
/// start the host's software as it added the host (turmoil 0.7 always does), since there
/// would be no endpoint to return.
///
/// ```
/// use retrylab_endpoints::{EndpointConfig, Step};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let mut sim = turmoil::Builder::new().build();
/// let api = retrylab_endpoints::turmoil::host(
///     &mut sim,
///     "api",
///     EndpointConfig::http("api").script([Step::status(503).retry_after(1)]),
/// );
/// sim.client("client", async {
///     let mut stream = turmoil::net::TcpStream::connect(("api", 80)).await?;
///     stream.write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n").await?;
///     let mut answer = String::new();
///     stream.read_to_string(&mut answer).await?;
///     assert!(answer.starts_with("HTTP/1.1 503"));
///     Ok(())
/// });
/// sim.run().unwrap();
/// assert_eq!(api.ledger().snapshot().requests.len(), 1);
/// ```
pub fn host(sim: &mut ::turmoil::Sim<'_>, name: &str, config: EndpointConfig) -> Endpoint {
    // The simulation's clock as the host is added: the host's runtime reads `at` now.
    let at = sim.elapsed();
    let epoch = sim.since_epoch().saturating_sub(at);
    let epoch_unix_ms = u64::try_from(epoch.as_millis()).unwrap_or(u64::MAX);
    let made = host_with(sim, name, ConnIds::new(), move || {
        let now = tokio::time::Instant::now();
        let start = now.checked_sub(at).unwrap_or(now);
        Endpoint::new(config, VirtualClock::starting_at(start, epoch_unix_ms))
    });
    match made {
        Some(endpoint) => endpoint,
        // `Sim::host` runs the software's closure before it returns.
        None => unreachable!("turmoil added host `{name}` without starting its software"),
    }
}

/// Adds a host named `name` to `sim` whose software serves the endpoint `make` returns on
/// [`PORT`], with connection ids from `ids`, and returns that endpoint; `None` if turmoil
/// did not start the host's software as it added the host (turmoil 0.7 always does).
///
/// `make` runs once, inside the host's runtime, so an endpoint it makes can read that
/// runtime's clock: [`host`] is this with an endpoint made from a configuration, and the
/// harness's turmoil backend uses it with an endpoint of its own making. A crash and a
/// bounce act as in [`host`].
///
/// # Panics
///
/// As `Sim::host` does when a host named `name` already exists.
///
/// ```
/// use retrylab_endpoints::{ConnIds, Endpoint, EndpointConfig, Step, VirtualClock};
///
/// let mut sim = turmoil::Builder::new().build();
/// let api = retrylab_endpoints::turmoil::host_with(&mut sim, "api", ConnIds::new(), || {
///     let clock = VirtualClock::starting_at(tokio::time::Instant::now(), 0);
///     Endpoint::new(EndpointConfig::http("api").script([Step::status(200)]), clock)
/// });
/// assert!(api.is_some());
/// ```
pub fn host_with(
    sim: &mut ::turmoil::Sim<'_>,
    name: &str,
    ids: ConnIds,
    make: impl FnOnce() -> Endpoint + 'static,
) -> Option<Endpoint> {
    add_host(sim, name, ids, None, make)
}

/// [`host_with`], with the endpoint noting in `signals` the refusals, black holes and
/// resets turmoil's TCP cannot carry (see [`Signals`]), for a client whose connector reads
/// them: the harness's turmoil backend adds its endpoint hosts so.
///
/// # Panics
///
/// As `Sim::host` does when a host named `name` already exists.
pub fn host_with_signals(
    sim: &mut ::turmoil::Sim<'_>,
    name: &str,
    ids: ConnIds,
    signals: Signals,
    make: impl FnOnce() -> Endpoint + 'static,
) -> Option<Endpoint> {
    add_host(sim, name, ids, Some(signals), make)
}

fn add_host(
    sim: &mut ::turmoil::Sim<'_>,
    name: &str,
    ids: ConnIds,
    signals: Option<Signals>,
    make: impl FnOnce() -> Endpoint + 'static,
) -> Option<Endpoint> {
    let made: Rc<RefCell<Option<Endpoint>>> = Rc::default();
    let slot = Rc::clone(&made);
    let make = RefCell::new(Some(make));
    // The endpoint's life when its software last started.
    let started_in = Cell::new(0);
    sim.host(name, move || {
        // The first start makes the endpoint; a later one (a bounce) finds it made.
        let first = slot.borrow().is_none();
        if first {
            *slot.borrow_mut() = make.borrow_mut().take().map(|make| make());
        }
        let endpoint = slot.borrow().clone();
        if let Some(endpoint) = endpoint.as_ref().filter(|_| !first) {
            // Started again: the host crashed since the last start. When its endpoint's life
            // did not end with it (`Sim::crash` called directly, not by a harness that
            // crashes the endpoint first), it ends here: the steps in progress died with the
            // host's runtime, and their dedupe keys are released as a crash releases them.
            // The endpoint then comes back with its scripts where they were.
            if endpoint.life() == started_in.get() {
                endpoint.crash();
                endpoint.restart(ScriptState::Keep);
            }
        }
        if let Some(endpoint) = &endpoint {
            started_in.set(endpoint.life());
        }
        let ids = ids.clone();
        let signals = signals.clone();
        async move {
            let endpoint = match endpoint {
                Some(endpoint) => endpoint,
                // `make` runs at the first start, which fills the slot.
                None => return Err(io::Error::other("the endpoint was not made").into()),
            };
            if !first {
                // Bounced: the software runs on a new runtime, whose clock the endpoint
                // follows from here on. Read at the first poll, which is inside a step, where
                // turmoil's host timer reads this runtime's time.
                endpoint.follow_clock(host_clock(&endpoint)?);
            }
            let listener = bind().await?;
            endpoint.serve_on(listener, ids, signals.as_ref()).await?;
            Ok(())
        }
    });
    made.borrow().clone()
}

/// The clock of the runtime the current host runs on now, reading the simulation's time as
/// `endpoint`'s own clock did on the runtime turmoil replaced, with its epoch.
fn host_clock(endpoint: &Endpoint) -> io::Result<VirtualClock> {
    let elapsed = ::turmoil::sim_elapsed().ok_or_else(|| {
        io::Error::other(format!(
            "endpoint `{}`'s host came back outside a turmoil step: no simulation time to \
             follow",
            endpoint.name()
        ))
    })?;
    let now = tokio::time::Instant::now();
    let start = now.checked_sub(elapsed).ok_or_else(|| {
        io::Error::other(format!(
            "endpoint `{}`'s host came back on a runtime whose clock cannot reach back {elapsed:?} \
             to the simulation's start",
            endpoint.name()
        ))
    })?;
    Ok(VirtualClock::starting_at(
        start,
        endpoint.clock().epoch_unix_ms,
    ))
}

/// The software of an endpoint's host: listens on [`PORT`] of every address of the host and
/// serves each connection in a task of its own, with ids from `ids` (share one among
/// several hosts to number connections across them). Must run inside a turmoil host.
pub async fn listen(endpoint: Endpoint, ids: ConnIds) -> ::turmoil::Result {
    endpoint.serve_turmoil(bind().await?, ids).await?;
    Ok(())
}

/// A listener on [`PORT`] of every address of the current host.
async fn bind() -> io::Result<::turmoil::net::TcpListener> {
    ::turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await
}

impl Endpoint {
    /// Serves the endpoint on a turmoil listener until the future is dropped, or fails with
    /// the listener's error: each accepted connection is served by a task of its own, on the
    /// host's runtime.
    ///
    /// turmoil's listener has answered the SYN before the endpoint sees a connection, so the
    /// connect schedule acts on the connection it accepted, and records its decision: `accept`
    /// serves it; `refuse` closes it at once, unread (the client's connect succeeds, then its
    /// first read ends or its write fails); `blackhole` holds it open and never reads it, so
    /// the client waits on an answer that never comes. A step that resets closes with a FIN:
    /// turmoil sends RST only when a socket closes with data unread.
    pub async fn serve_turmoil(
        &self,
        listener: ::turmoil::net::TcpListener,
        ids: ConnIds,
    ) -> io::Result<()> {
        self.serve_on(listener, ids, None).await
    }

    /// [`serve_turmoil`](Self::serve_turmoil), noting refusals, black holes and resets in
    /// `signals` when given, for a connector that reads them.
    async fn serve_on(
        &self,
        listener: ::turmoil::net::TcpListener,
        ids: ConnIds,
        signals: Option<&Signals>,
    ) -> io::Result<()> {
        loop {
            let (stream, peer) = listener.accept().await?;
            let ends = Ends {
                client: peer,
                endpoint: stream.local_addr()?,
            };
            // A note on these ends is another connection's, which had the same ephemeral port
            // and whose client may have forgotten it before the note was written: this
            // connection starts without one.
            if let Some(signals) = signals {
                signals.forget(ends);
            }
            let conn_id = ids.next();
            let Some(action) = self.on_connect_if_up(conn_id) else {
                // The endpoint crashed and its host goes down at the next tick: the host
                // took the connection, and the crash resets it with the host's others, as
                // on the sim network a SYN arriving at a crash's instant is reset with it.
                // No process decided on it: nothing is consumed or recorded.
                if let Some(signals) = signals {
                    signals.reset(ends).reset();
                }
                drop(stream);
                continue;
            };
            match action {
                ConnectAction::Accept => {}
                // Dropped unread: the nearest a turmoil host comes to refusing it.
                ConnectAction::Refuse => {
                    if let Some(signals) = signals {
                        signals.note(ends, Signal::Refused);
                    }
                    drop(stream);
                    continue;
                }
                // Kept, unread, by a task that never ends, as a black hole keeps a SYN.
                ConnectAction::Blackhole => {
                    if let Some(signals) = signals {
                        signals.note(ends, Signal::Blackholed);
                    }
                    tokio::spawn(async move {
                        let _held = stream;
                        std::future::pending::<()>().await;
                    });
                    continue;
                }
            }
            let control: Arc<dyn ConnectionControl> = match signals {
                Some(signals) => Arc::new(signals.reset(ends)),
                None => Arc::new(NoReset),
            };
            // A crash of the host drops this task with its runtime: the connection is then
            // reset, as a crashed host's connections are.
            let crash = signals.map(|signals| ResetIfDropped(Some(signals.reset(ends))));
            let info = ConnInfo::new(conn_id, control);
            let endpoint = self.clone();
            // Boxed: the serving future, hyper's connection state included, is large.
            tokio::spawn(Box::pin(async move {
                let mut crash = crash;
                endpoint.serve(stream, info).await;
                if let Some(crash) = &mut crash {
                    crash.0 = None;
                }
            }));
        }
    }
}

/// Resets a connection when dropped, unless disarmed (its `Option` taken) first: the
/// serving task of a connection holds one, which it disarms when serving ends, so only a
/// task dropped unfinished with its host's runtime resets its connection.
struct ResetIfDropped(Option<NoteReset>);

impl Drop for ResetIfDropped {
    fn drop(&mut self) {
        if let Some(reset) = self.0.take() {
            reset.reset();
        }
    }
}
