//! A network whose run has ended: every operation and connect fails saying why, and no late
//! byte or connect goes on the wire.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Data, Fixture};
use crate::backend::sim::{ConnectAction, NetEvent};

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
