//! RST: a reset surfacing after the data queued before it, writes failing once it is
//! delivered, a reset handle aborting a stream another task owns, and data sent to a dropped
//! end answered with RST.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{sleep, sleep_until};

use super::{C2S, Data, Fin, Fixture, Rst, S2C, kind, read_at, seg};
use crate::backend::sim::{ConnectAction, NetEvent};

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
