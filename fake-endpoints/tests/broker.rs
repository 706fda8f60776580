//! A broker served over `tokio::io::duplex` on a paused runtime: what it answers, what it
//! stores and when, to the millisecond.

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use retrylab_endpoints::*;

async fn open(endpoint: &Endpoint, conn_id: u64) -> SendRequest<Full<Bytes>> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn({
        let endpoint = endpoint.clone();
        async move {
            endpoint
                .serve(server_io, ConnInfo::without_reset(conn_id))
                .await
        }
    });
    let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(client_io))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    send
}

fn send_to(method: Method, path: &str, body: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "broker")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

fn message(key: &str) -> Request<Full<Bytes>> {
    send_to(
        Method::POST,
        "/topics/orders/messages",
        &format!(r#"{{"key":"{key}","body":"paid"}}"#),
    )
}

/// The status and the body of the answer.
async fn answer(client: &mut SendRequest<Full<Bytes>>, req: Request<Full<Bytes>>) -> (u16, String) {
    client.ready().await.unwrap();
    let response = client.send_request(req).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn broker(steps: impl IntoIterator<Item = Step>) -> Endpoint {
    Endpoint::new(
        EndpointConfig::http("broker")
            .broker(Broker::new().topics(["orders"]))
            .script(steps),
        VirtualClock::new(),
    )
}

/// (request, instant, key, id) of each stored message.
fn stored(endpoint: &Endpoint) -> Vec<(u64, u64, Option<String>, String)> {
    endpoint.ledger().with(|l| {
        l.messages
            .iter()
            .map(|m| {
                assert_eq!(&*m.topic, "orders");
                (
                    m.request.0,
                    m.at_ms,
                    m.key.as_deref().map(str::to_owned),
                    m.id.to_string(),
                )
            })
            .collect()
    })
}

/// The `RocketMQ` documentation's duplicate: the broker stores the send on arrival and answers
/// 3s later; the producer gives up at 1s and sends the same message again, which is stored a
/// second time, with its own id. The broker does not deduplicate.
#[tokio::test(start_paused = true)]
async fn a_send_committed_then_timed_out_is_stored_twice() {
    let ep = broker([
        Step::status(200).latency(secs(3)).commit(Commit::Arrival),
        Step::status(200).latency(ms(5)),
    ]);
    let mut first = open(&ep, 1).await;
    let timed_out = tokio::time::timeout(secs(1), answer(&mut first, message("o-5"))).await;
    assert!(timed_out.is_err(), "the producer gives up at 1s");
    drop(first);
    let mut second = open(&ep, 2).await;
    assert_eq!(
        answer(&mut second, message("o-5")).await,
        (200, r#"{"message_id":"broker-2"}"#.to_owned())
    );
    assert_eq!(
        stored(&ep),
        [
            (0, 0, Some("o-5".into()), "broker-1".into()),
            (1, 1005, Some("o-5".into()), "broker-2".into()),
        ]
    );
    // Each stored message is one of the broker's effects too.
    ep.idle().await;
    let effects: Vec<u64> = ep
        .ledger()
        .with(|l| l.effects.iter().map(|e| e.at_ms).collect());
    assert_eq!(effects, [0, 1005]);
}

/// Anything but a send to one of its topics is answered by the broker itself, with a JSON
/// error, and consumes no step; the first send then gets the script's first step.
#[tokio::test(start_paused = true)]
async fn what_is_not_a_send_is_answered_without_a_step() {
    let ep = broker([Broker::error_code(530), Step::status(200)]);
    let mut client = open(&ep, 1).await;
    let not_found = r#"{"code":40400,"message":"NOT_FOUND"}"#.to_owned();
    assert_eq!(
        answer(
            &mut client,
            send_to(Method::GET, "/topics/orders/messages", "")
        )
        .await,
        (404, not_found.clone())
    );
    assert_eq!(
        answer(&mut client, send_to(Method::POST, "/orders", "{}")).await,
        (404, not_found)
    );
    assert_eq!(
        answer(
            &mut client,
            send_to(Method::POST, "/topics/payments/messages", "{}")
        )
        .await,
        (
            404,
            r#"{"code":40402,"message":"TOPIC_NOT_FOUND"}"#.to_owned()
        )
    );
    assert_eq!(
        answer(
            &mut client,
            send_to(Method::POST, "/topics/orders/messages", "paid")
        )
        .await,
        (400, r#"{"code":40000,"message":"BAD_REQUEST"}"#.to_owned())
    );
    assert_eq!(
        answer(&mut client, message("o-1")).await,
        (
            429,
            r#"{"code":530,"message":"TOO_MANY_REQUESTS"}"#.to_owned()
        )
    );
    assert_eq!(
        answer(&mut client, message("o-1")).await,
        (200, r#"{"message_id":"broker-1"}"#.to_owned())
    );
    let (routes, steps): (Vec<_>, Vec<_>) = ep
        .ledger()
        .with(|l| l.requests.iter().map(|r| (r.route, r.step)).unzip());
    // A wrong path or topic matched no route; a bad body reached the route, not a step.
    assert_eq!(routes, [None, None, None, Some(0), Some(0), Some(0)]);
    assert_eq!(steps, [None, None, None, None, Some(0), Some(1)]);
    assert_eq!(stored(&ep), [(5, 0, Some("o-1".into()), "broker-1".into())]);
}

/// A slow 2xx stores the message just before it answers; a 2xx that commits nothing
/// acknowledges no id; a step's own body is sent as written; an error stores nothing.
#[tokio::test(start_paused = true)]
async fn a_slow_answer_stores_just_before_it_is_sent() {
    let ep = broker([
        Step::status(200).latency(ms(250)),
        Step::status(200).commit(Commit::Never),
        Broker::error_code(50001).latency(ms(10)),
        Step::status(201).body(r#"{"id":"scripted"}"#),
    ]);
    let mut client = open(&ep, 1).await;
    let start = tokio::time::Instant::now();
    assert_eq!(
        answer(&mut client, message("o-1")).await,
        (200, r#"{"message_id":"broker-1"}"#.to_owned())
    );
    assert_eq!(start.elapsed(), ms(250));
    assert_eq!(
        answer(&mut client, message("o-2")).await,
        (200, r#"{"message_id":null}"#.to_owned())
    );
    assert_eq!(
        answer(&mut client, message("o-3")).await,
        (500, r#"{"code":50001,"message":"BROKER_ERROR"}"#.to_owned())
    );
    assert_eq!(
        answer(&mut client, message("o-4")).await,
        (201, r#"{"id":"scripted"}"#.to_owned())
    );
    assert_eq!(
        stored(&ep),
        [
            (0, 250, Some("o-1".into()), "broker-1".into()),
            (3, 260, Some("o-4".into()), "broker-2".into()),
        ]
    );
}

/// Without a `key` in its body, a send's key is the endpoint's key header, if it carries
/// one; otherwise the message has none.
#[tokio::test(start_paused = true)]
async fn a_send_without_a_key_field_takes_the_key_header() {
    let ep = Endpoint::new(
        EndpointConfig::http("broker")
            .broker(Broker::new())
            .key_header("KEYS")
            .script([Step::status(200)]),
        VirtualClock::new(),
    );
    let mut client = open(&ep, 1).await;
    let keyed = Request::builder()
        .method(Method::POST)
        .uri("/topics/orders/messages")
        .header("host", "broker")
        .header("KEYS", "k-7")
        .body(Full::new(Bytes::from_static(br#"{"body":"paid"}"#)))
        .unwrap();
    answer(&mut client, keyed).await;
    let bare = send_to(
        Method::POST,
        "/topics/orders/messages",
        r#"{"body":"paid"}"#,
    );
    answer(&mut client, bare).await;
    assert_eq!(
        stored(&ep),
        [
            (0, 0, Some("k-7".into()), "broker-1".into()),
            (1, 0, None, "broker-2".into()),
        ]
    );
}

/// A crash keeps the messages stored (on arrival), ends the answer in progress, and the
/// ids go on from where they were after the restart.
#[tokio::test(start_paused = true)]
async fn a_crash_keeps_the_stored_messages_and_their_count() {
    let ep = broker([
        Step::status(200).latency(secs(1)).commit(Commit::Arrival),
        Step::status(200).latency(secs(1)),
        Step::status(200),
    ]);
    let mut first = open(&ep, 1).await;
    let mut second = open(&ep, 2).await;
    let a = tokio::spawn(async move { answer(&mut first, message("o-1")).await });
    tokio::time::sleep(ms(1)).await;
    let b = tokio::spawn(async move { answer(&mut second, message("o-2")).await });
    tokio::time::sleep(ms(500)).await;
    ep.crash();
    ep.restart(ScriptState::Keep);
    tokio::time::sleep(secs(2)).await;
    assert!(
        !a.is_finished() && !b.is_finished(),
        "neither answer ever comes"
    );
    let mut third = open(&ep, 3).await;
    assert_eq!(
        answer(&mut third, message("o-3")).await,
        (200, r#"{"message_id":"broker-2"}"#.to_owned())
    );
    // o-1 was stored on arrival and kept; o-2 would have been stored at 1.001s, after the
    // crash at 0.501s.
    assert_eq!(
        stored(&ep),
        [
            (0, 0, Some("o-1".into()), "broker-1".into()),
            (2, 2501, Some("o-3".into()), "broker-2".into()),
        ]
    );
}
