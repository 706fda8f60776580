//! Connects: refused after one round trip, black-holed forever, an unknown host failing at
//! once, ids following the calls, abandoned connects resetting the server end, zero latency
//! recycling connection slots, and the cap on open connections.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use super::{C2S, ChanHost, Fixture, L, Rst, kind, read_at};
use crate::backend::sim::{
    ConnId, ConnectAction, MAX_OPEN_CONNECTIONS, NetEvent, Network, SegmentEvent, SynOutcome,
};

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
