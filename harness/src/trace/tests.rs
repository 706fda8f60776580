//! The trace: its records, their rendering and interning.

use super::*;

/// Names come back the same whether the recent names or the index answer: more texts
/// than the cache holds, in turns, from an empty interner and from one made of names.
#[test]
fn interning_answers_the_same_from_the_cache_and_the_index() {
    let texts = ["POST", "/orders", "a", "b", "c", "d", "e"];
    for mut interner in [
        Interner::default(),
        Interner::from_names(vec!["e".to_owned(), "POST".to_owned()]),
    ] {
        let first: Vec<Name> = texts.iter().map(|t| interner.intern(t)).collect();
        for round in 0..3 {
            for (i, text) in texts.iter().enumerate().skip(round) {
                assert_eq!(interner.intern(text), first[i], "{text} in round {round}");
                assert_eq!(interner.intern("POST"), first[0]);
                assert_eq!(interner.name(first[i]), *text);
            }
        }
        let distinct: std::collections::BTreeSet<Name> = first.iter().copied().collect();
        assert_eq!(distinct.len(), texts.len());
    }
}

fn attempt(n: u32, start: u64, end: u64, status: u16, conn: u64, how: ConnUse) -> Attempt {
    Attempt {
        id: n,
        client_id: 0,
        call_id: 0,
        n,
        conn_id: Some(conn),
        conn: how,
        stream_id: None,
        method: Name(0),
        path: Name(1),
        start_ms: start,
        head_ms: Some(end),
        end_ms: Some(end),
        outcome: AttemptOutcome::Status(status),
        end: EndKind::Body,
        body_error: None,
        retry_after: None,
        amz_retry_after: None,
        resent: false,
        reconstructed: false,
        answered_by: None,
        grpc: None,
    }
}

#[test]
fn timeline_lines() {
    let trace = Trace {
        names: vec!["POST".into(), "/orders".into()],
        attempts: vec![
            attempt(1, 0, 1000, 503, 1, ConnUse::New),
            attempt(2, 2000, 2500, 200, 1, ConnUse::Reused),
        ],
        ..Trace::default()
    };
    assert_eq!(
        trace.timeline(),
        "t=0.000s  #1  POST /orders  -> 503  conn 1 new\n\
             t=2.000s  #2  POST /orders  -> 200  conn 1 reused  gap 1.000s\n"
    );
}

/// `x-amz-retry-after` shows as `Retry-After` does, after it, as sent; on real sockets too,
/// since it is a delay, not an instant.
#[test]
fn x_amz_retry_after_shows_beside_retry_after() {
    let mut first = attempt(1, 0, 1000, 503, 1, ConnUse::New);
    first.retry_after = Some(Name(2));
    first.amz_retry_after = Some(Name(3));
    let mut second = attempt(2, 2000, 2500, 503, 1, ConnUse::Reused);
    second.amz_retry_after = Some(Name(4));
    let mut trace = Trace {
        names: vec![
            "POST".into(),
            "/orders".into(),
            "2".into(),
            "1500".into(),
            "-5".into(),
        ],
        attempts: vec![first, second],
        ..Trace::default()
    };
    assert_eq!(
        trace.timeline(),
        "t=0.000s  #1  POST /orders  -> 503  conn 1 new  retry-after 2  x-amz-retry-after 1500\n\
             t=2.000s  #2  POST /orders  -> 503  conn 1 reused  gap 1.000s  x-amz-retry-after -5\n"
    );
    trace.header = vec![("backend".into(), "real".into())];
    let line = trace.attempt_line_with(&trace.attempts[0], instants::Instants::Redacted);
    assert!(
        line.ends_with("retry-after 2  x-amz-retry-after 1500"),
        "{line}"
    );
}

#[test]
fn answers_of_dedupe_and_the_rate_limiter_are_labelled_naming_the_attempt() {
    let answered = |mut a: Attempt, by: AnsweredBy| {
        a.answered_by = Some(by);
        a
    };
    let mut other_call = attempt(1, 2600, 2600, 201, 2, ConnUse::Reused);
    other_call.id = 6;
    other_call.call_id = 1;
    let mut other_call = answered(other_call, AnsweredBy::Replay { of: Some(1) });
    other_call.n = 1;
    let trace = Trace {
        names: vec!["POST".into(), "/orders".into()],
        attempts: vec![
            attempt(1, 0, 1000, 201, 1, ConnUse::New),
            answered(
                attempt(2, 100, 101, 409, 2, ConnUse::New),
                AnsweredBy::InFlight { of: Some(1) },
            ),
            answered(
                attempt(3, 200, 201, 422, 2, ConnUse::Reused),
                AnsweredBy::Mismatch { of: Some(1) },
            ),
            answered(
                attempt(4, 2000, 2001, 201, 2, ConnUse::Reused),
                AnsweredBy::Replay { of: Some(1) },
            ),
            answered(
                attempt(5, 2500, 2501, 429, 2, ConnUse::Reused),
                AnsweredBy::RateLimited,
            ),
            other_call,
            answered(
                attempt(7, 2700, 2701, 200, 2, ConnUse::Reused),
                AnsweredBy::Rerun { of: None },
            ),
            answered(
                attempt(8, 2800, 2801, 404, 2, ConnUse::Reused),
                AnsweredBy::RefusedByBroker,
            ),
        ],
        calls: Vec::new(),
        ..Trace::default()
    };
    let lines: Vec<String> = trace.timeline().lines().map(str::to_owned).collect();
    assert_eq!(
        lines,
        [
            "t=0.000s  #1  POST /orders  -> 201  conn 1 new",
            "t=0.100s  #2  POST /orders  -> 409 (in flight: #1)  conn 2 new  gap 0.000s",
            "t=0.200s  #3  POST /orders  -> 422 (mismatch with #1)  conn 2 reused  gap 0.099s",
            "t=2.000s  #4  POST /orders  -> 201 (replay of #1)  conn 2 reused  gap 1.799s",
            "t=2.500s  #5  POST /orders  -> 429 (rate limited)  conn 2 reused  gap 0.499s",
            "t=2.600s  #1  POST /orders  -> 201 (replay of call 0 #1)  conn 2 reused",
            "t=2.700s  #7  POST /orders  -> 200 (rerun of an untraced request)  conn 2 reused",
            "t=2.800s  #8  POST /orders  -> 404 (refused by the broker)  conn 2 reused  gap 0.099s",
        ]
    );
    // The one-line API reads the same without the index.
    assert_eq!(trace.attempt_line(&trace.attempts[3]), lines[3]);
    let json: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap();
    let replay = &json["attempts"][3];
    assert_eq!(replay["label"], "replay of #1");
    assert_eq!(
        replay["answered_by"],
        serde_json::json!({ "kind": "replay", "of": 1 })
    );
    assert_eq!(
        json["attempts"][4]["answered_by"],
        serde_json::json!({ "kind": "rate_limited" })
    );
    assert_eq!(
        json["attempts"][7]["answered_by"],
        serde_json::json!({ "kind": "refused_by_broker" })
    );
    assert_eq!(json["attempts"][0]["label"], serde_json::Value::Null);
}

#[test]
fn interner_reuses() {
    let mut i = Interner::default();
    let a = i.intern("GET");
    let b = i.intern("/x");
    assert_eq!(i.intern("GET"), a);
    assert_ne!(a, b);
    assert_eq!(i.into_names(), vec!["GET", "/x"]);
}
