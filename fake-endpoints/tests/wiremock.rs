//! `ScriptResponder` mounted on a real wiremock `MockServer` (127.0.0.1), driven over TCP by
//! hyper-util's legacy client, in real time.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retrylab_endpoints::date::parse_lenient;
use retrylab_endpoints::wiremock::ScriptResponder;
use retrylab_endpoints::{
    DEFAULT_EPOCH_UNIX_MS, Dedupe, DedupeOutcome, EndpointConfig, Fail, HttpDateFormat, RequestId,
    ResponseOutcome, RetryAfter, Route, Scope, Step, VirtualClock, ms, secs,
};
use tokio::time::Instant;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

fn request(method: Method, server: &MockServer, target: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(format!("{}{target}", server.uri()))
}

async fn send(client: &HttpClient, request: Request<Full<Bytes>>) -> Answer {
    let response = client.request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

async fn get(client: &HttpClient, server: &MockServer, target: &str) -> Answer {
    let request = request(Method::GET, server, target)
        .body(Full::default())
        .unwrap();
    send(client, request).await
}

/// Mounts `responder` for every request.
async fn serve(responder: &ScriptResponder) -> MockServer {
    let server = MockServer::builder().start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(responder.clone())
        .mount(&server)
        .await;
    server
}

fn responder(config: EndpointConfig) -> ScriptResponder {
    ScriptResponder::new(config).unwrap()
}

#[tokio::test]
async fn a_503_burst_with_retry_after_then_200_is_walked_and_recorded() {
    let responder = responder(
        EndpointConfig::http("api").script([
            Step::status(503).retry_after(2).times(2),
            Step::status(200)
                .header("content-type", "application/json")
                .body(r#"{"id":"o-1"}"#),
        ]),
    );
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/orders"))
        .respond_with(responder.clone())
        .mount(&server)
        .await;
    let client = client();

    let mut answers = Vec::new();
    for attempt in 0..4 {
        let request = request(Method::POST, &server, "/orders?dry=0")
            .header("idempotency-key", "k-1")
            .header("x-attempt", attempt.to_string())
            .body(Full::new(Bytes::from_static(b"{\"sku\":7}")))
            .unwrap();
        answers.push(send(&client, request).await);
    }
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    // The last step repeats.
    assert_eq!(statuses, [503, 503, 200, 200]);
    for answer in &answers[..2] {
        assert_eq!(answer.headers["retry-after"], "2");
        // wiremock's server adds it; retrylab's endpoints never send one.
        assert!(answer.headers.contains_key("date"));
        assert!(answer.body.is_empty());
    }
    assert!(!answers[2].headers.contains_key("retry-after"));
    assert_eq!(answers[2].headers["content-type"], "application/json");
    assert_eq!(answers[2].body, r#"{"id":"o-1"}"#);

    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    assert_eq!(ledger.requests.len(), 4);
    for (attempt, record) in ledger.requests.iter().enumerate() {
        assert_eq!(record.id, RequestId(attempt as u64));
        assert_eq!(record.method, Method::POST);
        assert_eq!(*record.uri, "/orders?dry=0");
        assert_eq!(record.path(), "/orders");
        assert_eq!(
            record.headers.get("x-attempt").unwrap(),
            attempt.to_string()
        );
        assert_eq!(record.body, "{\"sku\":7}");
        assert_eq!(record.route, Some(0));
    }
    let steps: Vec<_> = ledger.requests.iter().map(|r| r.step).collect();
    assert_eq!(steps, [Some(0), Some(0), Some(1), Some(1)]);
    assert!(ledger.requests.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    let outcomes: Vec<_> = ledger
        .responses
        .iter()
        .map(|r| (r.request, r.outcome))
        .collect();
    let sent = |status| ResponseOutcome::Sent { status };
    assert_eq!(
        outcomes,
        [
            (RequestId(0), sent(StatusCode::SERVICE_UNAVAILABLE)),
            (RequestId(1), sent(StatusCode::SERVICE_UNAVAILABLE)),
            (RequestId(2), sent(StatusCode::OK)),
            (RequestId(3), sent(StatusCode::OK)),
        ]
    );
    // Each 2xx commits (no dedupe here), under the request's key.
    let effects: Vec<_> = ledger.effects.iter().map(|e| e.request).collect();
    assert_eq!(effects, [RequestId(2), RequestId(3)]);
    assert_eq!(ledger.effects_for_key(b"k-1").count(), 0); // no key header configured
    assert!(ledger.connects.is_empty() && ledger.closes.is_empty());
}

#[tokio::test]
async fn latency_delays_the_response_and_its_record() {
    let responder = responder(EndpointConfig::http("api").script([
        Step::status(200).latency(ms(300)).body("slow"),
        Step::status(204),
    ]));
    let server = serve(&responder).await;
    let client = client();

    let started = Instant::now();
    let slow = get(&client, &server, "/slow").await;
    let slow_took = started.elapsed();
    assert_eq!(
        (slow.status, &slow.body[..]),
        (StatusCode::OK, &b"slow"[..])
    );
    assert!(slow_took >= ms(300), "{slow_took:?}");

    let started = Instant::now();
    let fast = get(&client, &server, "/fast").await;
    assert_eq!(fast.status, StatusCode::NO_CONTENT);
    // Far below the scripted latency: the delay belongs to the first step only.
    assert!(started.elapsed() < ms(300), "{:?}", started.elapsed());

    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    let (request, response) = (&ledger.requests[0], &ledger.responses[0]);
    assert!(
        response.at_ms >= request.at_ms + 300,
        "{request:?} {response:?}"
    );
    // The commit happens when the latency ends, just before the head.
    assert!(ledger.effects[0].at_ms >= request.at_ms + 300);
    assert_eq!(ledger.effects[0].request, request.id);
}

#[tokio::test]
async fn every_retry_after_form_and_route_matching() {
    let date = |format| RetryAfter::http_date(secs(30)).format(format);
    let config = EndpointConfig::http("api")
        .route(Route::get("/seconds").script([Step::status(429).retry_after(-1)]))
        .route(Route::get("/raw").script([Step::status(503).retry_after("soon")]))
        .route(
            Route::get("/imf").script([Step::status(503).retry_after(date(HttpDateFormat::Imf))]),
        )
        .route(
            Route::get("/rfc850")
                .script([Step::status(503).retry_after(date(HttpDateFormat::Rfc850))]),
        )
        .route(
            Route::get("/asctime")
                .script([Step::status(503).retry_after(date(HttpDateFormat::Asctime))]),
        )
        .route(
            Route::get("/late").script([Step::status(503)
                .latency(ms(1200))
                .retry_after(date(HttpDateFormat::Imf))]),
        );
    // A fixed epoch: the dates do not depend on the day the test runs.
    let responder = ScriptResponder::with_clock(config, VirtualClock::new()).unwrap();
    let server = serve(&responder).await;
    let client = client();

    let header = |answer: &Answer| answer.headers["retry-after"].to_str().unwrap().to_owned();
    let seconds = get(&client, &server, "/seconds").await;
    assert_eq!(
        (seconds.status.as_u16(), header(&seconds)),
        (429, "-1".into())
    );
    assert_eq!(header(&get(&client, &server, "/raw").await), "soon");
    let imf = header(&get(&client, &server, "/imf").await);
    let rfc850 = header(&get(&client, &server, "/rfc850").await);
    let asctime = header(&get(&client, &server, "/asctime").await);
    let late = header(&get(&client, &server, "/late").await);
    assert!(
        imf.ends_with(" GMT") && imf.starts_with("Thu, 01 Jan 2026 "),
        "{imf}"
    );
    assert!(rfc850.starts_with("Thursday, 01-Jan-26 "), "{rfc850}");
    assert!(
        asctime.starts_with("Thu Jan  1 ") && asctime.ends_with(" 2026"),
        "{asctime}"
    );
    let unmatched = get(&client, &server, "/nowhere").await;
    assert_eq!(unmatched.status, StatusCode::NOT_FOUND);

    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    let epoch_s = (DEFAULT_EPOCH_UNIX_MS / 1000) as i64;
    // Each date is the responder's wall clock when the head was due, plus 30 s, rounded up to
    // a whole second.
    for (text, index) in [(&imf, 2), (&rfc850, 3), (&asctime, 4), (&late, 5)] {
        let request = &ledger.requests[index];
        let latency_ms = if index == 5 { 1200 } else { 0 };
        let due_ms = request.at_ms + latency_ms;
        let date = parse_lenient(text).unwrap();
        assert!(date >= epoch_s + 30 + (due_ms / 1000) as i64, "{text}");
        let answered_ms = ledger.response_to(request.id).unwrap().at_ms;
        assert!(date <= epoch_s + 31 + (answered_ms / 1000) as i64, "{text}");
    }
    assert!(parse_lenient(&late).unwrap() >= epoch_s + 32, "{late}");
    let routes: Vec<_> = ledger.requests.iter().map(|r| r.route).collect();
    assert_eq!(
        routes,
        [Some(0), Some(1), Some(2), Some(3), Some(4), Some(5), None]
    );
    assert_eq!(ledger.requests[6].step, None);
    assert_eq!(
        ledger.responses[6].outcome,
        ResponseOutcome::Sent {
            status: StatusCode::NOT_FOUND
        }
    );
}

#[tokio::test]
async fn the_default_clock_dates_from_the_real_wall_clock() {
    let responder = responder(
        EndpointConfig::http("api")
            .script([Step::status(503).retry_after(RetryAfter::http_date(secs(30)))]),
    );
    let server = serve(&responder).await;
    let before = std::time::SystemTime::now();
    let answer = get(&client(), &server, "/").await;
    let after = std::time::SystemTime::now();
    let date = parse_lenient(answer.headers["retry-after"].to_str().unwrap()).unwrap();
    let unix = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
    };
    // A client comparing the date with its own clock waits about 30 s.
    assert!(
        date >= unix(before) + 30 && date <= unix(after) + 32,
        "{date}"
    );
}

#[tokio::test]
async fn scopes_count_per_key_and_mounts_share_one_script() {
    let config = EndpointConfig::http("api")
        .route(
            Route::post("/orders")
                .script([Step::status(503), Step::status(201)])
                .scope(Scope::Key),
        )
        .key_header("idempotency-key");
    let responder = responder(config);
    let server = MockServer::builder().start().await;
    // Two mocks, one script: as two paths of one endpoint.
    for prefix in ["/orders", "/v2/orders"] {
        Mock::given(path(prefix))
            .respond_with(responder.clone())
            .mount(&server)
            .await;
    }
    let client = client();
    let post = |target: &str, key: &str| {
        request(Method::POST, &server, target)
            .header("idempotency-key", key)
            .body(Full::default())
            .unwrap()
    };
    let mut statuses = Vec::new();
    for (target, key) in [
        ("/orders", "a"),
        ("/orders", "b"),
        ("/orders", "a"),
        ("/orders", "b"),
        ("/v2/orders", "a"),
    ] {
        statuses.push(send(&client, post(target, key)).await.status.as_u16());
    }
    // Per key: 503 then 201; `/v2/orders` reaches the responder but matches no route.
    assert_eq!(statuses, [503, 503, 201, 201, 404]);
    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    assert_eq!(ledger.requests.len(), 5);
    let keys: Vec<_> = ledger
        .effects
        .iter()
        .map(|e| e.key.clone().unwrap())
        .collect();
    assert_eq!(keys, ["a", "b"]);
}

#[tokio::test]
async fn dedupe_rejects_in_flight_and_replays_the_committed_response() {
    let responder = responder(
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("idempotency-key"))
            .script([Step::status(201).latency(ms(1000)).body(r#"{"id":"o-1"}"#)]),
    );
    let server = serve(&responder).await;
    let client = client();
    let post = || {
        request(Method::POST, &server, "/orders")
            .header("idempotency-key", "k-1")
            .body(Full::new(Bytes::from_static(b"{}")))
            .unwrap()
    };

    let first = tokio::spawn({
        let (client, request) = (client.clone(), post());
        async move { send(&client, request).await }
    });
    // While the first is in flight (its latency is 1 s), the same key is rejected.
    for _ in 0..400 {
        if responder.ledger().requests_received() == 1 {
            break;
        }
        tokio::time::sleep(ms(5)).await;
    }
    let in_flight = send(&client, post()).await;
    assert_eq!(in_flight.status, StatusCode::CONFLICT);
    let first = first.await.unwrap();
    assert_eq!(
        (first.status, &first.body[..]),
        (StatusCode::CREATED, &br#"{"id":"o-1"}"#[..])
    );
    responder.idle().await;
    // Once committed and answered, the key replays the response, without a step or a delay.
    let started = Instant::now();
    let replay = send(&client, post()).await;
    assert!(started.elapsed() < ms(1000));
    assert_eq!((replay.status, replay.body), (first.status, first.body));

    let ledger = responder.ledger().snapshot();
    let dedupe: Vec<_> = ledger.requests.iter().map(|r| r.dedupe).collect();
    assert_eq!(
        dedupe,
        [
            DedupeOutcome::First,
            DedupeOutcome::InFlight { of: RequestId(0) },
            DedupeOutcome::Replay { of: RequestId(0) }
        ]
    );
    assert_eq!(ledger.effects.len(), 1);
    assert_eq!(ledger.effects_for_key(b"k-1").count(), 1);
}

#[tokio::test]
async fn a_commit_behind_a_latency_happens_after_the_client_gave_up() {
    let responder = responder(
        EndpointConfig::http("api").script([Step::status(200).latency(ms(1000)).body("late")]),
    );
    let server = serve(&responder).await;
    let client = client();
    let gave_up = tokio::time::timeout(ms(100), get(&client, &server, "/orders")).await;
    assert!(gave_up.is_err());
    assert_eq!(responder.ledger().effect_count(), 0);

    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    assert_eq!(ledger.effects.len(), 1);
    assert!(ledger.effects[0].at_ms >= ledger.requests[0].at_ms + 1000);
    // wiremock does not report that the client left: the step's response is recorded as sent.
    assert_eq!(
        ledger.responses[0].outcome,
        ResponseOutcome::Sent {
            status: StatusCode::OK
        }
    );
}

#[tokio::test]
async fn an_unsupported_step_is_an_error_naming_it() {
    let error = ScriptResponder::new(EndpointConfig::http("api").script([
        Step::status(503).times(2),
        Step::fail(Fail::Hang).latency(Duration::from_secs(5)),
    ]))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "endpoints.api.script[1].fail: `fail: hang` holds the connection open without ever \
         answering, which a wiremock responder cannot do (it answers every request); serve this \
         endpoint with retrylab's real backend (`backend: real`)"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(boxed.to_string().starts_with("endpoints.api.script[1]"));
    let error = ScriptResponder::new(
        EndpointConfig::http("api").script([Step::status(200)
            .body("slow")
            .trickle(Duration::from_secs(2))]),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "endpoints.api.script[0].trickle: `trickle` spreads the body over time, which a \
         wiremock responder cannot do (it sends whole responses); serve this endpoint with \
         retrylab's real backend (`backend: real`)"
    );
}

/// A broker served by wiremock: its refusals (a topic it does not have, a bad body) are
/// answered before any step and listed as refused; a send walks the script and a 2xx step
/// stores its message, sent as scripted (wiremock is handed the response before the step
/// stores anything, so no acknowledgement names the id).
#[tokio::test]
async fn a_broker_refuses_throttles_and_stores_over_wiremock() {
    use retrylab_endpoints::Broker;
    let responder = responder(
        EndpointConfig::http("broker")
            .broker(Broker::new().topics(["orders"]))
            .script([Broker::error_code(530), Step::status(200)]),
    );
    let server = serve(&responder).await;
    let client = client();
    let mut answers = Vec::new();
    for (target, body) in [
        ("/topics/payments/messages", "{}"),
        ("/topics/orders/messages", "not json"),
        ("/topics/orders/messages", r#"{"key":"o-1"}"#),
        ("/topics/orders/messages", r#"{"key":"o-1"}"#),
    ] {
        let request = request(Method::POST, &server, target)
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        answers.push(send(&client, request).await);
    }
    let seen: Vec<_> = answers
        .iter()
        .map(|a| (a.status.as_u16(), a.body.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                404,
                Bytes::from_static(br#"{"code":40402,"message":"TOPIC_NOT_FOUND"}"#)
            ),
            (
                400,
                Bytes::from_static(br#"{"code":40000,"message":"BAD_REQUEST"}"#)
            ),
            (
                429,
                Bytes::from_static(br#"{"code":530,"message":"TOO_MANY_REQUESTS"}"#)
            ),
            (200, Bytes::new()),
        ]
    );
    for answer in &answers[..3] {
        assert_eq!(answer.headers["content-type"], "application/json");
    }

    responder.idle().await;
    let ledger = responder.ledger().snapshot();
    assert_eq!(ledger.refused, [RequestId(0), RequestId(1)]);
    let steps: Vec<_> = ledger.requests.iter().map(|r| r.step).collect();
    assert_eq!(steps, [None, None, Some(0), Some(1)]);
    let stored: Vec<_> = ledger
        .messages
        .iter()
        .map(|m| (m.request, &*m.topic, m.key.as_deref(), &*m.id))
        .collect();
    assert_eq!(stored, [(RequestId(3), "orders", Some("o-1"), "broker-1")]);
}
