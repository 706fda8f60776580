//! HTTP/2 endpoints (`Protocol::Http2`, h2c with prior knowledge) and `Protocol::Auto`,
//! served over `tokio::io::duplex` on a paused runtime, driven by hyper's HTTP/2 client (and
//! its HTTP/1 client for `auto`).

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use retrylab_endpoints::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

struct Client {
    send: SendRequest<Full<Bytes>>,
    server: JoinHandle<CloseRecord>,
}

async fn open(endpoint: &Endpoint, conn_id: u64) -> Client {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn({
        let endpoint = endpoint.clone();
        async move {
            endpoint
                .serve(server_io, ConnInfo::without_reset(conn_id))
                .await
        }
    });
    let (send, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .handshake(TokioIo::new(client_io))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Client { send, server }
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(format!("http://api{path}"))
        .body(Full::default())
        .unwrap()
}

/// Sends `request` and reads its body: the status, the body and when it ended.
async fn send(
    send: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    send.ready().await?;
    let response = send.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

fn h2(config: EndpointConfig) -> Endpoint {
    Endpoint::new(config.protocol(Protocol::Http2), VirtualClock::new())
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_script_is_walked_one_stream_at_a_time_with_stream_ids_in_the_ledger() {
    let endpoint = h2(EndpointConfig::http("api")
        .script([Step::status(503).times(2), Step::status(200).body("ok")]));
    let mut client = open(&endpoint, 1).await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let (status, _) = send(&mut client.send, get("/orders")).await.unwrap();
        statuses.push(status.as_u16());
    }
    assert_eq!(statuses, [503, 503, 200]);
    let ledger = endpoint.ledger().snapshot();
    let streams: Vec<_> = ledger
        .requests
        .iter()
        .map(|r| (r.conn_id, r.seq, r.stream_id))
        .collect();
    assert_eq!(streams, [(1, 1, Some(1)), (1, 2, Some(3)), (1, 3, Some(5))]);
    // The origin form, as an HTTP/1 request records it.
    assert_eq!(ledger.requests[0].uri.to_string(), "/orders");
    assert_eq!(ledger.effects.len(), 1);
    assert!(ledger.responses.iter().all(|r| r.end_ms.is_some()));
    assert!(ledger.unreadable.is_empty());
    drop(client.send);
    let close = client.server.await.unwrap();
    assert_eq!(close.by, Side::Client);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn concurrent_requests_share_one_connection_on_streams_of_their_own() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::status(503).latency(Duration::from_millis(300)),
        Step::status(502).latency(Duration::from_millis(100)),
        Step::status(200).latency(Duration::from_millis(200)),
    ]));
    let client = open(&endpoint, 7).await;
    let started = Instant::now();
    let calls = (0..3).map(|_| {
        let mut send_request = client.send.clone();
        tokio::spawn(async move {
            let (status, _) = send(&mut send_request, get("/")).await.unwrap();
            (status.as_u16(), started.elapsed().as_millis())
        })
    });
    let mut answers = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        answers.push(call.await.unwrap());
    }
    // The three ran at once: each answered after its own step's latency.
    assert_eq!(answers, [(503, 300), (502, 100), (200, 200)]);
    let ledger = endpoint.ledger().snapshot();
    let mut streams: Vec<_> = ledger.requests.iter().map(|r| r.stream_id).collect();
    streams.sort_unstable();
    assert_eq!(streams, [Some(1), Some(3), Some(5)]);
    assert!(ledger.requests.iter().all(|r| r.conn_id == 7));
    assert_eq!(
        ledger.connects.len(),
        0,
        "the harness, not serve, records connects"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_trickled_body_arrives_in_timed_chunks_and_its_end_is_recorded() {
    let endpoint = h2(EndpointConfig::http("api").script([Step::status(200)
        .body("0123456789")
        .trickle(Duration::from_millis(1000))]));
    let mut client = open(&endpoint, 1).await;
    let started = Instant::now();
    let response = client.send.send_request(get("/")).await.unwrap();
    assert_eq!(started.elapsed(), Duration::ZERO);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"0123456789");
    assert_eq!(started.elapsed(), Duration::from_millis(1000));
    let ledger = endpoint.ledger().snapshot();
    assert_eq!(ledger.responses[0].at_ms, 0);
    assert_eq!(ledger.responses[0].end_ms, Some(1000));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_client_that_gives_up_resets_its_stream_and_leaves_the_connection_open() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::status(200).latency(Duration::from_secs(10)),
        Step::status(201),
    ]));
    let mut client = open(&endpoint, 1).await;
    client.send.ready().await.unwrap();
    let waiting = client.send.send_request(get("/"));
    assert!(
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .is_err()
    );
    // The same connection carries the next request.
    let (status, _) = send(&mut client.send, get("/")).await.unwrap();
    assert_eq!(status, StatusCode::CREATED);
    let ledger = endpoint.ledger().snapshot();
    assert_eq!(ledger.responses[0].outcome, ResponseOutcome::Abandoned);
    assert_eq!(ledger.responses[0].at_ms, 1000);
    assert_eq!(ledger.requests[1].stream_id, Some(3));
    assert!(ledger.closes.is_empty());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_reset_step_ends_the_whole_connection() {
    let endpoint = h2(EndpointConfig::http("api").script([Step::fail(Fail::Reset)]));
    let mut client = open(&endpoint, 1).await;
    assert!(send(&mut client.send, get("/")).await.is_err());
    let close = client.server.await.unwrap();
    // A duplex cannot reset: the reset degrades to a close, by the endpoint.
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Reset));
    let ledger = endpoint.ledger().snapshot();
    assert_eq!(
        ledger.responses[0].outcome,
        ResponseOutcome::Failed(Fail::Reset)
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn max_requests_makes_a_stream_the_last_and_the_connection_closes_after_it() {
    let endpoint = h2(EndpointConfig::http("api")
        .script([Step::status(200)])
        .keep_alive(KeepAlive::default().max_requests(2)));
    let mut client = open(&endpoint, 1).await;
    for _ in 0..2 {
        let (status, _) = send(&mut client.send, get("/")).await.unwrap();
        assert_eq!(status, StatusCode::OK);
    }
    let close = client.server.await.unwrap();
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Fin));
    assert!(send(&mut client.send, get("/")).await.is_err());
    assert_eq!(endpoint.ledger().requests_received(), 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let endpoint = h2(EndpointConfig::http("api")
        .script([Step::status(200)])
        .keep_alive(KeepAlive::default().idle_timeout(Duration::from_secs(5))));
    let mut client = open(&endpoint, 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    send(&mut client.send, get("/")).await.unwrap();
    let close = client.server.await.unwrap();
    assert_eq!((close.at_ms, close.by), (7000, Side::Server));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_http1_client_on_an_http2_endpoint_is_unreadable() {
    let endpoint = h2(EndpointConfig::http("api").script([Step::status(200)]));
    let (mut client, server_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, ConnInfo::without_reset(3)).await }
    });
    client
        .write_all(b"GET / HTTP/1.1\r\nhost: api\r\n\r\n")
        .await
        .unwrap();
    let _ = client.read_to_end(&mut Vec::new()).await;
    server.await.unwrap();
    let ledger = endpoint.ledger().snapshot();
    assert!(ledger.requests.is_empty());
    assert_eq!(ledger.unreadable[0].conn_id, 3);
    assert!(
        ledger.unreadable[0]
            .what
            .starts_with("bytes that are not an HTTP/2 connection preface"),
        "{}",
        ledger.unreadable[0].what
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_auto_endpoint_answers_http1_and_http2_connections() {
    let endpoint = Endpoint::new(
        EndpointConfig::http("api")
            .protocol(Protocol::Auto)
            .script([Step::status(503), Step::status(200).body("two")]),
        VirtualClock::new(),
    );
    // HTTP/1 first.
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, ConnInfo::without_reset(1)).await }
    });
    let (mut h1, connection) = hyper::client::conn::http1::handshake(TokioIo::new(client_io))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = Request::get("/").header("host", "api");
    let request: Request<Full<Bytes>> = request.body(Full::default()).unwrap();
    let response = h1.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.version(), http::Version::HTTP_11);
    // Then HTTP/2.
    let mut client = open(&endpoint, 2).await;
    let (status, body) = send(&mut client.send, get("/")).await.unwrap();
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"two"[..]));
    let ledger = endpoint.ledger().snapshot();
    let seen: Vec<_> = ledger
        .requests
        .iter()
        .map(|r| (r.conn_id, r.stream_id))
        .collect();
    assert_eq!(seen, [(1, None), (2, Some(1))]);
    assert!(ledger.unreadable.is_empty());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_auto_endpoint_reads_a_short_http1_request_whole() {
    // Shorter than the preface and unlike it from the first byte: HTTP/1 at once.
    let endpoint = Endpoint::new(
        EndpointConfig::http("api")
            .protocol(Protocol::Auto)
            .script([Step::status(204)]),
        VirtualClock::new(),
    );
    let (mut client, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, ConnInfo::without_reset(1)).await }
    });
    client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let mut answer = [0u8; 12];
    client.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 204");
    assert_eq!(endpoint.ledger().requests_received(), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn headers_http2_forbids_are_left_out_and_a_content_length_is_sent() {
    let endpoint = h2(EndpointConfig::http("api").script([Step::status(200)
        .header("connection", "close")
        .header("x-kept", "yes")
        .body("abc")]));
    let mut client = open(&endpoint, 1).await;
    client.send.ready().await.unwrap();
    let response = client.send.send_request(get("/")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("connection").is_none());
    assert_eq!(response.headers()["x-kept"], "yes");
    assert_eq!(response.headers()["content-length"], "3");
}

/// The HTTP/2 error code a failed request or body read carried, if it was a stream reset
/// (`true`) or a GOAWAY (`false`) from the endpoint.
fn h2_reason(error: &hyper::Error) -> Option<(bool, H2Code)> {
    let h2 = std::error::Error::source(error)?.downcast_ref::<h2::Error>()?;
    if !h2.is_remote() {
        return None;
    }
    Some((h2.is_reset(), H2Code::from(h2.reason()?)))
}

/// Sends one request of its own on `client`'s connection, in a task, so that several are
/// in flight at once.
fn spawn_send(
    client: &Client,
    path: &'static str,
) -> JoinHandle<Result<(StatusCode, Bytes), hyper::Error>> {
    let mut send_request = client.send.clone();
    tokio::spawn(async move { send(&mut send_request, get(path)).await })
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_stream_reset_before_the_head_fails_that_stream_alone() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::fail(Fail::RstStream {
            code: H2Code::REFUSED_STREAM,
            body_bytes: None,
        }),
        Step::status(200),
    ]));
    let mut client = open(&endpoint, 1).await;
    let error = send(&mut client.send, get("/")).await.unwrap_err();
    assert_eq!(h2_reason(&error), Some((true, H2Code::REFUSED_STREAM)));
    // The connection goes on: the next stream is answered.
    let (status, _) = send(&mut client.send, get("/")).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let ledger = endpoint.ledger().snapshot();
    assert!(matches!(
        ledger.responses[0].outcome,
        ResponseOutcome::Failed(Fail::RstStream { .. })
    ));
    assert_eq!(ledger.requests[1].stream_id, Some(3));
    assert!(ledger.closes.is_empty() && ledger.goaways.is_empty());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_stream_reset_after_the_head_cuts_the_body_with_its_code() {
    let endpoint = h2(EndpointConfig::http("api").script([Step::status(200)
        .body("0123456789")
        .fail_with(Fail::RstStream {
            code: H2Code::INTERNAL_ERROR,
            body_bytes: Some(4),
        })]));
    let mut client = open(&endpoint, 1).await;
    client.send.ready().await.unwrap();
    let response = client.send.send_request(get("/")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut received = Vec::new();
    let error = loop {
        match body.frame().await {
            Some(Ok(frame)) => received.extend_from_slice(frame.data_ref().unwrap()),
            Some(Err(error)) => break error,
            None => panic!("the body ended without the reset"),
        }
    };
    assert_eq!(received, b"0123");
    assert_eq!(h2_reason(&error), Some((true, H2Code::INTERNAL_ERROR)));
    let ledger = endpoint.ledger().snapshot();
    assert!(matches!(
        ledger.responses[0].outcome,
        ResponseOutcome::Truncated { .. }
    ));
    assert!(ledger.closes.is_empty());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_hanging_stream_leaves_the_others_answered() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::fail(Fail::Hang),
        Step::status(200).latency(Duration::from_millis(50)),
    ]));
    let client = open(&endpoint, 1).await;
    let hanging = spawn_send(&client, "/slow");
    tokio::time::sleep(Duration::from_millis(1)).await;
    let answered = spawn_send(&client, "/fast").await.unwrap().unwrap();
    assert_eq!(answered.0, StatusCode::OK);
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!hanging.is_finished());
    assert_eq!(endpoint.ledger().requests_received(), 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_graceful_goaway_lets_the_streams_in_flight_finish() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::status(200).latency(Duration::from_millis(100)),
        Step::status(201).fail_with(Fail::GoAway { code: None }),
    ]));
    let client = open(&endpoint, 1).await;
    let slow = spawn_send(&client, "/slow");
    tokio::time::sleep(Duration::from_millis(1)).await;
    let last = spawn_send(&client, "/last").await.unwrap().unwrap();
    assert_eq!(last.0, StatusCode::CREATED);
    assert_eq!(slow.await.unwrap().unwrap().0, StatusCode::OK);
    let close = client.server.await.unwrap();
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Fin));
    let ledger = endpoint.ledger().snapshot();
    let goaway = ledger.goaways[0];
    assert_eq!(
        (
            goaway.conn_id,
            goaway.last_stream_id,
            goaway.code,
            goaway.graceful
        ),
        (1, 3, H2Code::NO_ERROR, true)
    );
    assert!(matches!(
        ledger.responses[1].outcome,
        ResponseOutcome::Sent { .. }
    ));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_abrupt_goaway_closes_the_connection_under_the_streams_in_flight() {
    let endpoint = h2(EndpointConfig::http("api").script([
        Step::status(200).latency(Duration::from_millis(100)),
        Step::fail(Fail::GoAway {
            code: Some(H2Code::ENHANCE_YOUR_CALM),
        }),
    ]));
    let client = open(&endpoint, 1).await;
    let slow = spawn_send(&client, "/slow");
    tokio::time::sleep(Duration::from_millis(1)).await;
    // Both streams are at or below the GOAWAY's last stream id (3): h2 fails them as the
    // connection closes under them (a broken pipe), not with the GOAWAY's code, which only
    // a stream above that id gets.
    let broken = |error: hyper::Error| {
        let io = std::error::Error::source(&error)
            .and_then(|e| e.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        assert_eq!(io, Some(std::io::ErrorKind::BrokenPipe), "{error:?}");
    };
    broken(spawn_send(&client, "/calm").await.unwrap().unwrap_err());
    broken(slow.await.unwrap().unwrap_err());
    let close = client.server.await.unwrap();
    assert_eq!(close.by, Side::Server);
    let ledger = endpoint.ledger().snapshot();
    let goaway = ledger.goaways[0];
    assert_eq!(
        (goaway.last_stream_id, goaway.code, goaway.graceful),
        (3, H2Code::ENHANCE_YOUR_CALM, false)
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn max_concurrent_streams_is_advertised_and_a_client_that_knows_it_waits() {
    let endpoint = h2(EndpointConfig::http("api")
        .script([Step::status(200).latency(Duration::from_millis(100))])
        .max_concurrent_streams(1));
    let client = open(&endpoint, 1).await;
    // Over a duplex the server's SETTINGS arrive before the requests leave, so the client
    // holds the second stream back until the first is done (on a network with latency, a
    // client that sends before the SETTINGS arrive is refused instead: the scenarios show it).
    let started = Instant::now();
    let first = spawn_send(&client, "/one");
    let second = spawn_send(&client, "/two");
    assert_eq!(first.await.unwrap().unwrap().0, StatusCode::OK);
    assert_eq!(started.elapsed(), Duration::from_millis(100));
    assert_eq!(second.await.unwrap().unwrap().0, StatusCode::OK);
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    assert_eq!(endpoint.ledger().requests_received(), 2);
}
