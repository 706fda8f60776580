//! Bytes a client sends that are not a request (garbage, half a head, a body cut short) are
//! filed in the ledger as the client's, with what was wrong; a request that reads is not.

use retrylab_endpoints::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Writes `bytes` on a fresh connection, waits for the start of an answer when `answered`,
/// closes its write side and reads until the server closes the connection.
async fn send(endpoint: &Endpoint, bytes: &[u8], answered: bool) {
    let (mut client, server_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, ConnInfo::without_reset(1)).await }
    });
    client.write_all(bytes).await.expect("the write");
    if answered {
        let mut head = [0u8; 9];
        client.read_exact(&mut head).await.expect("an answer");
        assert_eq!(&head, b"HTTP/1.1 ");
    }
    client.shutdown().await.expect("the shutdown");
    let mut out = Vec::new();
    let _ = client.read_to_end(&mut out).await;
    server.await.expect("the server's task");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn garbage_half_a_head_and_a_cut_body_are_filed_and_a_request_is_not() {
    let endpoint = Endpoint::new(EndpointConfig::http("api"), VirtualClock::new());
    send(&endpoint, b"\x16\x03\x01 not http\r\n\r\n", false).await;
    send(&endpoint, b"GET / HTTP/1.1\r\nHost: x\r\nX-Half", false).await;
    send(&endpoint, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", true).await;
    // `send` reads until the server closes: the endpoint closes a connection whose request
    // body can never end, rather than waiting on it for ever.
    send(
        &endpoint,
        b"POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
        false,
    )
    .await;
    let ledger = endpoint.ledger().snapshot();
    // The well-formed request files nothing, and neither does its client closing the
    // connection after it.
    assert_eq!(ledger.requests.len(), 1);
    let what: Vec<&str> = ledger.unreadable.iter().map(|u| u.what.as_str()).collect();
    assert_eq!(what.len(), 3, "{what:?}");
    assert!(
        what[0].starts_with("bytes that are not an HTTP/1.1 request"),
        "{what:?}"
    );
    assert_eq!(
        what[1],
        "half a request: the connection closed before the request ended"
    );
    assert_eq!(
        what[2],
        "a request body cut short: 10 of 100 byte(s) of `POST /orders` arrived before the \
         connection closed"
    );
}
