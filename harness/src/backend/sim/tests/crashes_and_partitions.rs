//! Host faults: a crash resets the host's connections and refuses connects until it
//! restarts; a partition holds segments and connect replies until it heals, and loses every
//! SYN in flight during any part of it.

use std::io;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::{sleep_until, timeout};

use super::{C2S, Fixture, S2C, kind, read_at};
use crate::backend::sim::{ConnId, ConnectAction, NetEvent, SynOutcome};

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
