//! Data and FIN on a connection: one round trip to connect and one way per segment, segments
//! kept in order when the latency drops, FIN after the data (repeating, with the other
//! direction still open), and a dropped stream sending FIN.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::sleep;

use super::{C2S, Data, Fin, Fixture, L, S2C, kind, read_at, seg};
use crate::backend::sim::{ConnId, ConnectAction, NetEvent, SegmentEvent, Side, SynOutcome};

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
