//! Timing and semantics tests of the simulated network, on a paused current-thread runtime.

use std::convert::Infallible;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, sleep_until, timeout};

use super::failures::MAX_OPEN_CONNECTIONS;
use super::*;

const L: Duration = Duration::from_millis(250);

/// A host whose decision tests can change, handing accepted streams to the test.
struct ChanHost {
    decision: Mutex<ConnectAction>,
    tx: mpsc::UnboundedSender<(u64, SimStream)>,
    start: Instant,
}

impl Host for ChanHost {
    fn on_syn(&self, _conn: ConnId) -> ConnectAction {
        *self.decision.lock().unwrap()
    }
    fn accept(&self, _conn: ConnId, stream: SimStream) {
        let at = Instant::now().duration_since(self.start).as_millis() as u64;
        self.tx.send((at, stream)).unwrap();
    }
}

struct Fixture {
    net: Network,
    host: Arc<ChanHost>,
    accepted: mpsc::UnboundedReceiver<(u64, SimStream)>,
    start: Instant,
}

impl Fixture {
    fn new(decision: ConnectAction) -> Fixture {
        let start = Instant::now();
        let net = Network::new(start, L);
        let (tx, accepted) = mpsc::unbounded_channel();
        let host = Arc::new(ChanHost {
            decision: Mutex::new(decision),
            tx,
            start,
        });
        net.add_host("api", host.clone());
        Fixture {
            net,
            host,
            accepted,
            start,
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Connects and returns (client, server), asserting the standard timeline.
    async fn pair(&mut self) -> (SimStream, SimStream) {
        let t0 = self.net.now_ms();
        let client = self.net.connect("api").await.unwrap();
        assert_eq!(self.net.now_ms(), t0 + 500);
        let (at, server) = self.accepted.recv().await.unwrap();
        assert_eq!(at, t0 + 250);
        (client, server)
    }
}

/// Reads once, returning what was read and when.
async fn read_at(
    net: &Network,
    s: &mut SimStream,
    max: usize,
) -> (Result<Vec<u8>, io::ErrorKind>, u64) {
    let mut buf = vec![0u8; max];
    let r = s
        .read(&mut buf)
        .await
        .map(|n| buf[..n].to_vec())
        .map_err(|e| e.kind());
    (r, net.now_ms())
}

fn kind<T: std::fmt::Debug>(r: io::Result<T>) -> io::ErrorKind {
    r.unwrap_err().kind()
}

/// A segment event: `times` is (`sent_at`, `deliver_at`), `bytes` is (offset, len).
fn seg(
    conn: u64,
    dir: Dir,
    seq: u32,
    times: (u64, u64),
    bytes: (u64, u32),
    kind: SegmentKind,
) -> NetEvent {
    NetEvent::Segment(SegmentEvent {
        conn: ConnId(conn),
        dir,
        seq,
        sent_at: times.0,
        deliver_at: times.1,
        offset: bytes.0,
        len: bytes.1,
        kind,
    })
}

use Dir::{ClientToServer as C2S, ServerToClient as S2C};
use SegmentKind::{Data, Fin, Rst};

#[test]
fn network_and_streams_are_send_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    fn assert_unpin<T: Unpin>() {}
    assert_send_sync::<Network>();
    assert_send_sync::<SimStream>();
    assert_send_sync::<ResetHandle>();
    assert_send_sync::<SimConnector>();
    assert_send_sync::<Connect>();
    assert_send_sync::<NetLog>();
    assert_unpin::<SimStream>();
    assert_unpin::<Connect>();
}

#[tokio::test(start_paused = true)]
async fn connect_takes_one_round_trip_and_data_one_way() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    assert_eq!((client.conn_id(), client.side()), (ConnId(1), Side::Client));
    assert_eq!((server.conn_id(), server.side()), (ConnId(1), Side::Server));

    client.write_all(b"hello").await.unwrap();
    // A small buffer reads the segment in pieces, all at its delivery instant.
    assert_eq!(read_at(&f.net, &mut server, 2).await.0.unwrap(), b"he");
    assert_eq!(f.net.now_ms(), 750);
    assert_eq!(read_at(&f.net, &mut server, 16).await.0.unwrap(), b"llo");

    sleep(Duration::from_millis(100)).await;
    server.write_all(b"world").await.unwrap();
    assert_eq!(
        read_at(&f.net, &mut client, 16).await,
        (Ok(b"world".to_vec()), 1100)
    );

    let log = f.net.log();
    let host = f.net.host_id("api").unwrap();
    assert_eq!(log.host_name(host), Some("api"));
    assert_eq!(
        log.events(),
        &[
            NetEvent::ConnectStart {
                at: 0,
                conn: ConnId(1),
                host
            },
            NetEvent::SynArrived {
                at: 250,
                conn: ConnId(1),
                outcome: SynOutcome::Accept
            },
            NetEvent::Connected {
                at: 500,
                conn: ConnId(1)
            },
            seg(1, C2S, 0, (500, 750), (0, 5), Data),
            seg(1, S2C, 0, (850, 1100), (0, 5), Data),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn segments_keep_order_when_latency_drops() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    client.write_all(b"slow").await.unwrap();
    f.net
        .set_latency("api", Duration::from_millis(10), L)
        .unwrap();
    client.write_all(b"fast").await.unwrap();
    client.shutdown().await.unwrap();
    let mut all = Vec::new();
    server.read_to_end(&mut all).await.unwrap();
    assert_eq!((all.as_slice(), f.net.now_ms()), (&b"slowfast"[..], 750));
    let segs: Vec<_> = f
        .net
        .log()
        .segments()
        .map(|s| (s.deliver_at, s.offset))
        .collect();
    assert_eq!(segs, [(750, 0), (750, 4), (750, 8)]);
}

#[tokio::test(start_paused = true)]
async fn fin_arrives_after_data_and_repeats() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    server.write_all(b"abc").await.unwrap();
    server.shutdown().await.unwrap();
    assert_eq!(
        kind(server.write_all(b"x").await),
        io::ErrorKind::BrokenPipe
    );
    assert_eq!(
        read_at(&f.net, &mut client, 16).await,
        (Ok(b"abc".to_vec()), 750)
    );
    assert_eq!(read_at(&f.net, &mut client, 16).await, (Ok(vec![]), 750));
    assert_eq!(read_at(&f.net, &mut client, 16).await, (Ok(vec![]), 750));
    // Half-close: the client can still send.
    client.write_all(b"late").await.unwrap();
    assert_eq!(
        read_at(&f.net, &mut server, 16).await,
        (Ok(b"late".to_vec()), 1000)
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_a_stream_sends_fin() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, server) = f.pair().await;
    drop(server);
    assert_eq!(read_at(&f.net, &mut client, 16).await, (Ok(vec![]), 750));
    assert_eq!(
        f.net.log().segments().last().copied(),
        Some(SegmentEvent {
            conn: ConnId(1),
            dir: S2C,
            seq: 0,
            sent_at: 500,
            deliver_at: 750,
            offset: 0,
            len: 0,
            kind: Fin
        })
    );
}

#[tokio::test(start_paused = true)]
async fn reset_surfaces_after_queued_data() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    server.write_all(b"abc").await.unwrap();
    server.reset();
    // The resetting side's own operations fail at once.
    assert_eq!(
        kind(server.read(&mut [0; 4]).await),
        io::ErrorKind::ConnectionReset
    );
    assert_eq!(
        kind(server.write(b"x").await),
        io::ErrorKind::ConnectionReset
    );
    assert_eq!(
        read_at(&f.net, &mut client, 16).await,
        (Ok(b"abc".to_vec()), 750)
    );
    let (r, at) = read_at(&f.net, &mut client, 16).await;
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 750));
    assert_eq!(
        kind(client.read(&mut [0; 4]).await),
        io::ErrorKind::ConnectionReset
    );
    assert_eq!(
        kind(client.write(b"x").await),
        io::ErrorKind::ConnectionReset
    );
    assert_eq!(
        kind(client.shutdown().await),
        io::ErrorKind::ConnectionReset
    );
    let last = f.net.log().segments().last().copied().unwrap();
    assert_eq!((last.kind, last.offset, last.deliver_at), (Rst, 3, 750));
}

#[tokio::test(start_paused = true)]
async fn writes_fail_once_rst_is_delivered_even_with_unread_data() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, server) = f.pair().await;
    server.reset();
    sleep(Duration::from_millis(249)).await;
    client.write_all(b"ok").await.unwrap();
    sleep(Duration::from_millis(1)).await;
    assert_eq!(
        kind(client.write(b"x").await),
        io::ErrorKind::ConnectionReset
    );
}

#[tokio::test(start_paused = true)]
async fn reset_handle_aborts_a_stream_owned_by_another_task() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    let handle = server.reset_handle();
    let net = f.net.clone();
    let owner = tokio::spawn(async move { read_at(&net, &mut server, 16).await });
    sleep(Duration::from_millis(100)).await;
    handle.reset();
    let (r, at) = owner.await.unwrap();
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 600));
    let (r, at) = read_at(&f.net, &mut client, 16).await;
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 850));
    // Once the end is closed the handle does nothing.
    handle.reset();
    assert_eq!(f.net.log().segments().filter(|s| s.kind == Rst).count(), 1);
}

#[tokio::test(start_paused = true)]
async fn refused_after_one_round_trip() {
    let f = Fixture::new(ConnectAction::Refuse);
    let r = f.net.connect("api").await;
    assert_eq!(
        (kind(r), f.net.now_ms()),
        (io::ErrorKind::ConnectionRefused, 500)
    );
    let log = f.net.log();
    assert_eq!(
        &log.events()[1..],
        &[
            NetEvent::SynArrived {
                at: 250,
                conn: ConnId(1),
                outcome: SynOutcome::Refuse
            },
            NetEvent::Refused {
                at: 500,
                conn: ConnId(1)
            },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn blackhole_never_completes() {
    let f = Fixture::new(ConnectAction::Blackhole);
    let r = timeout(Duration::from_secs(10), f.net.connect("api")).await;
    assert!(r.is_err(), "connect completed: {r:?}");
    assert_eq!(f.net.now_ms(), 10_000);
    assert_eq!(
        &f.net.log().events()[1..],
        &[
            NetEvent::SynArrived {
                at: 250,
                conn: ConnId(1),
                outcome: SynOutcome::Blackhole
            },
            NetEvent::ConnectAbandoned {
                at: 10_000,
                conn: ConnId(1)
            },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_host_fails_at_once_naming_known_hosts() {
    let f = Fixture::new(ConnectAction::Accept);
    let err = f.net.connect("nope").await.unwrap_err();
    assert_eq!((err.kind(), f.net.now_ms()), (io::ErrorKind::NotFound, 0));
    let text = err.to_string();
    assert!(text.contains("nope") && text.contains("api"), "{text}");
    assert!(f.net.log().is_empty());
    assert_eq!(
        kind(f.net.set_latency("nope", L, L)),
        io::ErrorKind::NotFound
    );
}

#[tokio::test(start_paused = true)]
async fn connection_ids_follow_connect_calls() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let a = f.net.connect("api");
    let b = f.net.connect("api");
    assert_eq!(
        (a.conn_id(), b.conn_id()),
        (Some(ConnId(1)), Some(ConnId(2)))
    );
    // Polled in the opposite order: ids still follow the calls.
    let (sb, sa) = tokio::join!(b, a);
    assert_eq!(
        (sa.unwrap().conn_id(), sb.unwrap().conn_id()),
        (ConnId(1), ConnId(2))
    );
    assert_eq!(f.net.now_ms(), 500);
    let (_, s1) = f.accepted.recv().await.unwrap();
    let (_, s2) = f.accepted.recv().await.unwrap();
    let mut ids = [s1.conn_id(), s2.conn_id()];
    ids.sort();
    assert_eq!(ids, [ConnId(1), ConnId(2)]);
    // The host's decision applies per SYN.
    *f.host.decision.lock().unwrap() = ConnectAction::Refuse;
    let c = f.net.connect("api");
    assert_eq!(c.conn_id(), Some(ConnId(3)));
    assert_eq!(kind(c.await), io::ErrorKind::ConnectionRefused);
}

#[tokio::test(start_paused = true)]
async fn crash_resets_connections_and_refuses_connects_until_restart() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await; // connected at 500
    client.write_all(b"lost").await.unwrap(); // due at 750, after the crash
    sleep_until(f.at(600)).await;
    f.net.crash("api").unwrap();
    // The host's own end fails at once; the client reads the RST one latency later.
    assert_eq!(
        read_at(&f.net, &mut server, 16).await,
        (Err(io::ErrorKind::ConnectionReset), 600)
    );
    assert_eq!(
        read_at(&f.net, &mut client, 16).await,
        (Err(io::ErrorKind::ConnectionReset), 850)
    );
    // While down, a SYN is refused without asking the host, which would accept.
    let refused = f.net.connect("api");
    assert_eq!(kind(refused.await), io::ErrorKind::ConnectionRefused);
    assert_eq!(f.net.now_ms(), 1350);
    assert!(f.accepted.try_recv().is_err());
    // Crashing again while down changes nothing.
    f.net.crash("api").unwrap();

    f.net.restart("api").unwrap();
    let (mut client, mut server) = f.pair().await;
    client.write_all(b"again").await.unwrap();
    assert_eq!(
        read_at(&f.net, &mut server, 16).await,
        (Ok(b"again".to_vec()), 2100)
    );

    let host = f.net.host_id("api").unwrap();
    let faults: Vec<NetEvent> = f
        .net
        .log()
        .events()
        .iter()
        .copied()
        .filter(|e| {
            matches!(
                e,
                NetEvent::Crash { .. }
                    | NetEvent::Restart { .. }
                    | NetEvent::SynArrived {
                        outcome: SynOutcome::Down,
                        ..
                    }
            )
        })
        .collect();
    assert_eq!(
        faults,
        [
            NetEvent::Crash { at: 600, host },
            NetEvent::SynArrived {
                at: 1100,
                conn: ConnId(2),
                outcome: SynOutcome::Down
            },
            NetEvent::Restart { at: 1350, host },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn partition_holds_segments_until_heal() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    client.write_all(b"inflight").await.unwrap(); // due at 750
    sleep_until(f.at(600)).await;
    f.net.partition("api").unwrap();
    client.write_all(b"held").await.unwrap(); // due at 850
    server.write_all(b"back").await.unwrap(); // due at 850

    // A new connect black-holes: its SYN is lost.
    let lost = timeout(Duration::from_secs(1), f.net.connect("api")).await;
    assert!(lost.is_err());
    assert_eq!(f.net.now_ms(), 1600);

    let net = f.net.clone();
    let reader = tokio::spawn(async move {
        let mut all = Vec::new();
        while all.len() < 12 {
            let (r, _) = read_at(&net, &mut server, 64).await;
            all.extend(r.unwrap());
        }
        (all, net.now_ms(), server)
    });
    sleep_until(f.at(2000)).await;
    f.net.heal("api").unwrap();
    let (all, at, _server) = reader.await.unwrap();
    assert_eq!((all.as_slice(), at), (&b"inflightheld"[..], 2000));
    assert_eq!(
        read_at(&f.net, &mut client, 16).await,
        (Ok(b"back".to_vec()), 2000)
    );

    // After the heal, data travels normally again.
    client.write_all(b"again").await.unwrap();
    let host = f.net.host_id("api").unwrap();
    let log = f.net.log();
    let tail: Vec<NetEvent> = log
        .events()
        .iter()
        .copied()
        .filter(|e| !matches!(e, NetEvent::Segment(_)))
        .skip(3)
        .collect();
    assert_eq!(
        tail,
        [
            NetEvent::Partition { at: 600, host },
            NetEvent::ConnectStart {
                at: 600,
                conn: ConnId(2),
                host
            },
            NetEvent::SynArrived {
                at: 850,
                conn: ConnId(2),
                outcome: SynOutcome::Lost
            },
            NetEvent::ConnectAbandoned {
                at: 1600,
                conn: ConnId(2)
            },
            NetEvent::Heal { at: 2000, host },
            NetEvent::Released {
                at: 2000,
                conn: ConnId(1),
                dir: C2S,
                first_seq: 0,
                end_seq: 2
            },
            NetEvent::Released {
                at: 2000,
                conn: ConnId(1),
                dir: S2C,
                first_seq: 0,
                end_seq: 1
            },
        ]
    );
    assert_eq!(log.segments().last().map(|s| s.deliver_at), Some(2250));
}

#[tokio::test(start_paused = true)]
async fn partition_holds_connect_reply_until_heal() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let net = f.net.clone();
    let connecting = tokio::spawn(async move {
        let s = net.connect("api").await;
        (s, net.now_ms())
    });
    sleep_until(f.at(300)).await; // SYN accepted at 250, reply due at 500
    f.net.partition("api").unwrap();
    sleep_until(f.at(900)).await;
    f.net.heal("api").unwrap();
    let (s, at) = connecting.await.unwrap();
    assert_eq!((s.unwrap().conn_id(), at), (ConnId(1), 900));
    assert_eq!(f.accepted.recv().await.unwrap().0, 250);
}

#[tokio::test(start_paused = true)]
async fn a_syn_in_flight_during_any_part_of_a_partition_is_lost() {
    let f = Fixture::new(ConnectAction::Accept);
    // Sent during the partition, which heals before the SYN would arrive.
    f.net.partition("api").unwrap();
    let during = f.net.connect("api");
    sleep_until(f.at(100)).await;
    f.net.heal("api").unwrap();
    // Sent before a partition that starts and heals while it travels.
    let across = f.net.connect("api");
    sleep_until(f.at(150)).await;
    f.net.partition("api").unwrap();
    sleep_until(f.at(200)).await;
    f.net.heal("api").unwrap();
    let (a, b) = tokio::join!(
        timeout(Duration::from_secs(5), during),
        timeout(Duration::from_secs(5), across)
    );
    assert!(a.is_err() && b.is_err());
    let lost: Vec<_> = f
        .net
        .log()
        .events()
        .iter()
        .filter_map(|e| match *e {
            NetEvent::SynArrived { at, conn, outcome } => Some((at, conn.0, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        lost,
        [(250, 1, SynOutcome::Lost), (350, 2, SynOutcome::Lost)]
    );
    // A connect after the heal works.
    assert!(f.net.connect("api").await.is_ok());
}

#[test]
fn log_events_stay_small() {
    assert!(
        std::mem::size_of::<NetEvent>() <= 56,
        "{}",
        std::mem::size_of::<NetEvent>()
    );
}

#[tokio::test(start_paused = true)]
async fn writing_to_a_dropped_peer_gets_rst() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, server) = f.pair().await;
    drop(server); // FIN due at 750
    sleep_until(f.at(1000)).await;
    assert_eq!(read_at(&f.net, &mut client, 16).await, (Ok(vec![]), 1000));
    client.write_all(b"GET").await.unwrap(); // reaches the closed end at 1250 -> RST
    sleep_until(f.at(1499)).await;
    client.write_all(b"more").await.unwrap();
    sleep_until(f.at(1500)).await;
    assert_eq!(
        kind(client.write(b"x").await),
        io::ErrorKind::ConnectionReset
    );
    assert_eq!(
        kind(client.read(&mut [0; 4]).await),
        io::ErrorKind::ConnectionReset
    );
    let segs: Vec<_> = f.net.log().segments().copied().collect();
    assert_eq!(
        segs.iter()
            .map(|s| NetEvent::Segment(*s))
            .collect::<Vec<_>>(),
        [
            seg(1, S2C, 0, (500, 750), (0, 0), Fin),
            seg(1, C2S, 0, (1000, 1250), (0, 3), Data),
            seg(1, S2C, 1, (1250, 1500), (0, 0), Rst),
            seg(1, C2S, 1, (1499, 1749), (3, 4), Data),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn data_in_flight_to_a_dropped_end_is_answered_with_rst() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, server) = f.pair().await;
    client.write_all(b"req").await.unwrap(); // due at 750
    sleep_until(f.at(600)).await;
    drop(server); // FIN due at 850; RST at 750 -> 1000
    assert_eq!(read_at(&f.net, &mut client, 16).await, (Ok(vec![]), 850));
    let (r, at) = read_at(&f.net, &mut client, 16).await;
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 1000));
}

#[tokio::test(start_paused = true)]
async fn connect_abandoned_after_accept_resets_the_server_end() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let r = timeout(Duration::from_millis(300), f.net.connect("api")).await;
    assert!(r.is_err());
    let (at, mut server) = f.accepted.recv().await.unwrap();
    assert_eq!(at, 250);
    // The SYN-ACK reaches the client at 500, which has no socket: RST due at 750.
    let (r, at) = read_at(&f.net, &mut server, 16).await;
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 750));
    let log = f.net.log();
    assert!(log.events().contains(&NetEvent::ConnectAbandoned {
        at: 300,
        conn: ConnId(1)
    }));
    assert_eq!(
        log.segments().last().copied(),
        Some(SegmentEvent {
            conn: ConnId(1),
            dir: C2S,
            seq: 0,
            sent_at: 500,
            deliver_at: 750,
            offset: 0,
            len: 0,
            kind: Rst
        })
    );
}

#[tokio::test(start_paused = true)]
async fn connect_abandoned_before_syn_arrival_still_delivers_the_syn() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let r = timeout(Duration::from_millis(100), f.net.connect("api")).await;
    assert!(r.is_err());
    let (at, mut server) = f.accepted.recv().await.unwrap();
    assert_eq!(at, 250);
    let (r, at) = read_at(&f.net, &mut server, 16).await;
    assert_eq!((r.unwrap_err(), at), (io::ErrorKind::ConnectionReset, 750));
}

#[tokio::test(start_paused = true)]
async fn zero_latency_connects_at_once_and_recycles_slots() {
    let (tx, mut accepted) = mpsc::unbounded_channel();
    let start = Instant::now();
    let net = Network::new(start, Duration::ZERO);
    net.add_host(
        "api",
        Arc::new(ChanHost {
            decision: Mutex::new(ConnectAction::Accept),
            tx,
            start,
        }),
    );
    for i in 1..=50 {
        let mut client = net.connect("api").await.unwrap();
        let (_, mut server) = accepted.recv().await.unwrap();
        client.write_all(b"ping").await.unwrap();
        assert_eq!(read_at(&net, &mut server, 8).await.0.unwrap(), b"ping");
        assert_eq!(client.conn_id(), ConnId(i));
    }
    assert_eq!(net.now_ms(), 0);
    // Both ends of each connection were dropped, so one slot served them all.
    let inner = net.lock();
    assert_eq!((inner.conns.len(), inner.free.len()), (1, 1));
    assert!(inner.conns[0].pipes.iter().all(|p| p.segs.is_empty()));
}

#[tokio::test(start_paused = true)]
async fn connector_uses_the_uri_host_only() {
    use tower_service::Service;
    let mut f = Fixture::new(ConnectAction::Accept);
    let mut connector = f.net.connector();
    let s = connector
        .call("https://api:8443/x".parse().unwrap())
        .await
        .unwrap();
    assert_eq!((s.conn_id(), f.net.now_ms()), (ConnId(1), 500));
    assert_eq!(f.accepted.recv().await.unwrap().1.conn_id(), ConnId(1));
    let err = connector.call("/relative".parse().unwrap()).await;
    assert_eq!(kind(err), io::ErrorKind::InvalidInput);
    let err = connector.call("http://other/".parse().unwrap()).await;
    assert_eq!(kind(err), io::ErrorKind::NotFound);
}

/// Serves every request with 200 "ok" through hyper's http1 server.
struct HyperHost;

impl Host for HyperHost {
    fn on_syn(&self, _conn: ConnId) -> ConnectAction {
        ConnectAction::Accept
    }
    fn accept(&self, _conn: ConnId, stream: SimStream) {
        let svc = hyper::service::service_fn(|_req| async {
            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"ok"))))
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .auto_date_header(false)
                .header_read_timeout(None)
                .serve_connection(stream, svc)
                .await;
        });
    }
}

#[tokio::test(start_paused = true)]
async fn hyper_util_client_reuses_a_pooled_connection() {
    let net = Network::new(Instant::now(), L);
    net.add_host("api", Arc::new(HyperHost));
    let client = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .build::<_, Empty<Bytes>>(net.connector());

    let res = client.get("http://api/a".parse().unwrap()).await.unwrap();
    assert_eq!(net.now_ms(), 1000); // connect (2L), request (L), response (L)
    assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
    assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "ok");

    let res = client.get("http://api/b".parse().unwrap()).await.unwrap();
    assert_eq!(net.now_ms(), 1500); // reused: request and response only
    assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
    assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "ok");
    drop(client);
    sleep(Duration::from_secs(1)).await;

    let host = net.host_id("api").unwrap();
    assert_eq!(
        net.log().events(),
        &[
            NetEvent::ConnectStart {
                at: 0,
                conn: ConnId(1),
                host
            },
            NetEvent::SynArrived {
                at: 250,
                conn: ConnId(1),
                outcome: SynOutcome::Accept
            },
            NetEvent::Connected {
                at: 500,
                conn: ConnId(1)
            },
            // "GET /a HTTP/1.1\r\nhost: api\r\n\r\n" and "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
            seg(1, C2S, 0, (500, 750), (0, 30), Data),
            seg(1, S2C, 0, (750, 1000), (0, 40), Data),
            seg(1, C2S, 1, (1000, 1250), (30, 30), Data),
            seg(1, S2C, 1, (1250, 1500), (40, 40), Data),
            // Dropping the client closes the pooled connection; hyper's server answers FIN.
            seg(1, C2S, 2, (1500, 1750), (60, 0), Fin),
            seg(1, S2C, 2, (1750, 2000), (80, 0), Fin),
        ]
    );
    assert_eq!(net.lock().free.len(), 1, "both ends released");
}

#[test]
#[ignore = "benchmark: cargo test -p retrylab --release -- --ignored bench_sim"]
fn bench_sim_new_connection_per_attempt() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    for latency in [Duration::ZERO, Duration::from_millis(1)] {
        let wall = std::time::Instant::now();
        let n = 20_000;
        rt.block_on(async {
            let net = Network::new(Instant::now(), latency);
            net.add_host("api", Arc::new(HyperHost));
            let client = Client::builder(TokioExecutor::new())
                .pool_timer(TokioTimer::new())
                .pool_max_idle_per_host(0)
                .build::<_, Empty<Bytes>>(net.connector());
            for _ in 0..n {
                let res = client.get("http://api/a".parse().unwrap()).await.unwrap();
                res.into_body().collect().await.unwrap();
            }
            println!("log events: {}", net.log_len());
        });
        let per = wall.elapsed() / n;
        println!("latency {latency:?}: {per:?} per attempt");
    }
}

/// Formerly the example on `network`: the sim network is internal, so its
/// example lives here.
#[test]
fn echo_host_example_round_trips_in_virtual_time() -> Result<(), std::io::Error> {
    use crate::backend::sim::{ConnId, ConnectAction, Host, Network, SimStream};
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Echoes what it reads.
    struct Echo;
    impl Host for Echo {
        fn on_syn(&self, _conn: ConnId) -> ConnectAction {
            ConnectAction::Accept
        }
        fn accept(&self, _conn: ConnId, mut stream: SimStream) {
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 || stream.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    rt.block_on(async {
        let net = Network::new(tokio::time::Instant::now(), Duration::from_millis(10));
        net.add_host("echo", Arc::new(Echo));
        let mut stream = net.connect("echo").await?;
        assert_eq!(net.now_ms(), 20); // one round trip
        stream.write_all(b"hi").await?;
        let mut buf = [0u8; 2];
        stream.read_exact(&mut buf).await?;
        assert_eq!((&buf, net.now_ms()), (b"hi", 40));
        assert_eq!(stream.conn_id(), ConnId(1));
        Ok::<_, std::io::Error>(())
    })?;
    Ok::<(), std::io::Error>(())
}

/// Formerly the example on `connector`: the sim network is internal, so its
/// example lives here.
#[test]
fn hyper_util_client_over_the_sim_connector_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::backend::sim::{ConnId, ConnectAction, Host, Network, SimStream};
    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::time::Duration;

    /// Answers every request with 200 "ok".
    struct Api;
    impl Host for Api {
        fn on_syn(&self, _conn: ConnId) -> ConnectAction {
            ConnectAction::Accept
        }
        fn accept(&self, _conn: ConnId, stream: SimStream) {
            let svc = hyper::service::service_fn(|_req| async {
                Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from("ok"))))
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .auto_date_header(false)
                    .serve_connection(stream, svc),
            );
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    rt.block_on(async {
        let net = Network::new(tokio::time::Instant::now(), Duration::from_millis(5));
        net.add_host("api", Arc::new(Api));
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build::<_, Empty<Bytes>>(net.connector());
        let res = client.get("http://api/".parse()?).await?;
        assert_eq!(res.extensions().get::<ConnId>(), Some(&ConnId(1)));
        assert_eq!(res.into_body().collect().await?.to_bytes(), "ok");
        assert_eq!(net.now_ms(), 20); // connect, request and response: 4 one-way trips
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok::<(), Box<dyn std::error::Error>>(())
}

#[tokio::test(start_paused = true)]
async fn a_network_whose_run_ended_fails_everything_and_says_why() {
    let mut f = Fixture::new(ConnectAction::Accept);
    let (mut client, mut server) = f.pair().await;
    // A reader waiting when the run ends is woken to see it.
    let waiting = tokio::spawn(async move {
        let mut buf = [0u8; 8];
        server.read(&mut buf).await
    });
    tokio::task::yield_now().await;
    f.net.end_run();
    assert!(f.net.run_ended());
    let says_ended = |error: io::Error| {
        let text = error.to_string();
        assert!(
            text.contains("has ended") && text.contains("must not outlive"),
            "{text}"
        );
    };
    says_ended(waiting.await.unwrap().unwrap_err());
    says_ended(client.write_all(b"late").await.unwrap_err());
    let mut buf = [0u8; 8];
    says_ended(client.read(&mut buf).await.unwrap_err());
    says_ended(client.shutdown().await.unwrap_err());
    says_ended(f.net.connect("api").await.unwrap_err());
    // No late byte went on the wire, and no late connect started.
    let events = f.net.log().events().to_vec();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, NetEvent::Segment(s) if s.kind == Data))
    );
    let connects = events
        .iter()
        .filter(|e| matches!(e, NetEvent::ConnectStart { .. }));
    assert_eq!(connects.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn connects_past_the_open_connection_cap_fail_until_one_closes() {
    let mut f = Fixture::new(ConnectAction::Accept);
    // Connects on their way count: all of these are started before any SYN arrives.
    let connecting: Vec<_> = (0..MAX_OPEN_CONNECTIONS)
        .map(|_| f.net.connect("api"))
        .collect();
    let refused = f.net.connect("api").await.unwrap_err();
    assert!(
        refused.to_string().contains("at most 10000 connections"),
        "{refused}"
    );
    let mut clients = Vec::with_capacity(MAX_OPEN_CONNECTIONS);
    for connect in connecting {
        clients.push(connect.await.unwrap());
    }
    let mut servers = Vec::with_capacity(MAX_OPEN_CONNECTIONS);
    while let Ok(accepted) = f.accepted.try_recv() {
        servers.push(accepted.1);
    }
    assert_eq!(servers.len(), MAX_OPEN_CONNECTIONS);
    assert!(f.net.connect("api").await.is_err());
    // Closed at both ends, a connection makes room for another.
    drop(clients.pop());
    drop(servers.pop());
    let again = f.net.connect("api").await;
    assert!(again.is_ok(), "{again:?}");
    // A refused connect holds nothing open either.
    drop(again);
    drop(f.accepted.try_recv());
    *f.host.decision.lock().unwrap() = ConnectAction::Refuse;
    assert_eq!(
        kind(f.net.connect("api").await),
        io::ErrorKind::ConnectionRefused
    );
    *f.host.decision.lock().unwrap() = ConnectAction::Accept;
    let last = f.net.connect("api").await;
    assert!(last.is_ok(), "{last:?}");
}
