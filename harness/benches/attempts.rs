//! Attempts per second through the public API, against the floor of hyper-util over a bare
//! in-memory stream measured in the same process.
//!
//! `cargo bench -p retrylab --bench attempts` prints two lines per connection mode (by
//! default), with the ratio of the harness's time to each floor's. The wall clock is read here, in the benchmark,
//! never on the simulated path.
//!
//! The floor is the same work without the harness: hyper-util's client with its pool on, as
//! `env.http_client()` has it, and hyper's server over `tokio::io::duplex`. With keep-alive one
//! connection carries every request. With a new connection per attempt the floor's server
//! answers each request with `connection: close`, as an endpoint with
//! `keep_alive: { max_requests: 1 }` does, so the client drops the connection after each
//! response and connects again for the next request: that is the like-for-like floor the
//! ratio is taken against. The floor used before it turned the client's pool off instead
//! (`pool_max_idle_per_host(0)`) and let the server keep the connection open; it does less
//! than the harness's client (no `connection: close` to read, no pooled connection to drop),
//! so it is cheaper. The bench times it too and prints it beside the other, so nothing is
//! hidden.
//!
//! The bench's network has a 1 ms latency, and a duplex has none: every round trip the
//! harness simulates costs it timers, and tokio's paused clock two parks of its scheduler per
//! instant something happens at, which the duplex floor never pays. So each mode is measured
//! twice over, like with like: the harness with the latency against the same floor over a
//! stream whose bytes take that latency too ([`Delayed`]: a queue and a timer per reading end,
//! and a connect that takes a round trip with the server's end handed over as the SYN
//! arrives, at the instants the harness's network has them), and the harness with no latency
//! against the duplex floor. The first line also gives the ratio to the duplex floor, the
//! figure this bench has always printed. Each case prints its virtual seconds per attempt,
//! and the bench fails where a like-for-like pair took different virtual time to the
//! millisecond, or a floor's server did not answer every request with the 503 the endpoint
//! sends. The first catches a floor that waits out less (or more) latency on an attempt's
//! path; it does not prove that the two stop the clock at the same instants.
//!
//! For profiling: `ATTEMPTS_ONLY=new` (or `keep`) runs one mode, `ATTEMPTS_NOFLOOR=1` skips the
//! floors and `ATTEMPTS_NOHARNESS=1` the harness (to time each alone with `perf stat`, whose
//! CPU time a loaded machine changes less than it does wall time), `ATTEMPTS_HARNESS=latency`
//! (or `none`) runs one of the harness's two cases, and `ATTEMPTS_FLOOR=<name>` only that
//! floor: `duplex` (keep-alive), `closing` or `pool-off` (new connection), or `latency` (the
//! floor with latency of each mode). A floor runs only if a line that prints it does; an
//! unknown value stops the bench. The
//! run's wall limit is the most the format allows (1h), so that a run under
//! `valgrind --tool=callgrind` makes all its attempts. Run alone, a case starts on a cold heap
//! and reads slower than in the full run, where it reuses the memory the one before freed.
//! `ATTEMPTS_COUNT=20000` shortens each case for a profiler. `ATTEMPTS_PROTOCOL=http2` runs
//! only the HTTP/2 lines (`attempts/http2.rs`: the harness and hyper-util's `http2_only`
//! client to hyper's HTTP/2 server over a duplex, without latency), `http1` only the others.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use retrylab::scenario::Scenario;

// The same over HTTP/2 (`ATTEMPTS_PROTOCOL=http2`): a file of its own, since this one is long
// enough. Not `benches/http2.rs`, which cargo would take for a bench of its own.
#[path = "attempts/http2.rs"]
mod http2;

/// Attempts per case: 100,000, or `ATTEMPTS_COUNT` (1 to 120,000: the scenario's 30 virtual
/// days hold 129,600 attempts 20 s apart) for a shorter run under a profiler, where the
/// figures per attempt hardly change. Read from the environment once.
fn attempts() -> u64 {
    static COUNT: OnceLock<u64> = OnceLock::new();
    *COUNT.get_or_init(|| match std::env::var("ATTEMPTS_COUNT") {
        Err(_) => 100_000,
        Ok(text) => match text.parse() {
            Ok(n @ 1..=120_000) => n,
            _ => {
                eprintln!("ATTEMPTS_COUNT={text}: expected a whole number from 1 to 120000");
                std::process::exit(2)
            }
        },
    })
}

/// The one-way latency of the bench's network, and of the floor that simulates one too.
const LATENCY: Duration = Duration::from_millis(1);

fn scenario(keep_alive: bool, latency: Duration) -> Scenario {
    let keep_alive = if keep_alive {
        ""
    } else {
        "    keep_alive: { max_requests: 1 }\n"
    };
    let yaml = format!(
        "version: 1\nname: bench\nendpoints:\n  api:\n{keep_alive}    script: [ {{ status: 503 }} ]\n\
         network: {{ latency: {latency}ms }}\noperation: {{ endpoint: api, method: POST, path: /orders }}\n\
         limits: {{ max_virtual_time: 30d, max_client_attempts: 200000, wall: 1h }}\n",
        latency = latency.as_millis()
    );
    match Scenario::from_yaml_str(&yaml, "bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The wall time of the harness's attempts, and the virtual instant its run ended at.
fn harness(keep_alive: bool, latency: Duration) -> (Duration, u64) {
    let scenario = scenario(keep_alive, latency);
    let started = Instant::now();
    let report = scenario.run(|env| async move {
        let client = env.http_client();
        for _ in 0..attempts() {
            let response = client
                .request(env.operation().request())
                .await
                .map_err(|e| e.to_string())?;
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        Ok::<_, String>(())
    });
    let elapsed = started.elapsed();
    // A run that stopped early would compare fewer attempts with the floor's.
    let made = report.trace().attempts.len();
    assert_eq!(
        made as u64,
        attempts(),
        "the harness made {made} attempts: {}",
        report.summary()
    );
    (elapsed, report.trace().end_ms)
}

/// hyper-util's client and hyper's server over `tokio::io::duplex`, nothing of ours. The
/// server answers with `connection: close` when `closing` is set.
#[derive(Clone)]
struct DuplexConnector {
    closing: bool,
}

/// [`DuplexConnector`] over a [`Delayed`] pair instead: each byte, and each connect, takes
/// `latency` one way.
#[derive(Clone)]
struct DelayedConnector {
    closing: bool,
    latency: Duration,
}

/// The client's end of a floor's connection.
struct Stream<T>(TokioIo<T>);

impl<T> Connection for Stream<T> {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl<T: tokio::io::AsyncRead + Unpin> hyper::rt::Read for Stream<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> hyper::rt::Write for Stream<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// One direction of a [`Delayed`] pair: what was written, each write with the instant it
/// reaches the reader (an empty write is the end of the stream), and the reader waiting.
#[derive(Default)]
struct Lane {
    segments: VecDeque<(tokio::time::Instant, Bytes)>,
    reader: Option<Waker>,
}

type SharedLane = Arc<Mutex<Lane>>;

fn lock(lane: &SharedLane) -> MutexGuard<'_, Lane> {
    lane.lock().unwrap_or_else(|e| e.into_inner())
}

/// One end of an in-memory connection whose bytes, and whose end, reach the other end a
/// fixed latency after they are written, with tokio's paused clock and a timer per reading
/// end: all a simulated network must do to delay bytes.
struct Delayed {
    incoming: SharedLane,
    outgoing: SharedLane,
    latency: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    shut: bool,
}

impl Delayed {
    fn pair(latency: Duration) -> (Delayed, Delayed) {
        let (a, b) = (SharedLane::default(), SharedLane::default());
        let end = |incoming: &SharedLane, outgoing: &SharedLane| Delayed {
            incoming: incoming.clone(),
            outgoing: outgoing.clone(),
            latency,
            timer: None,
            shut: false,
        };
        (end(&a, &b), end(&b, &a))
    }

    fn send(&mut self, data: Bytes) {
        let mut lane = lock(&self.outgoing);
        let at = tokio::time::Instant::now() + self.latency;
        lane.segments.push_back((at, data));
        if let Some(reader) = lane.reader.take() {
            reader.wake();
        }
    }

    fn shut(&mut self) {
        if !self.shut {
            self.shut = true;
            self.send(Bytes::new());
        }
    }
}

impl Drop for Delayed {
    fn drop(&mut self) {
        self.shut();
    }
}

impl tokio::io::AsyncRead for Delayed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut lane = lock(&this.incoming);
            let Some((at, data)) = lane.segments.front_mut() else {
                lane.reader = Some(cx.waker().clone());
                return Poll::Pending;
            };
            let at = *at;
            if at <= tokio::time::Instant::now() {
                // An empty segment is the end: it stays, so every later read sees it too.
                if !data.is_empty() {
                    let n = data.len().min(buf.remaining());
                    buf.put_slice(&data.split_to(n));
                    if data.is_empty() {
                        lane.segments.pop_front();
                    }
                }
                return Poll::Ready(Ok(()));
            }
            drop(lane);
            let timer = this
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            if timer.deadline() != at {
                timer.as_mut().reset(at);
            }
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl tokio::io::AsyncWrite for Delayed {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if !buf.is_empty() {
            this.send(Bytes::copy_from_slice(buf));
        }
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().shut();
        Poll::Ready(Ok(()))
    }
}

/// Serves one floor connection: a 503 to every request, with `connection: close` when
/// `closing` is set.
async fn serve<T>(io: T, closing: bool)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |_req| async move {
        let mut response = http::Response::builder().status(503);
        if closing {
            // What an endpoint with `keep_alive: { max_requests: 1 }` sends: hyper
            // closes the connection after the response.
            response = response.header(http::header::CONNECTION, "close");
        }
        Ok::<_, std::convert::Infallible>(
            response.body(Full::new(Bytes::new())).unwrap_or_default(),
        )
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

impl tower_service::Service<http::Uri> for DuplexConnector {
    type Response = Stream<tokio::io::DuplexStream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let closing = self.closing;
        Box::pin(async move {
            let (client, server) = tokio::io::duplex(64 * 1024);
            tokio::spawn(serve(server, closing));
            Ok(Stream(TokioIo::new(client)))
        })
    }
}

impl tower_service::Service<http::Uri> for DelayedConnector {
    type Response = Stream<Delayed>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let DelayedConnector { closing, latency } = *self;
        Box::pin(async move {
            // A connect takes a round trip, as on the harness's network: the server gets its
            // end as the SYN arrives, the client its own as the SYN-ACK does.
            let (client, server) = Delayed::pair(latency);
            tokio::time::sleep(latency).await;
            tokio::spawn(serve(server, closing));
            tokio::time::sleep(latency).await;
            Ok(Stream(TokioIo::new(client)))
        })
    }
}

/// The floors the bench measures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Floor {
    /// Pool on, one connection for every request.
    KeepAlive,
    /// Pool on, the server closing each connection after its response: like for like with
    /// an endpoint of `keep_alive: { max_requests: 1 }`.
    Closing,
    /// The floor used before `Closing`: pool off, the server keeping the connection open.
    PoolOff,
    /// `KeepAlive` over a [`Delayed`] pair with the bench network's [`LATENCY`].
    KeepAliveDelayed,
    /// `Closing` over a [`Delayed`] pair with the bench network's [`LATENCY`].
    ClosingDelayed,
}

impl Floor {
    /// What `ATTEMPTS_FLOOR` calls it.
    fn name(self) -> &'static str {
        match self {
            Floor::KeepAlive => "duplex",
            Floor::Closing => "closing",
            Floor::PoolOff => "pool-off",
            Floor::KeepAliveDelayed | Floor::ClosingDelayed => "latency",
        }
    }
}

/// The wall time of `kind`'s attempts, and the virtual time they took.
fn floor(kind: Floor) -> (Duration, Duration) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let closing = matches!(kind, Floor::Closing | Floor::ClosingDelayed);
    let pool_off = kind == Floor::PoolOff;
    let virtual_time = runtime.block_on(async {
        let start = tokio::time::Instant::now();
        match kind {
            Floor::KeepAlive | Floor::Closing | Floor::PoolOff => {
                drive(DuplexConnector { closing }, pool_off).await;
            }
            Floor::KeepAliveDelayed | Floor::ClosingDelayed => {
                let latency = LATENCY;
                drive(DelayedConnector { closing, latency }, pool_off).await;
            }
        }
        start.elapsed()
    });
    (started.elapsed(), virtual_time)
}

/// The floor's client: the bench's attempts, 20 s apart, through hyper-util over `connector`.
async fn drive<C>(connector: C, pool_off: bool)
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let client: Client<C, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_max_idle_per_host(if pool_off { 0 } else { usize::MAX })
        .build(connector);
    let mut answered = 0;
    for _ in 0..attempts() {
        let request = http::Request::post("http://api/orders")
            .body(Full::new(Bytes::new()))
            .unwrap_or_default();
        if let Ok(response) = client.request(request).await {
            answered += u64::from(response.status() == 503);
            let _ = response.into_body().collect().await;
        }
        tokio::time::sleep(Duration::from_secs(20)).await;
    }
    // A floor whose requests failed would be cheap for the wrong reason.
    assert_eq!(
        answered,
        attempts(),
        "the floor's server answered {answered} requests with 503"
    );
}

fn per_attempt(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6 / attempts() as f64
}

/// What the environment asks the bench to run, read once (the doc comment lists the
/// variables). A value the bench does not know stops it, rather than run nothing.
struct Selection {
    /// `ATTEMPTS_ONLY`: `new` or `keep`, or both modes.
    only: Option<String>,
    /// The harness's cases: with the network's latency, and without (`ATTEMPTS_HARNESS`,
    /// `ATTEMPTS_NOHARNESS`).
    harness_latency: bool,
    harness_none: bool,
    /// `ATTEMPTS_NOFLOOR` unset.
    floors: bool,
    /// `ATTEMPTS_FLOOR`: the one floor to run.
    floor: Option<String>,
}

impl Selection {
    fn from_env() -> Selection {
        let var = |name: &str, allowed: &[&str]| match std::env::var(name) {
            Err(_) => None,
            Ok(value) if allowed.contains(&value.as_str()) => Some(value),
            Ok(value) => {
                eprintln!("{name}={value}: expected one of {}", allowed.join(", "));
                std::process::exit(2)
            }
        };
        // Checked before anything runs, like the variables below.
        attempts();
        let only = var("ATTEMPTS_ONLY", &["new", "keep"]);
        let harness = var("ATTEMPTS_HARNESS", &["latency", "none"]);
        let no_harness = std::env::var_os("ATTEMPTS_NOHARNESS").is_some();
        let floor = var(
            "ATTEMPTS_FLOOR",
            &["duplex", "closing", "pool-off", "latency"],
        );
        Selection {
            only,
            harness_latency: !no_harness && harness.as_deref() != Some("none"),
            harness_none: !no_harness && harness.as_deref() != Some("latency"),
            floors: std::env::var_os("ATTEMPTS_NOFLOOR").is_none(),
            floor,
        }
    }

    fn mode(&self, keep_alive: bool) -> bool {
        match self.only.as_deref() {
            Some("new") => !keep_alive,
            Some("keep") => keep_alive,
            _ => true,
        }
    }

    /// Whether `kind` runs: asked for, and printed beside a harness case that runs (every
    /// floor when the harness does not run).
    fn floor(&self, kind: Floor) -> bool {
        let asked = self.floors && self.floor.as_deref().is_none_or(|only| only == kind.name());
        let shown = match kind {
            Floor::KeepAlive | Floor::Closing => true,
            Floor::KeepAliveDelayed | Floor::ClosingDelayed | Floor::PoolOff => {
                self.harness_latency || !self.harness_none
            }
        };
        asked && shown
    }

    /// Times `kind` if it runs.
    fn timed_floor(&self, kind: Floor) -> Option<(Duration, Duration)> {
        self.floor(kind).then(|| floor(kind))
    }

    /// Times the harness with the network's `latency` if that case runs.
    fn timed_harness(&self, keep_alive: bool, latency: Duration) -> Option<(Duration, u64)> {
        let runs = if latency.is_zero() {
            self.harness_none
        } else {
            self.harness_latency
        };
        runs.then(|| harness(keep_alive, latency))
    }
}

/// Virtual seconds per attempt: the pause between attempts and the attempt's own round
/// trips, to check that a floor with latency simulates as many as the harness.
fn virtual_per_attempt(d: Duration) -> f64 {
    d.as_secs_f64() / attempts() as f64
}

/// A floor's figures, or why there are none.
fn floor_text(name: &str, floor: Option<(Duration, Duration)>, wall: Duration) -> String {
    match floor {
        // No ratio without the harness's own time (`ATTEMPTS_NOHARNESS`).
        Some((floor, virtual_time)) if wall.is_zero() => format!(
            "{name} {:.3}s ({:.1} us/attempt, {:.4} virtual s/attempt)",
            floor.as_secs_f64(),
            per_attempt(floor),
            virtual_per_attempt(virtual_time)
        ),
        Some((floor, virtual_time)) => format!(
            "{name} {:.3}s ({:.1} us/attempt, {:.4} virtual s/attempt, ratio {:.2})",
            floor.as_secs_f64(),
            per_attempt(floor),
            virtual_per_attempt(virtual_time),
            wall.as_secs_f64() / floor.as_secs_f64()
        ),
        None => format!("{name} not run"),
    }
}

fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let selection = Selection::from_env();
    if http2::asked("http2") {
        http2::run(|keep_alive| selection.mode(keep_alive));
    }
    if !http2::asked("http1") {
        return;
    }
    let latency_ms = LATENCY.as_millis();
    for keep_alive in [false, true] {
        if !selection.mode(keep_alive) {
            continue;
        }
        let (label, bare, delayed) = if keep_alive {
            ("keep-alive", Floor::KeepAlive, Floor::KeepAliveDelayed)
        } else {
            (
                "new connection per attempt",
                Floor::Closing,
                Floor::ClosingDelayed,
            )
        };
        let bare_name = if keep_alive {
            "floor hyper-util over duplex"
        } else {
            "floor hyper-util over duplex, server closing"
        };
        let bare = selection.timed_floor(bare);
        let delayed = selection.timed_floor(delayed);
        let pool_off = if keep_alive {
            None
        } else {
            Some(selection.timed_floor(Floor::PoolOff))
        };
        // The harness with the bench network's latency, against the floors; then without
        // latency, against the floor without.
        if let Some((wall, end_ms)) = selection.timed_harness(keep_alive, LATENCY) {
            same_virtual_time(label, end_ms, delayed);
            let mut floors = vec![
                floor_text(bare_name, bare, wall),
                floor_text(
                    &format!("the same with {latency_ms} ms latency"),
                    delayed,
                    wall,
                ),
            ];
            if let Some(pool_off) = pool_off {
                floors.push(floor_text("older floor with the pool off", pool_off, wall));
            }
            println!(
                "{label}, {latency_ms} ms latency: {}; {}",
                harness_text(wall, end_ms),
                floors.join("; "),
            );
        }
        if let Some((wall, end_ms)) = selection.timed_harness(keep_alive, Duration::ZERO) {
            same_virtual_time(label, end_ms, bare);
            println!(
                "{label}, no latency: {}; {}",
                harness_text(wall, end_ms),
                floor_text(bare_name, bare, wall),
            );
        }
        if !selection.harness_latency && !selection.harness_none {
            let delayed_name = format!("the same with {latency_ms} ms latency");
            let floors = [(bare_name, bare), (delayed_name.as_str(), delayed)]
                .into_iter()
                .chain(pool_off.map(|p| ("older floor with the pool off", p)))
                .map(|(name, floor)| floor_text(name, floor, Duration::ZERO))
                .collect::<Vec<_>>();
            println!("{label}: {}", floors.join("; "));
        }
    }
}

/// A floor that took another virtual time than the harness did not simulate the same round
/// trips: its ratio would compare unlike things.
fn same_virtual_time(label: &str, harness_ms: u64, floor: Option<(Duration, Duration)>) {
    if let Some((_, virtual_time)) = floor {
        let floor_ms = virtual_time.as_millis();
        assert_eq!(
            u128::from(harness_ms),
            floor_ms,
            "{label}: the harness took {harness_ms} virtual ms and its floor {floor_ms}"
        );
    }
}

fn harness_text(wall: Duration, end_ms: u64) -> String {
    format!(
        "retrylab {} attempts in {:.3}s wall ({:.1} us/attempt, {:.4} virtual s/attempt)",
        attempts(),
        wall.as_secs_f64(),
        per_attempt(wall),
        virtual_per_attempt(Duration::from_millis(end_ms)),
    )
}
