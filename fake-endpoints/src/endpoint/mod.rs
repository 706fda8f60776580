//! The endpoint: one scripted HTTP endpoint, what its clones share, and how it is made.
//!
//! The rest of its work is split by what happens to a connection attempt or a request:
//!
//! - `on_connect`: the connection hook, the connect schedule's decision on each attempt;
//! - `admission`: a request's arrival: the gate, the bucket and the broker in front, routing,
//!   dedupe, script consumption, the request record and an arrival commit;
//! - `route_state`: each route's steps, its draws and the responses rendered in advance;
//! - `task`: the response path, the detached task that waits out a step's latency, commits
//!   before the response and hands the outcome to the connection;
//! - `commit`: an effect (and a broker's message) recorded, unless dedupe says it is not new;
//! - `process`: the endpoint's process, which crashes and restarts.
//!
//! Serving connections (`Endpoint::serve` and the listeners) is the `server` folder's.

pub(crate) mod admission;
mod commit;
mod on_connect;
mod process;
mod route_state;
pub(crate) mod task;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use http::{HeaderName, StatusCode};
use tokio::sync::Notify;

use crate::config::{EndpointConfig, KeepAlive, Protocol};
use crate::http::response::SentResponse;
use crate::kinds::broker::Broker;
use crate::kinds::dedupe::DedupeTable;
use crate::kinds::rate_limiter::Limiter;
use crate::ledger::Ledger;
use crate::script::connect::ConnectSchedule;
use crate::script::crash::Lives;
use crate::script::gate::Gate;
use route_state::RouteState;

/// A scripted HTTP endpoint. Cheap to clone (all clones share state); `Send + Sync`.
///
/// The harness calls [`Endpoint::on_connect`] for each connection attempt and, for accepted
/// ones, [`Endpoint::serve`] with the connection's stream. Everything the endpoint sees and does
/// lands in its [`Ledger`].
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, Empty};
/// use hyper_util::rt::TokioIo;
/// use retrylab_endpoints::{ConnInfo, Endpoint, EndpointConfig, Step, VirtualClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let endpoint = Endpoint::new(
///     EndpointConfig::http("api").script([Step::status(503).times(2), Step::status(200).body("ok")]),
///     VirtualClock::new(),
/// );
///
/// // The harness would hand over its own in-memory TCP stream; a duplex pipe will do here.
/// let (client_io, server_io) = tokio::io::duplex(64 * 1024);
/// let server = endpoint.clone();
/// tokio::spawn(async move { server.serve(server_io, ConnInfo::without_reset(1)).await });
///
/// let (mut client, conn) = hyper::client::conn::http1::handshake(TokioIo::new(client_io)).await.unwrap();
/// tokio::spawn(conn);
/// let mut statuses = Vec::new();
/// for _ in 0..3 {
///     let request = http::Request::get("/orders").body(Empty::<Bytes>::new()).unwrap();
///     let response = client.send_request(request).await.unwrap();
///     statuses.push(response.status().as_u16());
///     response.into_body().collect().await.unwrap();
/// }
/// assert_eq!(statuses, [503, 503, 200]);
/// assert_eq!(endpoint.ledger().requests_received(), 3);
/// assert_eq!(endpoint.ledger().effect_count(), 1); // the 2xx committed
/// # }
/// ```
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    name: String,
    /// The HTTP versions its connections are served with.
    pub(crate) protocol: Protocol,
    pub(crate) keep_alive: KeepAlive,
    /// HTTP/2's `SETTINGS_MAX_CONCURRENT_STREAMS`, when the endpoint sets one.
    pub(crate) max_concurrent_streams: Option<u32>,
    key_header: Option<HeaderName>,
    dedupe_header: Option<HeaderName>,
    /// The clock the endpoint was made with: what it reads until its host comes back on a
    /// runtime of its own (a bounced turmoil host). A plain copy, so that the simulated path,
    /// which reads it several times per request, takes no lock for it.
    clock: crate::VirtualClock,
    /// Set once the endpoint follows another clock (kept in `followed`): read before the
    /// lock, which only an endpoint that has followed one takes.
    follows: AtomicBool,
    /// The clock of the runtime the endpoint's host came back on last (`clock` until then).
    followed: Mutex<crate::VirtualClock>,
    pub(crate) ledger: Ledger,
    not_found: Arc<SentResponse>,
    state: Mutex<State>,
    /// Step tasks spawned and not finished: requests whose answer, and maybe whose commit,
    /// is still to come.
    steps_in_progress: AtomicUsize,
    /// Woken when the last step in progress finishes.
    idle: Notify,
    /// Decides which requests reach the routes at all (none: every one does).
    gate: Option<Arc<dyn Gate>>,
    /// Crashes end a life; a step runs only while the life it was admitted in lasts.
    pub(crate) lives: Lives,
    /// Set on a message broker: only sends reach the routes, and commits store messages.
    broker: Option<Broker>,
    /// Whether responses carry a `Date` header (`EndpointConfig::date_header`).
    pub(crate) date_header: bool,
}

impl Inner {
    /// The clock the endpoint times its records with.
    pub(crate) fn clock(&self) -> crate::VirtualClock {
        if !self.follows.load(Ordering::Acquire) {
            return self.clock;
        }
        // A clock is copied in and out whole: a poisoned lock still holds a whole one. The
        // flag is set after the clock is stored, so the lock holds the one followed.
        *self.followed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What an endpoint changes as it serves, behind one lock.
struct State {
    routes: Vec<RouteState>,
    connect: ConnectSchedule,
    dedupe: Option<DedupeTable>,
    /// The token buckets in front of the routes, if the endpoint is a rate limiter.
    limiter: Option<Limiter>,
    /// Crashed and not restarted yet: no process to admit a request or take a connection.
    down: bool,
}

impl Endpoint {
    /// An endpoint running `config`, timing its records with `clock`.
    pub fn new(config: EndpointConfig, clock: crate::VirtualClock) -> Self {
        Self::build(config, clock, None)
    }

    /// Like [`new`](Endpoint::new), with a [`Gate`] that decides which requests reach the
    /// routes: a refused request is neither recorded nor answered (see [`Gate`] for an
    /// example).
    pub fn with_gate(
        config: EndpointConfig,
        clock: crate::VirtualClock,
        gate: Arc<dyn Gate>,
    ) -> Self {
        Self::build(config, clock, Some(gate))
    }

    fn build(
        config: EndpointConfig,
        clock: crate::VirtualClock,
        gate: Option<Arc<dyn Gate>>,
    ) -> Self {
        let key_header = config.effective_key_header().cloned();
        let EndpointConfig {
            name,
            protocol,
            routes,
            connect,
            keep_alive,
            dedupe,
            key_header: _,
            rate_limit,
            broker,
            date_header,
            max_concurrent_streams,
        } = config;
        let dedupe_header = dedupe.as_ref().map(|d| d.header.clone());
        let routes = routes.into_iter().map(RouteState::new).collect();
        Self {
            inner: Arc::new(Inner {
                name,
                protocol,
                keep_alive,
                max_concurrent_streams,
                key_header,
                dedupe_header,
                clock,
                follows: AtomicBool::new(false),
                followed: Mutex::new(clock),
                ledger: Ledger::new(),
                not_found: Arc::new(SentResponse::status_only(StatusCode::NOT_FOUND)),
                state: Mutex::new(State {
                    routes,
                    connect: ConnectSchedule::new(connect),
                    dedupe: dedupe.map(DedupeTable::new),
                    limiter: rate_limit.map(Limiter::new),
                    down: false,
                }),
                steps_in_progress: AtomicUsize::new(0),
                idle: Notify::new(),
                gate,
                lives: Lives::default(),
                broker,
                date_header,
            }),
        }
    }

    /// The endpoint's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The number of requests still being processed: admitted, with their step's latency,
    /// commit or answer still to come.
    pub fn steps_in_progress(&self) -> usize {
        self.inner.steps_in_progress.load(Ordering::Acquire)
    }

    /// Resolves once no request is being processed: every admitted request's step has run
    /// (its commit, if any, is in the ledger). A request admitted later starts a new wait.
    pub async fn idle(&self) {
        loop {
            // Registered before the count is read, so a step that finishes in between still
            // wakes this wait.
            let notified = self.inner.idle.notified();
            if self.steps_in_progress() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// The endpoint's ledger (a shared handle).
    pub fn ledger(&self) -> Ledger {
        self.inner.ledger.clone()
    }

    /// The endpoint's clock.
    pub fn clock(&self) -> crate::VirtualClock {
        self.inner.clock()
    }

    /// From now on the endpoint times its records with `clock`: the clock of the runtime its
    /// host came back on, reading the same virtual time as the one it replaces. The ledger
    /// and the scripts are untouched.
    #[cfg(feature = "turmoil")]
    pub(crate) fn follow_clock(&self, clock: crate::VirtualClock) {
        *self
            .inner
            .followed
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = clock;
        self.inner.follows.store(true, Ordering::Release);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
