//! The turmoil backend: each endpoint a host of a `turmoil::Sim`, reached over
//! `turmoil::net` TCP (docs/architecture.md#the-turmoil-backend).
//!
//! turmoil gives every host a runtime of its own, all stepped together one tick at a time.
//! The endpoints' hosts serve with `retrylab_endpoints::turmoil::listen`; this module holds
//! the client's side, its connector. `run/turmoil.rs` builds the simulation and steps it.

use std::collections::BTreeSet;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::rt::TokioIo;
use retrylab_endpoints::turmoil::{Ends, PORT, Signal, Signals};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{LinkFault, LinkFaultRecord};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Records are only appended and taken: a poisoned lock still holds them consistently.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One tick of the simulation: every host's runtime advances by this much per step, and a
/// message is delivered at the first tick at or after its latency has passed.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// The endpoints of one run as turmoil hosts, as the client's side sees them.
#[derive(Clone)]
pub(crate) struct TurmoilNet {
    inner: Arc<Inner>,
}

struct Inner {
    /// The endpoints' names, which are their hosts' names, with the one-way latency of
    /// the link from the client's host to each.
    links: Vec<(String, Duration)>,
    /// The longest one-way latency of any link: how long a request written just now may
    /// take to reach its endpoint.
    longest_latency: Duration,
    ended: AtomicBool,
    /// Links held now (`turmoil.hold`), set by the stepping thread between steps.
    holding: AtomicUsize,
    /// The turmoil-native faults applied so far.
    faults: Mutex<Vec<LinkFaultRecord>>,
    /// What the endpoints did to connections that turmoil's TCP does not show.
    signals: Signals,
    /// The endpoints whose hosts are crashed now, set by the stepping thread between steps.
    down: Mutex<BTreeSet<String>>,
}

impl TurmoilNet {
    /// The client's view of endpoints reached over `links`, whose hosts note in `signals`
    /// what turmoil's TCP does not carry.
    pub(crate) fn new(
        links: Vec<(String, Duration)>,
        longest_latency: Duration,
        signals: Signals,
    ) -> TurmoilNet {
        TurmoilNet {
            inner: Arc::new(Inner {
                links,
                longest_latency,
                ended: AtomicBool::new(false),
                holding: AtomicUsize::new(0),
                faults: Mutex::new(Vec::new()),
                signals,
                down: Mutex::new(BTreeSet::new()),
            }),
        }
    }

    /// From now on every connect fails, saying the run has ended.
    pub(crate) fn end_run(&self) {
        self.inner.ended.store(true, Ordering::Release);
    }

    /// Whether [`end_run`](Self::end_run) was called.
    pub(crate) fn run_ended(&self) -> bool {
        self.inner.ended.load(Ordering::Acquire)
    }

    /// Records `fault` on `endpoint`'s link at `at_ms`, and counts the links held.
    pub(crate) fn record(&self, at_ms: u64, endpoint: &str, fault: LinkFault) {
        match fault {
            LinkFault::Held => {
                self.inner.holding.fetch_add(1, Ordering::AcqRel);
            }
            LinkFault::Released => {
                self.inner.holding.fetch_sub(1, Ordering::AcqRel);
            }
            LinkFault::Crashed => {
                lock(&self.inner.down).insert(endpoint.to_owned());
            }
            LinkFault::Bounced => {
                lock(&self.inner.down).remove(endpoint);
            }
            LinkFault::Partitioned | LinkFault::Repaired => {}
        }
        lock(&self.inner.faults).push(LinkFaultRecord {
            at_ms,
            endpoint: endpoint.to_owned(),
            fault,
        });
    }

    /// Whether `endpoint`'s host is crashed now.
    fn is_down(&self, endpoint: &str) -> bool {
        lock(&self.inner.down).contains(endpoint)
    }

    /// Whether a link is held now.
    pub(crate) fn holding(&self) -> bool {
        self.inner.holding.load(Ordering::Acquire) > 0
    }

    /// The faults recorded, moved out.
    pub(crate) fn take_faults(&self) -> Vec<LinkFaultRecord> {
        std::mem::take(&mut *lock(&self.inner.faults))
    }

    /// How long settling waits with every endpoint idle before it believes nothing more is
    /// coming: turmoil's queues cannot be read from a host, so the longest latency of a
    /// link, and two ticks for a message delivered at the tick after it became due.
    pub(crate) fn crossing(&self) -> Duration {
        self.inner.longest_latency + 2 * TICK
    }
}

/// Connects to the run's endpoints over `turmoil::net`: `http://api/...` reaches the host of
/// endpoint `api`.
#[derive(Clone)]
pub(crate) struct TurmoilConnector {
    net: TurmoilNet,
}

impl TurmoilConnector {
    pub(crate) fn new(net: TurmoilNet) -> TurmoilConnector {
        TurmoilConnector { net }
    }

    /// Whether the run has ended (every connect fails from then on).
    pub(crate) fn run_ended(&self) -> bool {
        self.net.run_ended()
    }

    /// The endpoint `uri` names, from the run's own list of endpoint hosts, with its link's
    /// latency. turmoil 0.7.2's own lookup would also fail an unknown name with `NotFound`
    /// ("no ip address found"); failing here says it is not an endpoint of the scenario.
    fn target(&self, uri: &Uri) -> io::Result<Target> {
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the URI has no host"))?;
        let link = self.net.inner.links.iter().find(|(name, _)| name == host);
        match link {
            Some((name, latency)) => Ok(Target {
                host: name.clone(),
                port: uri.port_u16().unwrap_or(PORT),
                latency: *latency,
            }),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{host}` is not an endpoint of the scenario"),
            )),
        }
    }
}

/// Where a connect goes, and the one-way latency of its link.
struct Target {
    host: String,
    port: u16,
    latency: Duration,
}

impl tower_service::Service<Uri> for TurmoilConnector {
    type Response = TokioIo<TurmoilStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<TokioIo<TurmoilStream>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let target = if self.run_ended() {
            Err(crate::backend::run_ended_error())
        } else {
            self.target(&uri)
        };
        let net = self.net.clone();
        Box::pin(async move {
            let target = target?;
            let signals = net.inner.signals.clone();
            let connect = turmoil::net::TcpStream::connect((target.host.as_str(), target.port));
            let mut connect = std::pin::pin!(connect);
            // turmoil keeps what is sent to a crashed host on the link until the host is
            // bounced, where a crashed host's kernel would answer a SYN with an RST. So the
            // SYN's arrival is watched: a host down when it arrives refuses it, and the RST
            // takes the link's latency back. Biased: a connect the host answered in the
            // step in which the SYN arrived wins over the watch.
            let arrival = tokio::time::sleep(target.latency);
            let stream = tokio::select! {
                biased;
                // Made at the instant its endpoint crashed too (its host goes down a tick
                // later): the endpoint's host noted a reset on it, which the stream reads
                // where the SYN-ACK would have come back, as on the sim network.
                made = &mut connect => made?,
                () = arrival => {
                    if net.is_down(&target.host) {
                        tokio::time::sleep(target.latency).await;
                        return Err(io::Error::new(
                            io::ErrorKind::ConnectionRefused,
                            format!("endpoint `{}`'s host is down", target.host),
                        ));
                    }
                    connect.await?
                }
            };
            let ends = Ends {
                client: stream.local_addr()?,
                endpoint: stream.peer_addr()?,
            };
            // turmoil answers a SYN through a channel, not over the link: the connect
            // returns as the SYN arrives. The SYN-ACK's crossing back is waited for here, so
            // that a connect costs a round trip, as on the sim network and on a real one.
            // The wait does not read the link's state: a hold or a partition that begins
            // after the SYN arrived does not touch this return trip (docs/architecture.md,
            // the turmoil backend's latency).
            tokio::time::sleep(target.latency).await;
            // The endpoint decided on the connection as its SYN arrived; what turmoil's
            // handshake cannot say arrives here, where the RST or the silence would have.
            match signals.read(ends) {
                Some(Signal::Refused) => {
                    signals.forget(ends);
                    Err(io::Error::new(
                        io::ErrorKind::ConnectionRefused,
                        format!("endpoint `{}` refused the connection", target.host),
                    ))
                }
                Some(Signal::Blackholed) => {
                    // The stream stays open until the client gives up on the connect.
                    let _held = TurmoilStream::new(stream, ends, signals);
                    std::future::pending().await
                }
                _ => Ok(TokioIo::new(TurmoilStream::new(stream, ends, signals))),
            }
        })
    }
}

/// A connection to an endpoint's host over `turmoil::net`, which reads the end of the stream
/// as a reset when the endpoint reset the connection (turmoil carries that reset as a FIN:
/// see `retrylab_endpoints::turmoil::Signals`).
#[derive(Debug)]
pub(crate) struct TurmoilStream {
    stream: turmoil::net::TcpStream,
    ends: Ends,
    signals: Signals,
}

impl TurmoilStream {
    fn new(stream: turmoil::net::TcpStream, ends: Ends, signals: Signals) -> TurmoilStream {
        TurmoilStream {
            stream,
            ends,
            signals,
        }
    }

    /// The error of a connection the endpoint reset.
    fn reset(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::ConnectionReset,
            "the endpoint reset the connection",
        )
    }
}

impl Drop for TurmoilStream {
    fn drop(&mut self) {
        self.signals.forget(self.ends);
    }
}

impl AsyncRead for TurmoilStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        // The end of the stream, read into room for more: the endpoint's FIN, which stands
        // for an RST when the endpoint reset the connection.
        let at_end = buf.filled().len() == before && buf.remaining() > 0;
        match read {
            Poll::Ready(Ok(()))
                if at_end && this.signals.read(this.ends) == Some(Signal::Reset) =>
            {
                Poll::Ready(Err(this.reset()))
            }
            other => other,
        }
    }
}

impl AsyncWrite for TurmoilStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
