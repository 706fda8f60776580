//! HTTP/2 endpoints through the harness: a user's hyper-util client built `http2_only` on
//! `env.connector()`, `env.http2_client()`, the built-in client on an `http2` endpoint, on the
//! sim network, on real sockets and (feature `turmoil`) in a turmoil simulation.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use retrylab::prelude::*;
use retrylab::scenario::{BackendKind, Protocol};
use retrylab::trace::ConnUse;

/// Three requests at once, then three more: each a stream of one kept-alive connection.
async fn three_at_once_twice(env: Env) -> Result<Vec<u16>, String> {
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .http2_only(true)
        .build(env.connector());
    let mut statuses = Vec::new();
    for _ in 0..2 {
        let one = || {
            let client = client.clone();
            let request = env.operation().request();
            async move {
                let response = client.request(request).await.map_err(|e| e.to_string())?;
                let status = response.status().as_u16();
                response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(status)
            }
        };
        let (a, b, c) = tokio::join!(one(), one(), one());
        statuses.extend([a?, b?, c?]);
    }
    Ok(statuses)
}

fn h2_scenario(name: &str, backend: BackendKind) -> Scenario {
    let builder = Scenario::builder(name);
    // Real sockets have the latency they have.
    let builder = match backend {
        BackendKind::Real => builder,
        _ => builder.latency(ms(1)),
    };
    builder
        .endpoint(
            "api",
            endpoint().protocol(Protocol::Http2).script([
                status(503).latency(ms(30)).times(3),
                status(200).latency(ms(10)),
            ]),
        )
        .operation(get("api", "/items"))
        .backend(backend)
        .build()
        .unwrap()
}

#[test]
fn a_hyper_util_http2_only_client_on_the_connector_multiplexes_one_connection() {
    let scenario = h2_scenario("connector h2", BackendKind::Sim);
    let report = scenario.run(three_at_once_twice);
    let trace = report.trace();
    assert_eq!(
        trace.calls[0].result,
        retrylab::trace::CallResult::Success("[503, 503, 503, 200, 200, 200]".into())
    );
    // Rebuilt from what the endpoint and the network saw: one connection, six streams.
    let seen: Vec<_> = trace
        .attempts
        .iter()
        .map(|a| (a.conn_id, a.stream_id, a.reconstructed))
        .collect();
    let expected: Vec<_> = [1, 3, 5, 7, 9, 11]
        .into_iter()
        .map(|s| (Some(1), Some(s), true))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(trace.attempts[0].conn, ConnUse::New);
    assert!(
        trace.attempts[1..]
            .iter()
            .all(|a| a.conn == ConnUse::Reused)
    );
    // The three of a batch were in flight together: the first started with the connect,
    // the other two as the first's request, in one flight after it.
    assert_eq!(trace.attempts[1].start_ms, trace.attempts[2].start_ms);
    assert_eq!(trace.attempts[3].start_ms, trace.attempts[5].start_ms);
    let lines = trace.compact_timeline();
    assert!(lines[1].contains("conn 1 reused  stream 3"), "{lines:#?}");
}

#[test]
fn the_built_in_client_speaks_http2_to_an_http2_endpoint() {
    let scenario = Scenario::from_yaml_str(
        "version: 1\nname: h2 reference\n\
         endpoints: { api: { protocol: http2, script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 4 } }\n\
         expect: { attempts: 3, outcome: success, gaps_each: { within: [100ms, 100ms] } }\n",
        "h2.yaml",
    )
    .unwrap();
    let report = scenario.run_builtin();
    report.assert();
    let streams: Vec<_> = report
        .trace()
        .attempts
        .iter()
        .map(|a| a.stream_id)
        .collect();
    assert_eq!(streams, [Some(1), Some(3), Some(5)]);
    let header = &report.trace().header;
    assert!(
        header.iter().any(|(k, _)| k == "client_http2"),
        "{header:?}"
    );
}

#[test]
fn an_http1_trace_has_no_http2_header_lines_and_no_streams() {
    let scenario = Scenario::builder("h1")
        .endpoint("api", endpoint().script([status(200)]))
        .operation(get("api", "/"))
        .build()
        .unwrap();
    let report = scenario.run_builtin();
    let trace = report.trace();
    assert!(trace.header.iter().all(|(k, _)| !k.ends_with("http2")));
    assert_eq!(trace.attempts[0].stream_id, None);
    assert!(!trace.to_json().contains("stream_id"));
}

#[test]
fn an_http1_client_on_an_http2_endpoint_finds_the_connection_closed() {
    let scenario = Scenario::builder("h1 on h2")
        .endpoint(
            "api",
            endpoint().protocol(Protocol::Http2).script([status(200)]),
        )
        .operation(get("api", "/"))
        .build()
        .unwrap();
    let report = scenario.run(|env: Env| async move {
        let sent = env.http_client().request(env.operation().request()).await;
        Ok::<_, String>(sent.is_ok())
    });
    let trace = report.trace();
    assert_eq!(
        trace.calls[0].result,
        retrylab::trace::CallResult::Success("false".into())
    );
    // The endpoint read no request: it filed the bytes as unreadable and closed.
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(trace.attempts[0].outcome.status(), None);
}

/// On real sockets, in real time: the connector's h2 client multiplexes one TCP connection.
#[test]
fn on_real_sockets_concurrent_requests_share_one_http2_connection() {
    let scenario = h2_scenario("real h2", BackendKind::Real);
    let report = scenario.run(three_at_once_twice);
    let trace = report.trace();
    assert_eq!(
        trace.calls[0].result,
        retrylab::trace::CallResult::Success("[503, 503, 503, 200, 200, 200]".into()),
        "{}",
        report.summary()
    );
    let conns: Vec<_> = trace.attempts.iter().map(|a| a.conn_id).collect();
    assert!(conns.iter().all(|c| *c == conns[0]), "{conns:?}");
    let mut streams: Vec<_> = trace.attempts.iter().filter_map(|a| a.stream_id).collect();
    streams.sort_unstable();
    assert_eq!(streams, [1, 3, 5, 7, 9, 11]);
}

/// On real sockets: the built-in client over HTTP/2, and an `auto` endpoint answering both
/// versions.
#[test]
fn on_real_sockets_the_built_in_client_and_an_auto_endpoint_speak_http2() {
    let scenario = Scenario::from_yaml_str(
        "version: 1\nname: real h2\nbackend: real\n\
         endpoints: { api: { protocol: http2, script: [ { status: 503 }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 50ms, max_attempts: 3 } }\n\
         expect: { attempts: 2, outcome: success, gaps_each: { within: [50ms, 50ms] } }\n",
        "real-h2.yaml",
    )
    .unwrap();
    let report = scenario.run_builtin();
    report.assert();
    let streams: Vec<_> = report
        .trace()
        .attempts
        .iter()
        .map(|a| a.stream_id)
        .collect();
    assert_eq!(streams, [Some(1), Some(3)]);

    let auto = Scenario::builder("real auto")
        .endpoint(
            "api",
            endpoint().protocol(Protocol::Auto).script([status(200)]),
        )
        .operation(get("api", "/").calls(2))
        .backend(BackendKind::Real)
        .build()
        .unwrap();
    let report = auto.run(|env: Env| async move {
        let client = match env.call_index() {
            0 => env.http_client(),
            _ => env.http2_client(),
        };
        let response = client
            .request(env.operation().request())
            .await
            .map_err(|e| e.to_string())?;
        let version = response.version();
        response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("{version:?}"))
    });
    let results: Vec<_> = report
        .trace()
        .calls
        .iter()
        .map(|c| c.result.clone())
        .collect();
    assert_eq!(
        results,
        [r#""HTTP/1.1""#, r#""HTTP/2.0""#].map(|v| retrylab::trace::CallResult::Success(v.into())),
        "{}",
        report.summary()
    );
    let streams: Vec<_> = report
        .trace()
        .attempts
        .iter()
        .map(|a| a.stream_id)
        .collect();
    assert_eq!(streams, [None, Some(1)]);
}

/// In a turmoil simulation: the built-in client over HTTP/2, streams on one connection.
#[cfg(feature = "turmoil")]
#[test]
fn on_turmoil_the_built_in_client_speaks_http2() {
    let scenario = Scenario::from_yaml_str(
        "version: 1\nname: turmoil h2\nbackend: turmoil\n\
         endpoints: { api: { protocol: http2, script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
         network: { latency: 1ms }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 4 } }\n\
         expect: { attempts: 3, outcome: success, gaps_each: { within: [100ms, 100ms] } }\n",
        "turmoil-h2.yaml",
    )
    .unwrap();
    let report = scenario.run_builtin();
    report.assert();
    let seen: Vec<_> = report
        .trace()
        .attempts
        .iter()
        .map(|a| (a.conn_id, a.stream_id))
        .collect();
    assert_eq!(
        seen,
        [(Some(1), Some(1)), (Some(1), Some(3)), (Some(1), Some(5))]
    );
}

/// In a turmoil simulation: a user's `http2_only` client multiplexes one connection.
#[cfg(feature = "turmoil")]
#[test]
fn on_turmoil_concurrent_requests_share_one_http2_connection() {
    let scenario = h2_scenario("turmoil h2", BackendKind::Turmoil);
    let report = scenario.run(three_at_once_twice);
    let trace = report.trace();
    assert_eq!(
        trace.calls[0].result,
        retrylab::trace::CallResult::Success("[503, 503, 503, 200, 200, 200]".into()),
        "{}",
        report.summary()
    );
    let mut streams: Vec<_> = trace.attempts.iter().filter_map(|a| a.stream_id).collect();
    streams.sort_unstable();
    assert_eq!(streams, [1, 3, 5, 7, 9, 11]);
    assert!(trace.attempts.iter().all(|a| a.conn_id == Some(1)));
}
