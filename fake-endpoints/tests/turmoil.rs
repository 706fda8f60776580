//! A retrylab endpoint inside a user's own turmoil simulation: an `orders` service that calls
//! a payment endpoint and retries its 503s, and a client that calls `orders`.

use std::time::Duration;

use retrylab_endpoints::{
    ConnectAction, ConnectStep, Dedupe, DedupeOutcome, EndpointConfig, ResponseOutcome, Step,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

/// One HTTP/1.1 exchange over turmoil TCP: the response's status code.
async fn get(host: &str, port: u16, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect((host, port)).await?;
    let request = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    // "HTTP/1.1 503 Service Unavailable"
    let code = answer.get(9..12).and_then(|c| c.parse().ok());
    code.ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {answer:?}")))
}

/// [`get`], sending `key` in header `idempotency-key`.
async fn get_keyed(host: &str, port: u16, key: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect((host, port)).await?;
    let request = format!(
        "GET / HTTP/1.1\r\nhost: {host}\r\nidempotency-key: {key}\r\nconnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    let code = answer.get(9..12).and_then(|c| c.parse().ok());
    code.ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {answer:?}")))
}

/// The user's service: answers each request on port 8080 after calling `payments`, which it
/// tries up to 4 times, 100 ms apart.
async fn orders() -> turmoil::Result {
    let listener = TcpListener::bind(("0.0.0.0", 8080)).await?;
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut request = [0_u8; 1024];
        let _ = stream.read(&mut request).await?;
        let mut status = 0;
        for _ in 0..4 {
            status = get("payments", 80, "/charge").await?;
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let answer =
            format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        stream.write_all(answer.as_bytes()).await?;
    }
}

#[test]
fn a_service_in_a_turmoil_simulation_retries_against_a_retrylab_endpoint() {
    let mut sim = turmoil::Builder::new()
        .rng_seed(7)
        .min_message_latency(Duration::from_millis(2))
        .max_message_latency(Duration::from_millis(2))
        .build();
    let payments = retrylab_endpoints::turmoil::host(
        &mut sim,
        "payments",
        EndpointConfig::http("payments").script([Step::status(503).times(2), Step::status(200)]),
    );
    sim.host("orders", orders);
    sim.client("client", async {
        assert_eq!(get("orders", 8080, "/order").await?, 200);
        Ok(())
    });
    sim.run().unwrap();

    let ledger = payments.ledger().snapshot();
    let statuses: Vec<u16> = ledger
        .responses
        .iter()
        .map(|r| match &r.outcome {
            ResponseOutcome::Sent { status } => status.as_u16(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(statuses, [503, 503, 200]);
    // Instants are the simulation's milliseconds: each retry came 100 ms after the answer
    // before it reached `orders`, plus a connect and the request's crossing.
    let arrivals: Vec<u64> = ledger.requests.iter().map(|r| r.at_ms).collect();
    assert_eq!(arrivals.len(), 3);
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((100..=112).contains(&gap), "{arrivals:?}");
    }
    // One connection per exchange, numbered by the endpoint's host.
    let conns: Vec<u64> = ledger.requests.iter().map(|r| r.conn_id).collect();
    assert_eq!(conns, [1, 2, 3]);
}

#[test]
fn a_bounced_endpoint_host_serves_again_on_the_simulations_time_with_its_ledger_kept() {
    let mut sim = turmoil::Builder::new()
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(1))
        .build();
    let api = retrylab_endpoints::turmoil::host(
        &mut sim,
        "api",
        EndpointConfig::http("api").script([Step::status(503), Step::status(200)]),
    );
    sim.client("client", async {
        assert_eq!(get("api", 80, "/").await?, 503);
        // Past the crash at 50 ms and the bounce at 100 ms.
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_millis(200)).await;
        assert_eq!(get("api", 80, "/").await?, 200);
        Ok(())
    });
    let mut finished = false;
    while !finished {
        match sim.elapsed().as_millis() {
            50 => sim.crash("api"),
            100 => sim.bounce("api"),
            _ => {}
        }
        finished = sim.step().unwrap();
    }
    let ledger = api.ledger().snapshot();
    // The request before the crash is still there, and the script went on after it.
    let arrivals: Vec<u64> = ledger.requests.iter().map(|r| r.at_ms).collect();
    assert_eq!(arrivals.len(), 2, "{arrivals:?}");
    assert!(arrivals[0] < 50, "{arrivals:?}");
    // The second arrival is timed on the bounced host's runtime, on the simulation's time.
    assert!((200..=210).contains(&arrivals[1]), "{arrivals:?}");
    let statuses: Vec<u16> = ledger
        .responses
        .iter()
        .map(|r| match &r.outcome {
            ResponseOutcome::Sent { status } => status.as_u16(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(statuses, [503, 200]);
}

#[test]
fn refused_and_black_holed_connects_are_not_served() {
    let mut sim = turmoil::Builder::new()
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(1))
        .build();
    let api = retrylab_endpoints::turmoil::host(
        &mut sim,
        "api",
        EndpointConfig::http("api")
            .connect([
                ConnectStep::refuse(),
                ConnectStep::blackhole(),
                ConnectStep::accept(),
            ])
            .script([Step::status(200)]),
    );
    sim.client("client", async {
        // Refused: turmoil made the connection, the endpoint closes it unread.
        assert!(get("api", 80, "/").await.is_err());
        // Black-holed: held open and never answered.
        let waited = tokio::time::timeout(Duration::from_secs(1), get("api", 80, "/")).await;
        assert!(waited.is_err(), "{waited:?}");
        assert_eq!(get("api", 80, "/").await?, 200);
        Ok(())
    });
    sim.run().unwrap();
    let ledger = api.ledger().snapshot();
    let actions: Vec<ConnectAction> = ledger.connects.iter().map(|c| c.action).collect();
    assert_eq!(
        actions,
        [
            ConnectAction::Refuse,
            ConnectAction::Blackhole,
            ConnectAction::Accept
        ]
    );
    // Only the accepted connection's request was read and answered.
    assert_eq!(ledger.requests.len(), 1);
}

#[test]
fn a_host_crashed_by_the_simulation_releases_the_dedupe_keys_of_the_requests_it_dropped() {
    let mut sim = turmoil::Builder::new()
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(1))
        .build();
    let api = retrylab_endpoints::turmoil::host(
        &mut sim,
        "api",
        EndpointConfig::http("api")
            .dedupe(Dedupe::header("idempotency-key"))
            .script([Step::status(200).latency(Duration::from_millis(500))]),
    );
    sim.client("client", async {
        // Reaches api at 3 ms, whose answer would come at 503 ms: the crash at 50 ms drops
        // the step, whichever way the client's exchange then ends.
        let first = tokio::time::timeout(Duration::from_millis(150), get_keyed("api", 80, "k"));
        let _ = first.await;
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_millis(100)).await;
        // Past the bounce at 100 ms: the key is no longer in flight, so the step runs again
        // (a key left in flight would be answered 409).
        assert_eq!(get_keyed("api", 80, "k").await?, 200);
        Ok(())
    });
    let mut finished = false;
    while !finished {
        match sim.elapsed().as_millis() {
            50 => sim.crash("api"),
            100 => sim.bounce("api"),
            _ => {}
        }
        finished = sim.step().unwrap();
    }
    let ledger = api.ledger().snapshot();
    let dedupe: Vec<DedupeOutcome> = ledger.requests.iter().map(|r| r.dedupe).collect();
    assert_eq!(dedupe, [DedupeOutcome::First, DedupeOutcome::First]);
}

#[test]
fn a_connection_starts_without_the_note_of_an_earlier_one_on_the_same_ports() {
    use retrylab_endpoints::turmoil::{Ends, Signal, Signals};
    use retrylab_endpoints::{ConnIds, Endpoint, VirtualClock};

    let mut sim = turmoil::Builder::new()
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(1))
        .build();
    let signals = Signals::new();
    let api = retrylab_endpoints::turmoil::host_with_signals(
        &mut sim,
        "api",
        ConnIds::new(),
        signals.clone(),
        || {
            let clock = VirtualClock::starting_at(tokio::time::Instant::now(), 0);
            Endpoint::new(
                EndpointConfig::http("api").script([Step::status(200)]),
                clock,
            )
        },
    );
    assert!(api.is_some());
    // The first two hosts' addresses, and the first ephemeral port: the ends of the client's
    // first connection. A reset noted on them stands for one written late, after an earlier
    // connection between the same ports was forgotten by its client.
    let ends = Ends {
        client: "192.168.0.2:49152".parse().unwrap(),
        endpoint: "192.168.0.1:80".parse().unwrap(),
    };
    signals.note(ends, Signal::Reset);
    let seen = signals.clone();
    sim.client("client", async move {
        let stream = TcpStream::connect(("api", 80)).await?;
        let made = Ends {
            client: stream.local_addr()?,
            endpoint: stream.peer_addr()?,
        };
        assert_eq!(made, ends);
        // The SYN-ACK's crossing back: the endpoint has taken the connection by then.
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(seen.read(ends), None);
        Ok(())
    });
    sim.run().unwrap();
}
