//! gRPC answers on HTTP/2 endpoints (`Step::grpc`): the length-prefixed message and the
//! status in trailers, trailers-only errors, the pushback, and the request fields the ledger
//! keeps. Driven by hyper's HTTP/2 client over `tokio::io::duplex` on a paused runtime.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use retrylab_endpoints::*;
use tokio::time::Instant;

async fn open(endpoint: &Endpoint) -> SendRequest<Full<Bytes>> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.serve(server_io, ConnInfo::without_reset(1)).await }
    });
    let (send, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .handshake(TokioIo::new(client_io))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    send
}

/// A unary call as a gRPC client sends it: POST, `te: trailers`, one empty message.
fn call(path: &str, previous: Option<&str>) -> Request<Full<Bytes>> {
    let mut request = Request::post(format!("http://api{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("grpc-timeout", "2S");
    if let Some(previous) = previous {
        request = request.header("grpc-previous-rpc-attempts", previous);
    }
    request
        .body(Full::new(Bytes::from_static(&[0, 0, 0, 0, 0])))
        .unwrap()
}

/// What came back: the head's fields, the DATA bytes and the trailers.
struct Answer {
    head: HeaderMap,
    data: Bytes,
    trailers: Option<HeaderMap>,
}

async fn send(send: &mut SendRequest<Full<Bytes>>, request: Request<Full<Bytes>>) -> Answer {
    send.ready().await.unwrap();
    let response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let head = response.headers().clone();
    let collected = response.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned();
    Answer {
        head,
        data: collected.to_bytes(),
        trailers,
    }
}

fn field<'a>(fields: &'a HeaderMap, name: &str) -> Option<&'a str> {
    fields.get(name).map(|v| v.to_str().unwrap())
}

fn grpc_endpoint(config: EndpointConfig) -> Endpoint {
    Endpoint::new(config.protocol(Protocol::Http2), VirtualClock::new())
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn unavailable_twice_with_a_pushback_then_ok_with_a_message() {
    let endpoint = grpc_endpoint(
        EndpointConfig::http("api").script([
            Step::grpc(
                GrpcReply::new(GrpcCode::UNAVAILABLE)
                    .message("overloaded, 100%")
                    .pushback_ms(500),
            )
            .times(2),
            Step::grpc(GrpcReply::new(GrpcCode::OK).reply(&b"\x0a\x02hi"[..]))
                .latency(Duration::from_millis(30)),
        ]),
    );
    let mut client = open(&endpoint).await;
    // Trailers-only: the status in the head, no DATA, no trailers.
    for previous in [None, Some("1")] {
        let answer = send(&mut client, call("/echo.v1.Echo/Say", previous)).await;
        assert_eq!(
            field(&answer.head, "content-type"),
            Some("application/grpc")
        );
        assert_eq!(field(&answer.head, "grpc-status"), Some("14"));
        assert_eq!(
            field(&answer.head, "grpc-message"),
            Some("overloaded, 100%25")
        );
        assert_eq!(field(&answer.head, "grpc-retry-pushback-ms"), Some("500"));
        assert!(answer.data.is_empty());
        assert!(answer.trailers.is_none());
    }
    let started = Instant::now();
    let answer = send(&mut client, call("/echo.v1.Echo/Say", Some("2"))).await;
    assert_eq!(started.elapsed(), Duration::from_millis(30));
    assert_eq!(field(&answer.head, "grpc-status"), None);
    assert_eq!(&answer.data[..], b"\x00\x00\x00\x00\x04\x0a\x02hi");
    let trailers = answer.trailers.expect("trailers");
    assert_eq!(field(&trailers, "grpc-status"), Some("0"));
    assert_eq!(field(&trailers, "grpc-retry-pushback-ms"), None);

    let ledger = endpoint.ledger().snapshot();
    // The request fields a retry policy is judged by are kept with each request.
    let previous: Vec<_> = ledger
        .requests
        .iter()
        .map(|r| {
            r.headers
                .get("grpc-previous-rpc-attempts")
                .map(|v| v.to_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(previous, [None, Some("1".to_owned()), Some("2".to_owned())]);
    let codes: Vec<_> = ledger
        .responses
        .iter()
        .map(|r| r.grpc.as_ref().map(|g| g.code.name()))
        .collect();
    assert_eq!(
        codes,
        [Some("UNAVAILABLE"), Some("UNAVAILABLE"), Some("OK")]
    );
    assert!(ledger.responses.iter().all(|r| r.end_ms.is_some()));
    // Only the OK answer committed.
    assert_eq!(ledger.effects.len(), 1);
    assert_eq!(ledger.effects[0].request, RequestId(2));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_ok_answer_without_a_reply_sends_the_empty_message_and_routes_match_the_method() {
    let endpoint = grpc_endpoint(
        EndpointConfig::http("api")
            .route(
                Route::post("/echo.v1.Echo/Say").script([Step::grpc(GrpcReply::new(GrpcCode::OK))]),
            )
            .route(Route::any().script([Step::grpc(GrpcReply::new(GrpcCode::new(12).unwrap()))])),
    );
    let mut client = open(&endpoint).await;
    let answer = send(&mut client, call("/echo.v1.Echo/Say", None)).await;
    assert_eq!(&answer.data[..], &[0, 0, 0, 0, 0]);
    let trailers = answer.trailers.expect("trailers");
    assert_eq!(field(&trailers, "grpc-status"), Some("0"));
    assert_eq!(field(&trailers, "grpc-message"), None);
    let answer = send(&mut client, call("/echo.v1.Echo/Shout", None)).await;
    assert_eq!(field(&answer.head, "grpc-status"), Some("12"));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_error_with_a_reply_and_a_raw_pushback_goes_in_trailers() {
    let endpoint = grpc_endpoint(
        EndpointConfig::http("api").script([Step::grpc(
            GrpcReply::new(GrpcCode::UNAVAILABLE)
                .reply(Bytes::new())
                .pushback_raw(http::HeaderValue::from_static("-1")),
        )
        .header("x-served-by", "a")]),
    );
    let mut client = open(&endpoint).await;
    let answer = send(&mut client, call("/echo.v1.Echo/Say", None)).await;
    assert_eq!(field(&answer.head, "grpc-status"), None);
    assert_eq!(field(&answer.head, "x-served-by"), Some("a"));
    assert_eq!(&answer.data[..], &[0, 0, 0, 0, 0]);
    let trailers = answer.trailers.expect("trailers");
    assert_eq!(field(&trailers, "grpc-status"), Some("14"));
    assert_eq!(field(&trailers, "grpc-retry-pushback-ms"), Some("-1"));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_dated_endpoint_dates_grpc_answers_in_either_form_and_an_undated_one_does_not() {
    // An epoch 400 ms into a second: a head handed over 1.2 s later is in the next one, as on
    // HTTP/1 (`serve.rs`). Real sockets date every answer; the sim leaves dates out.
    let clock = VirtualClock::new().with_epoch_unix_ms(DEFAULT_EPOCH_UNIX_MS + 400);
    let steps = || {
        [
            Step::grpc(GrpcReply::new(GrpcCode::UNAVAILABLE)),
            Step::grpc(GrpcReply::new(GrpcCode::OK)),
            Step::status(503),
        ]
    };
    let dated = Endpoint::new(
        EndpointConfig::http("api")
            .protocol(Protocol::Http2)
            .date_header(true)
            .script(steps()),
        clock,
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut client = open(&dated).await;
    // Trailers-only, then a message with trailers: the head carries the Date either way.
    let trailers_only = send(&mut client, call("/echo.v1.Echo/Say", None)).await;
    assert_eq!(field(&trailers_only.head, "grpc-status"), Some("14"));
    assert_eq!(
        field(&trailers_only.head, "date"),
        Some("Thu, 01 Jan 2026 00:00:01 GMT")
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    let ok = send(&mut client, call("/echo.v1.Echo/Say", Some("1"))).await;
    assert_eq!(
        field(&ok.head, "date"),
        Some("Thu, 01 Jan 2026 00:00:06 GMT")
    );
    assert_eq!(field(&ok.trailers.expect("trailers"), "date"), None);
    // A plain HTTP/2 answer of the same endpoint is dated too.
    dated_plain_answer(&mut client).await;

    let undated = grpc_endpoint(EndpointConfig::http("api").script(steps()));
    let mut client = open(&undated).await;
    let answer = send(&mut client, call("/echo.v1.Echo/Say", None)).await;
    assert_eq!(field(&answer.head, "date"), None);
}

/// The plain 503 of a dated endpoint carries a Date (its status is not gRPC's 200).
async fn dated_plain_answer(client: &mut SendRequest<Full<Bytes>>) {
    client.ready().await.unwrap();
    let response = client
        .send_request(call("/echo.v1.Echo/Say", Some("2")))
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers().get("date").map(|v| v.to_str().unwrap()),
        Some("Thu, 01 Jan 2026 00:00:06 GMT")
    );
}
