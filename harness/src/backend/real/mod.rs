//! The real backend: the scenario's endpoints on TCP listeners at 127.0.0.1, in real time,
//! for clients with a network stack of their own (docs/architecture.md#the-real-backend).
//!
//! The endpoints run on a thread of their own with its own runtime, so a client that blocks
//! its thread (a subprocess waited for, a blocking HTTP client) still gets its answers, and
//! the instants the endpoints record are not delayed by the client's work.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use http::Uri;
use hyper_util::rt::TokioIo;
use retrylab_endpoints::{ConnIds, Endpoint};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Where endpoints listen unless told otherwise: loopback only, so a run never exposes an
/// endpoint to the network.
pub(crate) const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The real wall clock now, in milliseconds since the Unix epoch: read once as a run on real
/// sockets starts, and that run's wall clock from then on (its `epoch`), so that a real
/// client comparing an HTTP-date `Retry-After` or a `Date` with its own clock finds them
/// where the server meant them. Never read on the simulated path, whose wall clock is the
/// scenario's `epoch` so that its traces stay the same from run to run.
pub(crate) fn wall_clock_unix_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The endpoints of one run on real sockets, and the thread serving them.
#[derive(Clone)]
pub(crate) struct RealNet {
    inner: Arc<Inner>,
}

struct Inner {
    /// Each endpoint's name and listening address, in the scenario's order.
    addresses: Vec<(String, SocketAddr)>,
    /// The endpoints served, in the same order.
    endpoints: Vec<Endpoint>,
    ended: AtomicBool,
    /// Tells the serving thread to stop; taken when it is told.
    stop: Mutex<Option<oneshot::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl RealNet {
    /// Binds one listener per endpoint on `ip`, port 0 (the kernel picks a free port), and
    /// serves them on a thread of its own until [`end_run`](Self::end_run).
    pub(crate) fn start(endpoints: &[(String, Endpoint)], ip: IpAddr) -> io::Result<RealNet> {
        let mut listeners = Vec::with_capacity(endpoints.len());
        let mut addresses = Vec::with_capacity(endpoints.len());
        for (name, endpoint) in endpoints {
            let listener = std::net::TcpListener::bind((ip, 0))?;
            listener.set_nonblocking(true)?;
            addresses.push((name.clone(), listener.local_addr()?));
            listeners.push((endpoint.clone(), listener));
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, started) = std::sync::mpsc::channel::<io::Result<()>>();
        let thread = std::thread::Builder::new()
            .name("retrylab-endpoints".to_owned())
            .spawn(move || serve(listeners, stopped, &ready))?;
        match started.recv() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(error),
            Err(_) => {
                return Err(io::Error::other(
                    "the thread serving the endpoints ended before it started serving",
                ));
            }
        }
        Ok(RealNet {
            inner: Arc::new(Inner {
                addresses,
                endpoints: endpoints.iter().map(|(_, e)| e.clone()).collect(),
                ended: AtomicBool::new(false),
                stop: Mutex::new(Some(stop)),
                thread: Mutex::new(Some(thread)),
            }),
        })
    }

    /// The address endpoint `name` listens on.
    pub(crate) fn address(&self, name: &str) -> Option<SocketAddr> {
        self.inner
            .addresses
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, address)| *address)
    }

    /// Every endpoint's name and address, in the scenario's order.
    pub(crate) fn addresses(&self) -> &[(String, SocketAddr)] {
        &self.inner.addresses
    }

    /// The endpoints served, in the scenario's order.
    pub(crate) fn endpoints(&self) -> &[Endpoint] {
        &self.inner.endpoints
    }

    /// Stops serving: the listeners close and every open connection is dropped. Waits for
    /// the serving thread, so nothing is recorded in a ledger after this returns.
    pub(crate) fn end_run(&self) {
        self.inner.ended.store(true, Ordering::Release);
        self.inner.stop_serving();
        let thread = lock(&self.inner.thread).take();
        if let Some(thread) = thread {
            // A panic there is the harness's own bug; the run still reports what it has.
            let _ = thread.join();
        }
    }

    /// Whether [`end_run`](Self::end_run) was called.
    pub(crate) fn run_ended(&self) -> bool {
        self.inner.ended.load(Ordering::Acquire)
    }
}

impl Inner {
    fn stop_serving(&self) {
        if let Some(stop) = lock(&self.stop).take() {
            // The thread may be gone already: then it has stopped.
            let _ = stop.send(());
        }
    }
}

impl Drop for Inner {
    /// A run that ended without `end_run` (a panic in the harness) still stops serving.
    fn drop(&mut self) {
        self.stop_serving();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Each value is taken once; a poisoned lock still holds it consistently.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The serving thread: a current-thread runtime on real time with every listener's accept
/// loop, until `stopped` fires; then every task (connections, steps) is dropped.
fn serve(
    listeners: Vec<(Endpoint, std::net::TcpListener)>,
    stopped: oneshot::Receiver<()>,
    ready: &std::sync::mpsc::Sender<io::Result<()>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    runtime.block_on(async move {
        let ids = ConnIds::new();
        for (endpoint, listener) in listeners {
            match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => {
                    let ids = ids.clone();
                    tokio::spawn(async move { endpoint.serve_tcp(listener, ids).await });
                }
                Err(error) => {
                    let _ = ready.send(Err(error));
                    return;
                }
            }
        }
        let _ = ready.send(Ok(()));
        // A dropped sender (the run is gone) stops serving too.
        let _ = stopped.await;
    });
    runtime.shutdown_background();
}

/// Connects to the run's endpoints over TCP: `http://api/...` reaches endpoint `api`, and
/// an address the run listens on (`http://127.0.0.1:<port>`) reaches its endpoint.
#[derive(Clone)]
pub(crate) struct RealConnector {
    net: RealNet,
}

impl RealConnector {
    pub(crate) fn new(net: RealNet) -> RealConnector {
        RealConnector { net }
    }

    /// Whether the run has ended (every connect fails from then on).
    pub(crate) fn run_ended(&self) -> bool {
        self.net.run_ended()
    }

    fn target(&self, uri: &Uri) -> io::Result<SocketAddr> {
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the URI has no host"))?;
        if let Some(address) = self.net.address(host) {
            return Ok(address);
        }
        let listening = self.net.addresses().iter().find(|(_, address)| {
            uri.port_u16() == Some(address.port())
                && host.trim_matches(['[', ']']).parse::<IpAddr>().ok() == Some(address.ip())
        });
        match listening {
            Some((_, address)) => Ok(*address),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "`{host}` is neither an endpoint of the scenario nor an address one listens on"
                ),
            )),
        }
    }
}

impl tower_service::Service<Uri> for RealConnector {
    type Response = TokioIo<TcpStream>;
    type Error = io::Error;
    type Future = std::pin::Pin<Box<dyn Future<Output = io::Result<TokioIo<TcpStream>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let target = if self.run_ended() {
            Err(crate::backend::run_ended_error())
        } else {
            self.target(&uri)
        };
        Box::pin(async move {
            let stream = TcpStream::connect(target?).await?;
            // Requests leave whole, as the endpoints' answers do.
            stream.set_nodelay(true)?;
            Ok(TokioIo::new(stream))
        })
    }
}
