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

use super::link_fault::{LinkFault, LinkFaultRecord};
use crate::rng::Stream;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Records are only appended and taken: a poisoned lock still holds them consistently.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One tick of the simulation: every host's runtime advances by this much per step, and a
/// message is delivered at the first tick at or after its latency has passed.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// How long a message takes to cross a link between the client's host and an endpoint's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkLatency {
    /// Every message takes this long (turmoil's minimum and maximum latency alike).
    Fixed(Duration),
    /// `turmoil.latency: { exponential: { mean, max } }`: turmoil draws each message's
    /// latency as `floor(max * x)` milliseconds, capped at `max`, with `x` exponential of
    /// rate `max / mean`, which is an exponential of mean `mean` truncated to whole
    /// milliseconds and capped.
    Exponential {
        /// The mean latency.
        mean: Duration,
        /// The cap, turmoil's maximum message latency.
        max: Duration,
    },
}

impl LinkLatency {
    /// The longest a crossing can take.
    pub(crate) fn longest(self) -> Duration {
        match self {
            LinkLatency::Fixed(latency) => latency,
            LinkLatency::Exponential { max, .. } => max,
        }
    }

    /// One crossing's latency, drawn from `draws` with the distribution turmoil draws a
    /// message's latency from: an exponential of mean `mean` in milliseconds, truncated to
    /// whole milliseconds as turmoil truncates, capped at `max`. A fixed latency draws
    /// nothing.
    fn draw(self, draws: &Mutex<Stream>) -> Duration {
        match self {
            LinkLatency::Fixed(latency) => latency,
            LinkLatency::Exponential { mean, max } => {
                let x = lock(draws).exponential(mean.as_millis() as f64);
                // `as` saturates: a draw past `u64::MAX` milliseconds is capped below anyway.
                Duration::from_millis(libm::floor(x) as u64).min(max)
            }
        }
    }
}

/// The label of the stream the connector draws the SYN-ACK's return trip on the link to
/// `endpoint` from, when `turmoil.latency` is drawn.
pub(crate) fn return_trip_label(endpoint: &str) -> String {
    format!("turmoil/{endpoint}/syn-ack")
}

/// The link from the client's host to one endpoint's.
struct Link {
    /// The endpoint's name, which is its host's name.
    name: String,
    latency: LinkLatency,
    /// The SYN-ACKs' return trips are drawn from here, in the order the connects' SYNs
    /// arrive, which the client's host makes the same on every run.
    return_trips: Mutex<Stream>,
}

/// The endpoints of one run as turmoil hosts, as the client's side sees them.
#[derive(Clone)]
pub(crate) struct TurmoilNet {
    inner: Arc<Inner>,
}

struct Inner {
    /// The links from the client's host to each endpoint's.
    links: Vec<Link>,
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
    /// The client's view of endpoints reached over `links` (each endpoint's name with its
    /// link's latency), whose hosts note in `signals` what turmoil's TCP does not carry; a
    /// drawn latency's return trips come from `seed`'s [`return_trip_label`] streams.
    pub(crate) fn new(
        links: Vec<(String, LinkLatency)>,
        longest_latency: Duration,
        seed: u64,
        signals: Signals,
    ) -> TurmoilNet {
        let links = links
            .into_iter()
            .map(|(name, latency)| Link {
                return_trips: Mutex::new(Stream::new(seed, &return_trip_label(&name))),
                name,
                latency,
            })
            .collect();
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
    /// link (a drawn latency's cap), and two ticks for a message delivered at the tick after
    /// it became due.
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
        let link = self
            .net
            .inner
            .links
            .iter()
            .position(|link| link.name == host);
        match link {
            Some(link) => Ok(Target {
                host: host.to_owned(),
                port: uri.port_u16().unwrap_or(PORT),
                link,
            }),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{host}` is not an endpoint of the scenario"),
            )),
        }
    }
}

/// Where a connect goes, and its link (an index of the net's links).
struct Target {
    host: String,
    port: u16,
    link: usize,
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
            let link = net.inner.links.get(target.link).ok_or_else(|| {
                io::Error::other(format!("no link to endpoint `{}`", target.host))
            })?;
            let signals = net.inner.signals.clone();
            let connect = turmoil::net::TcpStream::connect((target.host.as_str(), target.port));
            let mut connect = std::pin::pin!(connect);
            // turmoil keeps what is sent to a crashed host on the link until the host is
            // bounced, where a crashed host's kernel would answer a SYN with an RST. So the
            // SYN's arrival is watched: a host down when it arrives refuses it, and the RST
            // takes the link's latency back. Biased: a connect the host answered in the
            // step in which the SYN arrived wins over the watch. A drawn latency comes with no
            // crash (validation refuses the two together): its watch waits out the cap.
            let arrival = tokio::time::sleep(link.latency.longest());
            let stream = tokio::select! {
                biased;
                // Made at the instant its endpoint crashed too (its host goes down a tick
                // later): the endpoint's host noted a reset on it, which the stream reads
                // where the SYN-ACK would have come back, as on the sim network.
                made = &mut connect => made?,
                () = arrival => {
                    if net.is_down(&target.host) {
                        tokio::time::sleep(link.latency.longest()).await;
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
            // the turmoil backend's latency). A drawn latency draws it as turmoil would a
            // message's, from the link's own substream, so no other draw moves.
            tokio::time::sleep(link.latency.draw(&link.return_trips)).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawn_return_trip_truncates_to_whole_milliseconds_and_stays_under_the_cap() {
        let latency = LinkLatency::Exponential {
            mean: Duration::from_millis(20),
            max: Duration::from_millis(80),
        };
        let draws = Mutex::new(Stream::new(7, &return_trip_label("api")));
        let mut expected = Stream::new(7, &return_trip_label("api"));
        let mut capped = 0;
        for _ in 0..2000 {
            let drawn = latency.draw(&draws);
            // The same exponential, truncated as turmoil truncates a message's latency.
            let x = expected.exponential(20.0);
            let truncated = Duration::from_millis(x.floor() as u64);
            assert_eq!(drawn, truncated.min(Duration::from_millis(80)));
            assert!(drawn <= latency.longest());
            if drawn == Duration::from_millis(80) {
                capped += 1;
            }
        }
        // e^-4 of the draws, about 37 of 2000, reach the cap.
        assert!((10..80).contains(&capped), "{capped} capped");
    }

    #[test]
    fn a_fixed_latency_draws_nothing() {
        let draws = Mutex::new(Stream::new(7, "x"));
        let latency = LinkLatency::Fixed(Duration::from_millis(25));
        assert_eq!(latency.draw(&draws), Duration::from_millis(25));
        assert_eq!(
            lock(&draws).next_u64(),
            Stream::new(7, "x").next_u64(),
            "the stream moved"
        );
    }
}
