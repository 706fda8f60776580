//! The wiremock adapter's tests: what `ScriptResponder::new` refuses and how it names it, the
//! answer outside a runtime, and a request recorded as wiremock hands it over.

use super::*;
use crate::{ConnectStep, Route, Window, ms};
use ::wiremock::Respond;

fn config() -> EndpointConfig {
    EndpointConfig::http("api")
}

fn refusal(config: EndpointConfig) -> Unsupported {
    match ScriptResponder::new(config) {
        Ok(_) => panic!("the configuration was accepted"),
        Err(error) => error,
    }
}

#[test]
fn every_failure_is_refused_with_its_path() {
    let cases = [
        (
            Fail::Close,
            "`fail: close` closes the connection without a response",
        ),
        (Fail::Reset, "`fail: reset` resets the connection"),
        (Fail::Hang, "`fail: hang` holds the connection open"),
        (
            Fail::reset_after(7),
            "`fail: { reset: { after_bytes: 7 } }` cuts the response after 7 bytes",
        ),
    ];
    for (fail, start) in cases {
        let error = refusal(config().script([Step::status(503), Step::fail(fail)]));
        assert_eq!(error.path(), "endpoints.api.script[1].fail", "{fail:?}");
        assert!(error.message().starts_with(start), "{error}");
        assert!(
            error
                .message()
                .ends_with("serve this endpoint with retrylab's real backend (`backend: real`)"),
            "{error}"
        );
    }
}

#[test]
fn connection_scope_keep_alive_and_connect_schedules_are_refused() {
    let scoped = config().route(
        Route::get("/a")
            .script([Step::status(200)])
            .scope(Scope::Connection),
    );
    let error = refusal(scoped);
    assert_eq!(error.path(), "endpoints.api.routes[0].scope");
    assert!(error.message().contains("`backend: real`"), "{error}");

    let kept = config()
        .script([Step::status(200)])
        .keep_alive(KeepAlive::default().max_requests(3));
    assert_eq!(refusal(kept).path(), "endpoints.api.keep_alive");

    let refused = config()
        .script([Step::status(200)])
        .connect([ConnectStep::accept(), ConnectStep::blackhole()]);
    let error = refusal(refused);
    assert_eq!(error.path(), "endpoints.api.connect[1]");
    assert!(
        error.message().starts_with("`action: blackhole`"),
        "{error}"
    );
    assert!(error.message().contains("`backend: sim`"), "{error}");

    // Accepting every connection is what wiremock does anyway.
    let accepting = config()
        .script([Step::status(200)])
        .connect([ConnectStep::accept()]);
    assert!(ScriptResponder::new(accepting).is_ok());
}

#[test]
fn the_first_unsupported_item_in_scenario_order_is_named() {
    let both = config()
        .route(Route::get("/a").script([Step::status(200), Step::fail(Fail::Close)]))
        .route(Route::get("/b").script([Step::fail(Fail::Reset)]))
        .keep_alive(KeepAlive::default().idle_timeout(ms(10)));
    assert_eq!(
        refusal(both).path(),
        "endpoints.api.routes[0].script[1].fail"
    );
}

#[test]
fn a_failure_in_a_window_or_a_branch_is_named() {
    let windowed = config().timeline([
        Window::new(ms(0)..ms(10), Step::status(503)),
        Window::new(ms(10)..ms(20), Step::fail(Fail::Hang)),
    ]);
    assert_eq!(refusal(windowed).path(), "endpoints.api.timeline[1].fail");
    let flaky = config().script([Step::chance(
        0.5,
        Step::status(503),
        Step::chance(0.5, Step::status(200), Step::fail(Fail::Reset)),
    )]);
    assert_eq!(
        refusal(flaky).path(),
        "endpoints.api.script[0].else.else.fail"
    );
    let served = config().script([Step::chance(0.5, Step::status(503), Step::status(200))]);
    assert!(ScriptResponder::new(served).is_ok());
}

#[test]
fn outside_a_runtime_the_answer_says_why_and_nothing_is_recorded() {
    let responder = ScriptResponder::new(config().script([Step::status(201)])).unwrap();
    let request = Request {
        url: "http://localhost/orders".parse().unwrap(),
        method: http::Method::POST,
        headers: http::HeaderMap::new(),
        body: b"{}".to_vec(),
    };
    let response = responder.respond(&request);
    let debug = format!("{response:?}");
    assert!(debug.contains("500"), "{debug}");
    assert_eq!(responder.ledger().requests_received(), 0);
}

#[tokio::test]
async fn a_request_is_recorded_in_origin_form_with_its_body() {
    let responder = ScriptResponder::new(config().script([
        Step::status(503).retry_after(2).header("x-a", "1"),
        Step::status(201).latency(ms(30)).body("done"),
    ]))
    .unwrap();
    let mut headers = http::HeaderMap::new();
    headers.insert("idempotency-key", http::HeaderValue::from_static("k-1"));
    let request = Request {
        url: "http://localhost/orders?expand=1".parse().unwrap(),
        method: http::Method::POST,
        headers,
        body: b"{\"n\":1}".to_vec(),
    };
    let first = format!("{:?}", responder.respond(&request));
    assert!(
        first.contains("503") && first.contains("retry-after"),
        "{first}"
    );
    assert!(first.contains("delay: None"), "{first}");
    let second = format!("{:?}", responder.respond(&request));
    assert!(second.contains("delay: Some(30ms)"), "{second}");
    responder.idle().await;

    let ledger = responder.ledger().snapshot();
    let record = &ledger.requests[0];
    assert_eq!(*record.uri, "/orders?expand=1");
    assert_eq!(record.method, http::Method::POST);
    assert_eq!(record.headers.get("idempotency-key").unwrap(), "k-1");
    assert_eq!(record.body, "{\"n\":1}");
    assert_eq!(
        (record.conn_id, record.seq, record.inbound.clone()),
        (0, 0, 0..0)
    );
    assert_eq!(
        ledger.requests.iter().map(|r| r.step).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    assert_eq!(ledger.responses.len(), 2);
    assert!(ledger.responses[1].at_ms >= ledger.requests[1].at_ms + 30);
    assert_eq!(ledger.effects.len(), 1);
    assert_eq!(ledger.effects[0].request, ledger.requests[1].id);
}
