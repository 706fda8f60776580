//! Opening a connection: SYN, the host's decision, and the reply one round trip later.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::time::Instant;

use super::failures::{run_ended, too_many_connections};
use super::timer::{TimerSlot, poll_until};
use super::{ConnId, ConnectAction, HostId, NetEvent, Network, Side, SimStream, SynOutcome};

/// Where a connect attempt is.
enum State {
    /// Unknown host (or a URI without one): fails on first poll.
    Failed(Option<io::Error>),
    /// The SYN is travelling to the host.
    Syn {
        conn: ConnId,
        host: HostId,
        syn_at: Instant,
        /// See [`Inner::syn_epoch`](super::state::Inner::syn_epoch).
        epoch: Option<u64>,
    },
    /// The host answered; the reply reaches the client at `reply_at`. `slot` is the
    /// connection for an accept, `None` for a refusal.
    Reply {
        conn: ConnId,
        host: HostId,
        reply_at: Instant,
        slot: Option<u32>,
    },
    /// The SYN was black-holed or lost: pending forever.
    Lost {
        conn: ConnId,
    },
    Done,
}

/// The future returned by [`Network::connect`].
///
/// The SYN reaches the host one way after the call; the host's
/// [`on_syn`](super::Host::on_syn) decides. On accept, the host gets its stream at SYN
/// arrival and this future completes one round trip after the call; on refuse, it fails with
/// `ConnectionRefused` after one round trip; on black-hole (or a partition) it never
/// completes. Dropping it before it completes logs [`NetEvent::ConnectAbandoned`] and, as a
/// real client kernel would, still delivers a SYN already sent and answers the host's
/// SYN-ACK with RST.
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Connect {
    net: Network,
    state: State,
    /// Moved into the client stream on success, so a connection allocates one timer, not two.
    timer: TimerSlot,
}

impl fmt::Debug for Connect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connect")
            .field("conn", &self.conn_id())
            .finish_non_exhaustive()
    }
}

/// What a SYN found at its host.
enum Arrival {
    Lost,
    Refused { reply_at: Instant },
    Accepted { slot: u32, reply_at: Instant },
}

/// Delivers a SYN to its host now: asks the host, and on accept creates the connection and
/// hands the host its end. The host is called without the lock held.
fn arrive_syn(net: &Network, conn: ConnId, host: HostId, epoch: Option<u64>) -> Arrival {
    let now = Instant::now();
    let handler = {
        let mut inner = net.lock();
        // Every SYN sent arrives here once, lost or not (an abandoned connect's too).
        inner.connecting = inner.connecting.saturating_sub(1);
        if inner.syn_lost(host, epoch) {
            let at = inner.ms(now);
            inner.events.push(NetEvent::SynArrived {
                at,
                conn,
                outcome: SynOutcome::Lost,
            });
            return Arrival::Lost;
        }
        if inner.host(host).down {
            // No process listens: the machine refuses without asking the host.
            let at = inner.ms(now);
            let reply_at = now + inner.latency(host, super::Dir::ServerToClient);
            inner.events.push(NetEvent::SynArrived {
                at,
                conn,
                outcome: SynOutcome::Down,
            });
            return Arrival::Refused { reply_at };
        }
        inner.host(host).handler.clone()
    };
    let decision = handler.on_syn(conn);
    let mut inner = net.lock();
    let at = inner.ms(now);
    let reply_at = now + inner.latency(host, super::Dir::ServerToClient);
    let outcome = match decision {
        ConnectAction::Accept => SynOutcome::Accept,
        ConnectAction::Refuse => SynOutcome::Refuse,
        ConnectAction::Blackhole => SynOutcome::Blackhole,
    };
    inner
        .events
        .push(NetEvent::SynArrived { at, conn, outcome });
    match decision {
        ConnectAction::Accept => {
            let slot = inner.open_conn(conn, host);
            drop(inner);
            handler.accept(
                conn,
                SimStream::new(net.clone(), slot, conn, host, Side::Server, None),
            );
            Arrival::Accepted { slot, reply_at }
        }
        ConnectAction::Refuse => Arrival::Refused { reply_at },
        ConnectAction::Blackhole => Arrival::Lost,
    }
}

/// A SYN whose connect future was dropped while it travelled: it still arrives, and an
/// accepted connection is reset by the client when the SYN-ACK reaches it.
async fn deliver_orphan_syn(
    net: Network,
    conn: ConnId,
    host: HostId,
    syn_at: Instant,
    epoch: Option<u64>,
) {
    tokio::time::sleep_until(syn_at).await;
    if let Arrival::Accepted { slot, reply_at } = arrive_syn(&net, conn, host, epoch) {
        net.lock().abandon_client(slot, conn, reply_at);
    }
}

impl Connect {
    pub(super) fn start(net: Network, host: &str) -> Connect {
        let now = Instant::now();
        let state = {
            let mut inner = net.lock();
            match inner.lookup(host) {
                // A client that kept its `Env` past the run.
                _ if inner.ended => State::Failed(Some(run_ended())),
                Err(e) => State::Failed(Some(e)),
                Ok(_) if inner.open_connections() >= inner.connection_cap => {
                    inner.refused_at_cap += 1;
                    State::Failed(Some(too_many_connections(inner.connection_cap)))
                }
                Ok(host) => {
                    inner.connecting += 1;
                    let conn = ConnId(inner.next_conn);
                    inner.next_conn += 1;
                    let at = inner.ms(now);
                    inner.events.push(NetEvent::ConnectStart { at, conn, host });
                    let syn_at = now + inner.latency(host, super::Dir::ClientToServer);
                    let epoch = inner.syn_epoch(host);
                    State::Syn {
                        conn,
                        host,
                        syn_at,
                        epoch,
                    }
                }
            }
        };
        Connect {
            net,
            state,
            timer: None,
        }
    }

    /// A connect that fails with `err` on first poll.
    pub(super) fn failed(net: Network, err: io::Error) -> Connect {
        Connect {
            net,
            state: State::Failed(Some(err)),
            timer: None,
        }
    }

    /// The connection id of this attempt (`None` if the host was unknown).
    pub(crate) fn conn_id(&self) -> Option<ConnId> {
        match self.state {
            State::Syn { conn, .. } | State::Reply { conn, .. } | State::Lost { conn } => {
                Some(conn)
            }
            State::Failed(_) | State::Done => None,
        }
    }
}

impl Future for Connect {
    type Output = io::Result<SimStream>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            match this.state {
                State::Failed(ref mut err) => {
                    let err = err
                        .take()
                        .unwrap_or_else(|| io::Error::other("connect polled after completion"));
                    this.state = State::Done;
                    return Poll::Ready(Err(err));
                }
                State::Syn {
                    conn,
                    host,
                    syn_at,
                    epoch,
                } => {
                    ready!(poll_until(&mut this.timer, syn_at, cx));
                    this.state = match arrive_syn(&this.net, conn, host, epoch) {
                        Arrival::Lost => State::Lost { conn },
                        Arrival::Refused { reply_at } => State::Reply {
                            conn,
                            host,
                            reply_at,
                            slot: None,
                        },
                        Arrival::Accepted { slot, reply_at } => State::Reply {
                            conn,
                            host,
                            reply_at,
                            slot: Some(slot),
                        },
                    };
                }
                State::Reply {
                    conn,
                    host,
                    reply_at,
                    slot,
                } => {
                    ready!(poll_until(&mut this.timer, reply_at, cx));
                    let mut inner = this.net.lock();
                    let entry = inner.host_mut(host);
                    if entry.partitioned {
                        // The reply is held like any segment; heal wakes us.
                        if !entry.heal_wakers.iter().any(|w| w.will_wake(cx.waker())) {
                            entry.heal_wakers.push(cx.waker().clone());
                        }
                        return Poll::Pending;
                    }
                    let at = inner.ms(Instant::now());
                    this.state = State::Done;
                    return Poll::Ready(match slot {
                        Some(slot) => {
                            inner.events.push(NetEvent::Connected { at, conn });
                            drop(inner);
                            Ok(SimStream::new(
                                this.net.clone(),
                                slot,
                                conn,
                                host,
                                Side::Client,
                                this.timer.take(),
                            ))
                        }
                        None => {
                            inner.events.push(NetEvent::Refused { at, conn });
                            Err(io::Error::new(
                                io::ErrorKind::ConnectionRefused,
                                "connection refused",
                            ))
                        }
                    });
                }
                State::Lost { .. } => return Poll::Pending,
                State::Done => {
                    return Poll::Ready(Err(io::Error::other("connect polled after completion")));
                }
            }
        }
    }
}

impl Drop for Connect {
    fn drop(&mut self) {
        let now = Instant::now();
        let state = std::mem::replace(&mut self.state, State::Done);
        let conn = match state {
            State::Failed(_) | State::Done => return,
            State::Syn { conn, .. } | State::Reply { conn, .. } | State::Lost { conn } => conn,
        };
        let mut inner = self.net.lock();
        let at = inner.ms(now);
        inner.events.push(NetEvent::ConnectAbandoned { at, conn });
        match state {
            State::Syn {
                conn,
                host,
                syn_at,
                epoch,
            } => {
                drop(inner);
                // The SYN is on the wire already. Spawning (rare: only abandoned connects)
                // keeps the host's view faithful; outside a runtime there is nothing to run it.
                if let Ok(handle) = tokio::runtime::Handle::try_current() {
                    handle.spawn(deliver_orphan_syn(
                        self.net.clone(),
                        conn,
                        host,
                        syn_at,
                        epoch,
                    ));
                }
            }
            State::Reply {
                conn,
                reply_at,
                slot: Some(slot),
                ..
            } => inner.abandon_client(slot, conn, reply_at.max(now)),
            _ => {}
        }
    }
}
