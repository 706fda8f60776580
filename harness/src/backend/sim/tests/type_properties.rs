//! What the types promise: the network, its streams, connector, connects and log are
//! `Send + Sync` (streams and connects `Unpin`), and a log event stays within 56 bytes.

use crate::backend::sim::{
    Connect, NetEvent, NetLog, Network, ResetHandle, SimConnector, SimStream,
};

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

#[test]
fn log_events_stay_small() {
    assert!(
        std::mem::size_of::<NetEvent>() <= 56,
        "{}",
        std::mem::size_of::<NetEvent>()
    );
}
