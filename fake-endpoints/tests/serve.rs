//! Endpoints served over `tokio::io::duplex` on a paused runtime, driven by hyper's HTTP/1
//! client (or raw bytes where the exact wire matters).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use retrylab_endpoints::wire::{CALL_HEADER, CLIENT_HEADER};
use retrylab_endpoints::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

struct Client {
    send: SendRequest<Full<Bytes>>,
    connection: JoinHandle<()>,
    server: JoinHandle<CloseRecord>,
}

async fn open(endpoint: &Endpoint, conn_id: u64) -> Client {
    open_with(endpoint, ConnInfo::without_reset(conn_id)).await
}

async fn open_with(endpoint: &Endpoint, info: ConnInfo) -> Client {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, info).await }
    });
    let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(client_io))
        .await
        .unwrap();
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    Client {
        send,
        connection,
        server,
    }
}

fn request(method: Method, path: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "api")
}

fn get(path: &str) -> Request<Full<Bytes>> {
    request(Method::GET, path).body(Full::default()).unwrap()
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

async fn send(client: &mut Client, req: Request<Full<Bytes>>) -> Result<Answer, hyper::Error> {
    client.send.ready().await?;
    let response = client.send.send_request(req).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    })
}

/// Writes `bytes` on a fresh connection and reads until the server closes it.
async fn raw(endpoint: &Endpoint, info: ConnInfo, bytes: &[u8]) -> (Vec<u8>, CloseRecord) {
    let (mut client, server_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, info).await }
    });
    client.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    client.read_to_end(&mut out).await.unwrap();
    (out, server.await.unwrap())
}

fn endpoint(config: EndpointConfig) -> Endpoint {
    Endpoint::new(config, VirtualClock::new())
}

#[derive(Default)]
struct CountResets(AtomicUsize);

impl ConnectionControl for CountResets {
    fn reset(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn script_503_503_200() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .script([Step::status(503).times(2), Step::status(200).body("ok")]),
    );
    let mut client = open(&ep, 1).await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(
            send(&mut client, get("/orders"))
                .await
                .unwrap()
                .status
                .as_u16(),
        );
    }
    assert_eq!(statuses, [503, 503, 200]);

    let ledger = ep.ledger().snapshot();
    let steps: Vec<_> = ledger.requests.iter().map(|r| r.step).collect();
    assert_eq!(steps, [Some(0), Some(0), Some(1)]);
    let seqs: Vec<_> = ledger.requests.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(ledger.requests[0].path(), "/orders");
    assert_eq!(ledger.requests[0].route, Some(0));
    assert_eq!(ledger.effects.len(), 1);
    assert_eq!(ledger.effects[0].request, RequestId(2));
    let outcomes: Vec<_> = ledger
        .responses
        .iter()
        .map(|r| (r.request, r.outcome, r.end_ms))
        .collect();
    assert_eq!(
        outcomes,
        [
            (
                RequestId(0),
                ResponseOutcome::Sent {
                    status: StatusCode::SERVICE_UNAVAILABLE
                },
                Some(0)
            ),
            (
                RequestId(1),
                ResponseOutcome::Sent {
                    status: StatusCode::SERVICE_UNAVAILABLE
                },
                Some(0)
            ),
            (
                RequestId(2),
                ResponseOutcome::Sent {
                    status: StatusCode::OK
                },
                Some(0)
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn byte_ranges_tile_both_streams() {
    let ep = endpoint(EndpointConfig::http("api").script([Step::status(200).body("hello")]));
    let mut client = open(&ep, 1).await;
    for body in ["a", "bbbb"] {
        let req = request(Method::POST, "/p")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        send(&mut client, req).await.unwrap();
    }
    let ledger = ep.ledger().snapshot();
    let (a, b) = (&ledger.requests[0], &ledger.requests[1]);
    assert_eq!(a.inbound.start, 0);
    assert_eq!(a.inbound.end, b.inbound.start);
    assert!(b.inbound.end > b.inbound.start);
    assert_eq!(a.body, "a");
    assert_eq!(b.body, "bbbb");
    let (ra, rb) = (&ledger.responses[0], &ledger.responses[1]);
    assert_eq!(ra.outbound.start, 0);
    assert_eq!(ra.outbound.end, rb.outbound.start);
    // Head plus the 5 body bytes.
    assert!(rb.outbound.end - rb.outbound.start > 5);
}

#[tokio::test(start_paused = true)]
async fn bodiless_responses_complete_their_record() {
    let ep =
        endpoint(EndpointConfig::http("api").script([Step::status(200).body("not sent to HEAD")]));
    let mut client = open(&ep, 1).await;
    let head = request(Method::HEAD, "/").body(Full::default()).unwrap();
    assert!(send(&mut client, head).await.unwrap().body.is_empty());
    tokio::time::sleep(ms(3)).await;
    send(&mut client, get("/")).await.unwrap();
    let ledger = ep.ledger().snapshot();
    assert_eq!(ledger.responses[0].end_ms, Some(0));
    assert_eq!(ledger.responses[1].end_ms, Some(3));
    assert!(ledger.responses[0].outbound.end > 0);
}

#[tokio::test(start_paused = true)]
async fn headers_keep_order_and_repeats_and_no_date() {
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(429)
            .header("x-first", "1")
            .header("x-second", "2")
            .header("x-first", "3")
            .retry_after(5)
            .body("slow down")]),
    );
    let (bytes, close) = raw(
        &ep,
        ConnInfo::without_reset(1),
        b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n",
    )
    .await;
    let text = String::from_utf8(bytes).unwrap();
    let head: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(
        head,
        [
            "HTTP/1.1 429 Too Many Requests",
            "x-first: 1",
            "x-first: 3",
            "x-second: 2",
            "retry-after: 5",
            // hyper echoes the client's close.
            "connection: close",
            "content-length: 9",
            "",
            "slow down"
        ]
    );
    assert!(!text.to_ascii_lowercase().contains("date:"));
    // The client asked to close; the server closed after answering.
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Fin));
}

#[tokio::test(start_paused = true)]
async fn http_date_retry_after_uses_the_virtual_wall_clock() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .script([Step::status(503).retry_after(RetryAfter::http_date(secs(30)))]),
    );
    tokio::time::sleep(ms(1200)).await;
    let mut client = open(&ep, 1).await;
    let answer = send(&mut client, get("/")).await.unwrap();
    assert_eq!(
        answer.headers["retry-after"],
        "Thu, 01 Jan 2026 00:00:32 GMT"
    );
}

#[tokio::test(start_paused = true)]
async fn with_date_header_each_response_is_dated_from_the_endpoints_clock() {
    // An epoch 400 ms into a second: the head handed over 1.2 s later is in the next one.
    let clock = VirtualClock::new().with_epoch_unix_ms(DEFAULT_EPOCH_UNIX_MS + 400);
    let ep = Endpoint::new(
        EndpointConfig::http("api")
            .date_header(true)
            .script([Step::status(503).retry_after(RetryAfter::http_date(secs(30)))]),
        clock,
    );
    tokio::time::sleep(ms(1200)).await;
    let mut client = open(&ep, 1).await;
    let answer = send(&mut client, get("/")).await.unwrap();
    // The date is the head's second, rounded down; the Retry-After 30 s on, rounded up.
    assert_eq!(answer.headers["date"], "Thu, 01 Jan 2026 00:00:01 GMT");
    assert_eq!(
        answer.headers["retry-after"],
        "Thu, 01 Jan 2026 00:00:32 GMT"
    );
    // A second answer on the same connection gets a date of its own.
    tokio::time::sleep(secs(5)).await;
    let answer = send(&mut client, get("/")).await.unwrap();
    assert_eq!(answer.headers["date"], "Thu, 01 Jan 2026 00:00:06 GMT");
}

#[tokio::test(start_paused = true)]
async fn unmatched_requests_get_404_and_are_recorded() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .route(Route::post("/orders").script([Step::status(201)]))
            .route(
                Route::get("/orders")
                    .header("x-v", "2")
                    .script([Step::status(200)]),
            ),
    );
    let mut client = open(&ep, 1).await;
    assert_eq!(send(&mut client, get("/nope")).await.unwrap().status, 404);
    assert_eq!(send(&mut client, get("/orders")).await.unwrap().status, 404);
    let v2 = request(Method::GET, "/orders")
        .header("x-v", "2")
        .body(Full::default())
        .unwrap();
    assert_eq!(send(&mut client, v2).await.unwrap().status, 200);
    let post = request(Method::POST, "/orders?x=1")
        .body(Full::default())
        .unwrap();
    assert_eq!(send(&mut client, post).await.unwrap().status, 201);
    let routes: Vec<_> = ep
        .ledger()
        .snapshot()
        .requests
        .iter()
        .map(|r| (r.route, r.step))
        .collect();
    assert_eq!(
        routes,
        [
            (None, None),
            (None, None),
            (Some(1), Some(0)),
            (Some(0), Some(0))
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn latency_delays_the_head_exactly() {
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200).latency(ms(1500)).body("{}")]),
    );
    let mut client = open(&ep, 1).await;
    tokio::time::sleep(ms(10)).await;
    let started = Instant::now();
    send(&mut client, get("/")).await.unwrap();
    assert_eq!(started.elapsed(), ms(1500));
    let ledger = ep.ledger().snapshot();
    assert_eq!(ledger.requests[0].at_ms, 10);
    assert_eq!(ledger.responses[0].at_ms, 1510);
    assert_eq!(ledger.responses[0].end_ms, Some(1510));
    assert_eq!(ledger.effects[0].at_ms, 1510);
}

#[tokio::test(start_paused = true)]
async fn commit_survives_a_client_timeout() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .key_header("idempotency-key")
            .script([Step::status(200)
                .latency(secs(2))
                .commit(Commit::BeforeResponse)]),
    );
    let mut client = open(&ep, 1).await;
    let req = request(Method::POST, "/orders")
        .header("idempotency-key", "k1")
        .header(CALL_HEADER, "call-0")
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let result = tokio::time::timeout(secs(1), send(&mut client, req)).await;
    assert!(result.is_err(), "the client gives up first");
    // Giving up closes the connection.
    drop(client.send);
    client.connection.abort();
    let close = client.server.await.unwrap();
    assert_eq!(
        (close.at_ms, close.by, close.how),
        (1000, Side::Client, CloseKind::Fin)
    );

    tokio::time::sleep(secs(2)).await;
    let ledger = ep.ledger().snapshot();
    assert_eq!(ledger.responses.len(), 1);
    assert_eq!(ledger.responses[0].outcome, ResponseOutcome::Abandoned);
    assert_eq!(ledger.responses[0].at_ms, 1000);
    assert_eq!(
        ledger.effects,
        [EffectRecord {
            request: RequestId(0),
            at_ms: 2000,
            key: Some("k1".parse().unwrap()),
            call_tag: Some("call-0".parse().unwrap()),
        }]
    );
}

#[tokio::test(start_paused = true)]
async fn dedupe_rejects_in_flight_then_replays() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("Idempotency-Key"))
            .script([
                Step::status(201)
                    .latency(secs(1))
                    .header("x-order", "o-1")
                    .body("created"),
                Step::status(500),
            ]),
    );
    let keyed = |key: &str, body: &'static str| {
        request(Method::POST, "/orders")
            .header("idempotency-key", key)
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    };
    let mut first = open(&ep, 1).await;
    let mut second = open(&ep, 2).await;
    let pending = tokio::spawn(async move {
        send(&mut first, keyed("k", "{}"))
            .await
            .map(|a| (a.status, a.body))
    });
    tokio::time::sleep(ms(100)).await;
    assert_eq!(
        send(&mut second, keyed("k", "{}")).await.unwrap().status,
        409
    );
    assert_eq!(
        send(&mut second, keyed("k", "{\"other\":1}"))
            .await
            .unwrap()
            .status,
        422
    );
    assert_eq!(
        pending.await.unwrap().unwrap(),
        (StatusCode::CREATED, Bytes::from("created"))
    );

    let replay = send(&mut second, keyed("k", "{}")).await.unwrap();
    assert_eq!(replay.status, 201);
    assert_eq!(replay.headers["x-order"], "o-1");
    assert_eq!(replay.body, "created");
    // Another key runs the script: the next step.
    assert_eq!(
        send(&mut second, keyed("k2", "{}")).await.unwrap().status,
        500
    );

    let ledger = ep.ledger().snapshot();
    let outcomes: Vec<_> = ledger.requests.iter().map(|r| (r.dedupe, r.step)).collect();
    assert_eq!(
        outcomes,
        [
            (DedupeOutcome::First, Some(0)),
            (DedupeOutcome::InFlight { of: RequestId(0) }, None),
            (DedupeOutcome::Mismatch { of: RequestId(0) }, None),
            (DedupeOutcome::Replay { of: RequestId(0) }, None),
            (DedupeOutcome::First, Some(1)),
        ]
    );
    assert_eq!(ledger.effects.len(), 1);
    assert_eq!(ledger.effects_for_key(b"k").count(), 1);
}

#[tokio::test(start_paused = true)]
async fn dedupe_answers_in_flight_and_mismatch_with_whole_responses() {
    // Stripe answers both with a JSON error; an in-flight conflict may say when to come back.
    let in_flight = Step::status(409)
        .header("content-type", "application/json")
        .body(r#"{"error":{"type":"idempotency_error","code":"in_flight"}}"#)
        .retry_after(RetryAfter::http_date(secs(2)));
    let mismatch = Step::status(400)
        .header("content-type", "application/json")
        .body(r#"{"error":{"type":"idempotency_error"}}"#);
    let ep = endpoint(
        EndpointConfig::http("api")
            .dedupe(
                Dedupe::header("Idempotency-Key")
                    .in_flight(in_flight.respond)
                    .mismatch(mismatch.respond),
            )
            .script([Step::status(201).latency(secs(3))]),
    );
    let keyed = |body: &'static str| {
        request(Method::POST, "/charges")
            .header("idempotency-key", "k")
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    };
    let mut first = open(&ep, 1).await;
    let pending = tokio::spawn(async move { send(&mut first, keyed("a")).await.map(|a| a.status) });
    let mut second = open(&ep, 2).await;
    tokio::time::sleep(ms(1000)).await;
    let conflict = send(&mut second, keyed("a")).await.unwrap();
    assert_eq!(conflict.status, 409);
    assert_eq!(conflict.headers["content-type"], "application/json");
    assert_eq!(
        conflict.body,
        r#"{"error":{"type":"idempotency_error","code":"in_flight"}}"#
    );
    // An HTTP-date is rendered when the answer is sent: 1s into the run, plus 2s.
    let at = ep.clock().now_system() + secs(2);
    assert_eq!(
        conflict.headers["retry-after"],
        httpdate::fmt_http_date(at).as_str()
    );
    let wrong = send(&mut second, keyed("b")).await.unwrap();
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.body, r#"{"error":{"type":"idempotency_error"}}"#);
    assert!(!wrong.headers.contains_key("retry-after"));
    assert_eq!(pending.await.unwrap().unwrap(), StatusCode::CREATED);
    let outcomes: Vec<_> = ep
        .ledger()
        .snapshot()
        .requests
        .iter()
        .map(|r| r.dedupe)
        .collect();
    assert_eq!(
        outcomes,
        [
            DedupeOutcome::First,
            DedupeOutcome::InFlight { of: RequestId(0) },
            DedupeOutcome::Mismatch { of: RequestId(0) },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn dedupe_forgets_a_key_ttl_after_its_commit_and_commits_again() {
    // The first answer is lost after the commit: a retry within the ttl runs the next step
    // without a second effect; one at the ttl finds the key forgotten and commits again.
    let ep = endpoint(
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("Idempotency-Key").ttl(secs(10)))
            .script([
                Step::fail(Fail::Reset).commit(Commit::BeforeResponse),
                Step::status(201),
            ]),
    );
    let keyed = || {
        request(Method::POST, "/orders")
            .header("idempotency-key", "k")
            .body(Full::default())
            .unwrap()
    };
    let mut first = open(&ep, 1).await;
    assert!(send(&mut first, keyed()).await.is_err());
    let mut second = open(&ep, 2).await;
    tokio::time::sleep(ms(9_999)).await;
    assert_eq!(send(&mut second, keyed()).await.unwrap().status, 201);
    tokio::time::sleep(ms(1)).await;
    assert_eq!(send(&mut second, keyed()).await.unwrap().status, 201);
    let ledger = ep.ledger().snapshot();
    let seen: Vec<_> = ledger
        .requests
        .iter()
        .map(|r| (r.at_ms, r.dedupe))
        .collect();
    assert_eq!(
        seen,
        [
            (0, DedupeOutcome::First),
            (9_999, DedupeOutcome::AfterCommit { of: RequestId(0) }),
            (10_000, DedupeOutcome::First),
        ]
    );
    let effects: Vec<_> = ledger
        .effects
        .iter()
        .map(|e| (e.request, e.at_ms))
        .collect();
    assert_eq!(effects, [(RequestId(0), 0), (RequestId(2), 10_000)]);
}

#[tokio::test(start_paused = true)]
async fn dedupe_after_a_committed_reset_runs_the_script_without_a_second_effect() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("Idempotency-Key"))
            .script([
                Step::fail(Fail::Reset).commit(Commit::BeforeResponse),
                Step::status(200).body("done"),
            ]),
    );
    let keyed = || {
        request(Method::POST, "/orders")
            .header("idempotency-key", "k")
            .body(Full::default())
            .unwrap()
    };
    let mut first = open(&ep, 1).await;
    assert!(send(&mut first, keyed()).await.is_err());
    let mut second = open(&ep, 2).await;
    assert_eq!(send(&mut second, keyed()).await.unwrap().body, "done");
    assert_eq!(send(&mut second, keyed()).await.unwrap().body, "done");
    let ledger = ep.ledger().snapshot();
    let outcomes: Vec<_> = ledger.requests.iter().map(|r| r.dedupe).collect();
    assert_eq!(
        outcomes,
        [
            DedupeOutcome::First,
            DedupeOutcome::AfterCommit { of: RequestId(0) },
            // The "done" replayed is the rerun's answer, so the replay names the rerun.
            DedupeOutcome::Replay { of: RequestId(1) },
        ]
    );
    assert_eq!(ledger.effects.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn scopes_count_per_connection_and_client() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .route(
                Route::get("/conn")
                    .scope(Scope::Connection)
                    .script([Step::status(503), Step::status(200)]),
            )
            .route(
                Route::get("/client")
                    .scope(Scope::Client)
                    .script([Step::status(503), Step::status(200)]),
            ),
    );
    let mut a = open(&ep, 1).await;
    let mut b = open(&ep, 2).await;
    assert_eq!(send(&mut a, get("/conn")).await.unwrap().status, 503);
    assert_eq!(send(&mut b, get("/conn")).await.unwrap().status, 503);
    assert_eq!(send(&mut a, get("/conn")).await.unwrap().status, 200);
    let client = |id: &str| {
        request(Method::GET, "/client")
            .header(CLIENT_HEADER, id)
            .body(Full::default())
            .unwrap()
    };
    assert_eq!(send(&mut a, client("c1")).await.unwrap().status, 503);
    assert_eq!(send(&mut b, client("c1")).await.unwrap().status, 200);
    assert_eq!(send(&mut b, client("c2")).await.unwrap().status, 503);
}

#[tokio::test(start_paused = true)]
async fn max_requests_closes_after_the_nth_response() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .script([Step::status(200)])
            .keep_alive(KeepAlive::default().max_requests(2)),
    );
    let mut client = open(&ep, 7).await;
    let first = send(&mut client, get("/")).await.unwrap();
    assert!(!first.headers.contains_key("connection"));
    tokio::time::sleep(ms(5)).await;
    let second = send(&mut client, get("/")).await.unwrap();
    assert_eq!(second.headers["connection"], "close");
    let close = client.server.await.unwrap();
    assert_eq!(
        close,
        CloseRecord {
            conn_id: 7,
            at_ms: 5,
            by: Side::Server,
            how: CloseKind::Fin
        }
    );
    assert_eq!(ep.ledger().snapshot().closes, [close]);
}

#[tokio::test(start_paused = true)]
async fn idle_timeout_closes_idle_connections() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .script([Step::status(200).latency(secs(3))])
            .keep_alive(KeepAlive::default().idle_timeout(secs(5))),
    );
    let mut client = open(&ep, 1).await;
    tokio::time::sleep(secs(4)).await;
    // Idle for 4 s: still open. The request restarts the timer and is in flight for 3 s.
    send(&mut client, get("/")).await.unwrap();
    let close = client.server.await.unwrap();
    assert_eq!(
        (close.at_ms, close.by, close.how),
        (4000 + 3000 + 5000, Side::Server, CloseKind::Fin)
    );
}

#[tokio::test(start_paused = true)]
async fn fail_close_sends_no_bytes() {
    let ep =
        endpoint(EndpointConfig::http("api").script([Step::fail(Fail::Close).latency(ms(250))]));
    let (bytes, close) = raw(
        &ep,
        ConnInfo::without_reset(1),
        b"GET / HTTP/1.1\r\nhost: api\r\n\r\n",
    )
    .await;
    assert!(bytes.is_empty(), "{:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(
        (close.at_ms, close.by, close.how),
        (250, Side::Server, CloseKind::Fin)
    );
    let response = &ep.ledger().snapshot().responses[0];
    assert_eq!(
        (response.at_ms, response.outcome),
        (250, ResponseOutcome::Failed(Fail::Close))
    );
}

#[tokio::test(start_paused = true)]
async fn fail_close_is_an_incomplete_message_for_hyper() {
    let ep = endpoint(EndpointConfig::http("api").script([Step::fail(Fail::Close)]));
    let mut client = open(&ep, 1).await;
    let error = send(&mut client, get("/")).await.err().unwrap();
    assert!(error.is_incomplete_message(), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn fail_reset_uses_the_connection_control() {
    let ep = endpoint(EndpointConfig::http("api").script([Step::fail(Fail::Reset)]));
    let resets = Arc::new(CountResets::default());
    let mut client = open_with(&ep, ConnInfo::new(3, resets.clone())).await;
    assert!(send(&mut client, get("/")).await.is_err());
    let close = client.server.await.unwrap();
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Reset));
    assert_eq!(resets.0.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn hang_reads_the_request_and_never_answers() {
    let ep = endpoint(EndpointConfig::http("api").script([Step::fail(Fail::Hang)]));
    let mut client = open(&ep, 1).await;
    let result = tokio::time::timeout(secs(60), send(&mut client, get("/"))).await;
    assert!(result.is_err());
    assert!(!client.server.is_finished(), "the connection stays open");
    let ledger = ep.ledger().snapshot();
    assert_eq!(ledger.requests.len(), 1);
    assert_eq!(
        ledger.responses[0].outcome,
        ResponseOutcome::Failed(Fail::Hang)
    );
    assert!(ledger.closes.is_empty());
}

#[tokio::test(start_paused = true)]
async fn close_after_bytes_sends_head_and_prefix_then_fin() {
    // `after_bytes` counts the response on the wire: the 39-byte head, then 4 body bytes.
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200)
            .body("0123456789")
            .latency(ms(20))
            .fail_with(Fail::close_after(43))]),
    );
    let (bytes, close) = raw(
        &ep,
        ConnInfo::without_reset(1),
        b"GET / HTTP/1.1\r\nhost: api\r\n\r\n",
    )
    .await;
    let text = String::from_utf8(bytes).unwrap();
    assert_eq!(text, "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123");
    assert_eq!(
        (close.at_ms, close.by, close.how),
        (20, Side::Server, CloseKind::Fin)
    );
    let ledger = ep.ledger().snapshot();
    let response = &ledger.responses[0];
    let truncated = ResponseOutcome::Truncated {
        status: StatusCode::OK,
        fail: Fail::close_after(43),
    };
    assert_eq!(response.outcome, truncated);
    assert_eq!(response.end_ms, Some(20));
    assert_eq!(response.outbound, 0..text.len() as u64);
    // A truncated 2xx committed by default.
    assert_eq!(ledger.effects.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn reset_after_the_head_sends_the_head_only() {
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200)
            .body("abc")
            .fail_with(Fail::reset_after(38))]),
    );
    let resets = Arc::new(CountResets::default());
    let (bytes, close) = raw(
        &ep,
        ConnInfo::new(1, resets.clone()),
        b"GET / HTTP/1.1\r\nhost: api\r\n\r\n",
    )
    .await;
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n"
    );
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Reset));
    assert_eq!(resets.0.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn truncated_body_is_an_error_for_hyper() {
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200)
            .body("0123456789")
            .fail_with(Fail::close_after(43))]),
    );
    let mut client = open(&ep, 1).await;
    client.send.ready().await.unwrap();
    let response = client.send.send_request(get("/")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.into_body().collect().await.is_err());
}

#[tokio::test(start_paused = true)]
async fn cut_inside_the_head_is_a_broken_response() {
    let ep = endpoint(EndpointConfig::http("api").script([Step::fail(Fail::reset_after(4))]));
    let resets = Arc::new(CountResets::default());
    let (bytes, close) = raw(
        &ep,
        ConnInfo::new(1, resets.clone()),
        b"GET / HTTP/1.1\r\nhost: api\r\n\r\n",
    )
    .await;
    assert_eq!(String::from_utf8(bytes).unwrap(), "HTTP");
    assert_eq!((close.by, close.how), (Side::Server, CloseKind::Reset));
}

#[tokio::test(start_paused = true)]
async fn same_run_twice_gives_the_same_ledger() {
    async fn run() -> String {
        let ep = endpoint(EndpointConfig::http("api").script([
            Step::status(503).latency(ms(3)),
            Step::status(200).latency(ms(7)).body("x"),
        ]));
        let mut a = open(&ep, 1).await;
        let mut b = open(&ep, 2).await;
        let (ra, rb) = tokio::join!(send(&mut a, get("/a")), send(&mut b, get("/b")));
        ra.unwrap();
        rb.unwrap();
        let ledger = ep.ledger().snapshot();
        format!(
            "{:?}{:?}{:?}",
            ledger.requests, ledger.responses, ledger.effects
        )
    }
    let first = run().await;
    assert_eq!(first, run().await);
}

#[tokio::test(start_paused = true)]
async fn a_trickled_body_arrives_in_timed_chunks_and_ends_on_time() {
    // Ten bytes over 1s: ten one-byte chunks, one every 100ms after the head at 20ms.
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200)
            .latency(ms(20))
            .body("0123456789")
            .trickle(secs(1))]),
    );
    let mut client = open(&ep, 1).await;
    client.send.ready().await.unwrap();
    let started = Instant::now();
    let response = client.send.send_request(get("/")).await.unwrap();
    assert_eq!(started.elapsed(), ms(20));
    let mut body = response.into_body();
    let mut arrivals = Vec::new();
    while let Some(frame) = body.frame().await {
        let data = frame.unwrap().into_data().unwrap();
        arrivals.push((started.elapsed().as_millis(), data));
    }
    let expected: Vec<_> = (1..=10u8)
        .map(|k| (20 + 100 * u128::from(k), Bytes::from(vec![b'0' + k - 1])))
        .collect();
    assert_eq!(arrivals, expected);
    let response = &ep.ledger().snapshot().responses[0];
    assert_eq!((response.at_ms, response.end_ms), (20, Some(1020)));
}

#[tokio::test(start_paused = true)]
async fn a_cut_in_a_trickled_body_lands_with_the_chunk_that_reaches_it() {
    // Head 39 bytes, then one byte every 100ms: the 4th body byte is the 43rd, at 400ms.
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200)
            .body("0123456789")
            .trickle(secs(1))
            .fail_with(Fail::close_after(43))]),
    );
    let (bytes, close) = raw(
        &ep,
        ConnInfo::without_reset(1),
        b"GET / HTTP/1.1\r\nhost: api\r\n\r\n",
    )
    .await;
    let text = String::from_utf8(bytes).unwrap();
    assert_eq!(text, "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123");
    assert_eq!(
        (close.at_ms, close.by, close.how),
        (400, Side::Server, CloseKind::Fin)
    );
    let response = &ep.ledger().snapshot().responses[0];
    assert_eq!((response.at_ms, response.end_ms), (0, Some(400)));
    assert_eq!(response.outbound, 0..43);
}

#[tokio::test(start_paused = true)]
async fn a_trickled_answer_to_head_ends_with_its_head() {
    let ep = endpoint(
        EndpointConfig::http("api").script([Step::status(200).body("0123456789").trickle(secs(1))]),
    );
    let mut client = open(&ep, 1).await;
    let answer = send(
        &mut client,
        request(Method::HEAD, "/").body(Full::default()).unwrap(),
    )
    .await
    .unwrap();
    assert!(answer.body.is_empty());
    let response = &ep.ledger().snapshot().responses[0];
    assert_eq!((response.at_ms, response.end_ms), (0, Some(0)));
}

#[tokio::test(start_paused = true)]
async fn a_crash_ends_the_steps_in_progress_and_keeps_what_was_committed() {
    let ep = endpoint(
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("Idempotency-Key"))
            .route(
                Route::post("/arrival")
                    .script([Step::status(201).latency(secs(2)).commit(Commit::Arrival)]),
            )
            .route(
                Route::post("/before").script([Step::status(201)
                    .latency(secs(2))
                    .commit(Commit::BeforeResponse)]),
            ),
    );
    let keyed = |path: &str, key: &str| {
        request(Method::POST, path)
            .header("idempotency-key", key)
            .body(Full::default())
            .unwrap()
    };
    let mut first = open(&ep, 1).await;
    let mut second = open(&ep, 2).await;
    // Neither answer ever comes: the endpoint crashes while both are in their latency.
    let arrival =
        tokio::spawn(async move { send(&mut first, keyed("/arrival", "a")).await.is_ok() });
    let before =
        tokio::spawn(async move { send(&mut second, keyed("/before", "b")).await.is_ok() });
    tokio::time::sleep(secs(1)).await;
    assert_eq!(ep.steps_in_progress(), 2);
    ep.crash();
    // The steps end at the crash, not when their latency would have.
    let crashed_at = Instant::now();
    ep.idle().await;
    assert_eq!(Instant::now(), crashed_at);
    tokio::time::sleep(secs(5)).await;
    assert!(
        !arrival.is_finished() && !before.is_finished(),
        "no answer after a crash"
    );
    arrival.abort();
    before.abort();
    let ledger = ep.ledger().snapshot();
    let effects: Vec<_> = ledger
        .effects
        .iter()
        .map(|e| (e.request, e.at_ms))
        .collect();
    assert_eq!(
        effects,
        [(RequestId(0), 0)],
        "the arrival commit stays, the other never happens"
    );

    ep.restart(ScriptState::Keep);
    let mut retry = open(&ep, 3).await;
    assert_eq!(
        send(&mut retry, keyed("/arrival", "a"))
            .await
            .unwrap()
            .status,
        201
    );
    assert_eq!(
        send(&mut retry, keyed("/before", "b"))
            .await
            .unwrap()
            .status,
        201
    );
    let ledger = ep.ledger().snapshot();
    let outcomes: Vec<_> = ledger.requests.iter().map(|r| r.dedupe).collect();
    assert_eq!(
        outcomes,
        [
            DedupeOutcome::First,
            DedupeOutcome::First,
            // The crash released both keys: the committed one is not a new effect.
            DedupeOutcome::AfterCommit { of: RequestId(0) },
            DedupeOutcome::First,
        ]
    );
    let effects: Vec<_> = ledger.effects.iter().map(|e| e.request).collect();
    assert_eq!(effects, [RequestId(0), RequestId(3)]);
}

#[tokio::test(start_paused = true)]
async fn a_restart_keeps_or_resets_the_scripts() {
    for (scripts, after) in [
        (ScriptState::Keep, [200, 200]),
        (ScriptState::Reset, [503, 200]),
    ] {
        let ep = endpoint(
            EndpointConfig::http("api")
                .script([Step::status(503), Step::status(200)])
                .connect([ConnectStep::refuse(), ConnectStep::accept()]),
        );
        assert_eq!(ep.on_connect(1), ConnectAction::Refuse);
        let mut client = open(&ep, 1).await;
        assert_eq!(send(&mut client, get("/")).await.unwrap().status, 503);
        ep.crash();
        ep.restart(scripts);
        let connect = match scripts {
            ScriptState::Reset => ConnectAction::Refuse,
            _ => ConnectAction::Accept,
        };
        assert_eq!(ep.on_connect(2), connect, "{scripts:?}");
        let mut client = open(&ep, 2).await;
        let mut statuses = Vec::new();
        for _ in 0..2 {
            statuses.push(send(&mut client, get("/")).await.unwrap().status.as_u16());
        }
        assert_eq!(statuses, after, "{scripts:?}");
    }
}

/// A rate limiter of 3 tokens a second and a bucket of two, in front of a script: requests
/// sent at chosen virtual instants meet the refill schedule to the millisecond (tokens due
/// at 333.3ms, 666.7ms and 1000ms are there from 334ms, 667ms and 1000ms), an empty bucket
/// answers 429 with the whole seconds to its next token, and only requests with a token
/// consume script steps.
#[tokio::test(start_paused = true)]
async fn rate_limiter_answers_on_its_refill_schedule_to_the_millisecond() {
    let clock = VirtualClock::new();
    let endpoint = Endpoint::new(
        EndpointConfig::http("api")
            .rate_limit(RateLimit::per_second(3).burst(2))
            .script([Step::status(503), Step::status(200)]),
        clock,
    );
    let mut client = open(&endpoint, 1).await;
    let mut answers = Vec::new();
    for at in [0, 0, 0, 333, 334, 666, 667, 999, 1000, 2999] {
        tokio::time::sleep_until(clock.start + ms(at)).await;
        let answer = send(&mut client, get("/")).await.unwrap();
        let retry_after = answer
            .headers
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        answers.push((at, answer.status.as_u16(), retry_after));
    }
    let limited = |at| (at, 429, Some("1".to_owned()));
    assert_eq!(
        answers,
        [
            (0, 503, None),
            (0, 200, None),
            limited(0),
            limited(333),
            (334, 200, None),
            limited(666),
            (667, 200, None),
            limited(999),
            (1000, 200, None),
            // Two seconds idle refill the bucket to its two tokens, no more.
            (2999, 200, None),
        ]
    );
    let ledger = endpoint.ledger().snapshot();
    let limited_ids: Vec<u64> = ledger.rate_limited.iter().map(|id| id.0).collect();
    assert_eq!(limited_ids, [2, 3, 5, 7]);
    // A limited request reaches no step; the others take the script's steps in order.
    let steps: Vec<Option<usize>> = ledger.requests.iter().map(|r| r.step).collect();
    use Option::None as N;
    assert_eq!(
        steps,
        [
            Some(0),
            Some(1),
            N,
            N,
            Some(1),
            N,
            Some(1),
            N,
            Some(1),
            Some(1)
        ]
    );
    assert_eq!(ledger.effects.len(), 5);
}

/// Retry-After is the wait for the next token in whole seconds, rounded up: a token every
/// 2.5s, asked at 1ms, 1.499s and 1.5s after the bucket emptied, answers 3, 2 and 1; a
/// request exactly that long later finds the token.
#[tokio::test(start_paused = true)]
async fn waiting_the_rate_limiters_retry_after_finds_a_token() {
    for (asked_at, expected) in [(1, 3), (1499, 2), (1500, 1)] {
        let clock = VirtualClock::new();
        let endpoint = Endpoint::new(
            EndpointConfig::http("api")
                .rate_limit(RateLimit::millitokens_per_second(400).aws_throttling())
                .script([Step::status(200)]),
            clock,
        );
        let mut client = open(&endpoint, 1).await;
        // The only token goes at 0ms; the next is due at 2.5s.
        assert_eq!(send(&mut client, get("/")).await.unwrap().status, 200);
        tokio::time::sleep_until(clock.start + ms(asked_at)).await;
        let throttled = send(&mut client, get("/")).await.unwrap();
        assert_eq!(throttled.status, 400);
        assert_eq!(throttled.headers["x-amzn-errortype"], "ThrottlingException");
        let seconds: u64 = throttled.headers["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            seconds, expected,
            "asked {asked_at}ms after the bucket emptied"
        );
        tokio::time::sleep(secs(seconds)).await;
        assert_eq!(send(&mut client, get("/")).await.unwrap().status, 200);
        assert_eq!(endpoint.ledger().snapshot().rate_limited.len(), 1);
    }
}

/// A crash and a restart that resets the scripts leave the rate limiter's bucket as it was.
#[tokio::test(start_paused = true)]
async fn a_restart_leaves_the_rate_limiters_bucket_as_it_was() {
    let endpoint = Endpoint::new(
        EndpointConfig::http("api")
            .rate_limit(RateLimit::per_second(1))
            .script([Step::status(200)]),
        VirtualClock::new(),
    );
    let mut client = open(&endpoint, 1).await;
    assert_eq!(send(&mut client, get("/")).await.unwrap().status, 200);
    endpoint.crash();
    endpoint.restart(ScriptState::Reset);
    let mut client = open(&endpoint, 2).await;
    assert_eq!(send(&mut client, get("/")).await.unwrap().status, 429);
    tokio::time::sleep(secs(1)).await;
    assert_eq!(send(&mut client, get("/")).await.unwrap().status, 200);
}
