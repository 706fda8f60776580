//! Deterministic fault-injection tests for retry clients.
//!
//! retrylab runs a retry client (anything on tokio and hyper: a hand-written loop, tower,
//! backon, tokio-retry2, backoff, the built-in reference client) against **scripted fake
//! endpoints** on a simulated network whose clock is **virtual**: 5xx bursts, 429 with
//! `Retry-After`, slow and trickled answers, outages, flaky steps, resets, refused or
//! black-holed connects, partitions, crashes and restarts. Every
//! attempt is recorded to the millisecond, and checks judge the timeline: how many attempts,
//! how far apart, whether `Retry-After` was honoured, whether an effect happened exactly once.
//! Waiting costs nothing (a schedule of days runs in about a second), and the same scenario
//! and seed give a byte-identical trace on every machine, so the timeline can be kept as an
//! insta snapshot.
//!
//! # A first scenario
//!
//! A scenario scripts the endpoints, the network, the request each call makes, the built-in
//! client's policy and the checks. Load it from a string with [`Scenario::from_yaml_str`] (or
//! a file with [`Scenario::load`]) and run it with its built-in client:
//!
//! ```
//! use retrylab::Scenario;
//!
//! let yaml = r#"
//! version: 1
//! name: a burst of 503s, then success
//! endpoints:
//!   api:
//!     script:
//!       - { status: 503, times: 3 }     # the first three requests
//!       - { status: 200, body: done }   # every later one
//! network: { latency: 1ms }             # one way
//! operation: { endpoint: api, method: POST, path: /orders }
//! client:
//!   exponential: { initial: 100ms, jitter: none, max_attempts: 4 }
//! expect:
//!   outcome: success
//!   attempts: 4
//!   gaps: [ { within: [100ms, 100ms] }, { within: [200ms, 200ms] }, { within: [400ms, 400ms] } ]
//! "#;
//! let scenario = Scenario::from_yaml_str(yaml, "burst.yaml").unwrap();
//! let report = scenario.run_builtin();
//! report.assert(); // panics with the failed verdicts and the timeline
//! assert_eq!(report.trace().timeline(), "\
//! t=0.000s  #1  POST /orders  -> 503  conn 1 new  => retry in 0.100s
//! t=0.104s  #2  POST /orders  -> 503  conn 1 reused  gap 0.100s  => retry in 0.200s
//! t=0.306s  #3  POST /orders  -> 503  conn 1 reused  gap 0.200s  => retry in 0.400s
//! t=0.708s  #4  POST /orders  -> 200  conn 1 reused  gap 0.400s  => stop: success
//! ");
//! ```
//!
//! A gap runs from the end of one attempt to the start of the next. The first attempt takes
//! 4 ms (a connect round trip, then a request round trip, at 1 ms each way); the later ones
//! reuse the connection.
//!
//! To test your own client instead, give [`Scenario::run`] a closure. This one makes a single
//! attempt and never retries, so the checks catch it:
//!
//! ```
//! # use retrylab::Scenario;
//! # let scenario = Scenario::from_yaml_str("version: 1\nname: burst\nendpoints: { api: { script: \
//! #     [ { status: 503, times: 3 }, { status: 200 } ] } }\noperation: { endpoint: api }\n\
//! #     expect: { outcome: success, attempts: 4 }\n", "burst.yaml").unwrap();
//! let report = scenario.run(|env| async move {
//!     let response = env.http_client().request(env.operation().request()).await;
//!     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
//! });
//! assert!(!report.passed());
//! let failed: Vec<&str> = report.failures().map(|v| v.check.as_str()).collect();
//! assert_eq!(failed, ["attempts"]);
//! ```
//!
//! # The same scenario in code
//!
//! [`Scenario::builder`] builds the same value, with the same validation; the [`prelude`]
//! brings the types and the free functions that start its sentences:
//!
//! ```
//! use retrylab::prelude::*;
//! use retrylab::scenario::Jitter;
//!
//! let scenario = Scenario::builder("a burst of 503s, then success")
//!     .endpoint("api", endpoint().script([status(503).times(3), status(200).body("done")]))
//!     .latency(ms(1))
//!     .operation(post("api", "/orders"))
//!     .client(exponential().initial(ms(100)).jitter(Jitter::None).max_attempts(4))
//!     .expect(expect().outcome(Success).attempts(4).gap(within(ms(100), ms(100)))
//!         .gap(within(ms(200), ms(200))).gap(within(ms(400), ms(400))))
//!     .build()
//!     .unwrap();
//! scenario.run_builtin().assert();
//! ```
//!
//! # Plugging a client in
//!
//! The closure given to [`Scenario::run`] is called once per logical call
//! (`operation.calls`, 1 by default) with an [`Env`], and returns a `Result<T, E>` with
//! `T, E: Debug`: `Ok` is the outcome `success`, `Err` is `failure`, and the `Debug` text is
//! the call's result in the trace. The closure runs on the simulation's own runtime, so it
//! sleeps with `tokio::time` like any tokio code, on virtual time. Through the `Env` it
//! reaches the simulated network in one of two ways:
//!
//! - [`Env::http_client`]: hyper-util's client on the simulated network. Every request is an
//!   attempt in the trace; the attempt ends when the body has been read to the end or the
//!   response dropped.
//! - [`Env::connector`]: the network as a `tower::Service<Uri>`, for a hyper-util client you
//!   build yourself; attempts are then reconstructed from what the network and the endpoint
//!   saw.
//!
//! [`Env::operation`] is the scenario's request for this call: `.request()` gives a fresh
//! `http::Request` for each attempt, with the call's idempotency key when the scenario asks
//! for one. [`Env::url`] is an endpoint's base URL (`http://api`), [`Env::seed`] seeds your
//! own randomness once per run and [`Env::call_seed`] once per call, [`Env::now_system`] is
//! the virtual wall clock and [`Env::std_clock`] a `std::time::Instant` clock on virtual
//! time. A retry loop of your own, against a file of the scenario library:
//!
//! ```
//! use std::time::Duration;
//! use http_body_util::BodyExt;
//! use retrylab::Scenario;
//!
//! // Tests and doctests run in their crate's directory (here `harness/`).
//! let scenario = Scenario::load("../scenarios/http/5xx-burst-then-success.yaml").unwrap();
//! let report = scenario.run(|env| async move {
//!     let client = env.http_client();
//!     let mut pause = Duration::from_millis(100);
//!     for _ in 0..4 {
//!         let response = client.request(env.operation().request()).await.map_err(|e| e.to_string())?;
//!         let status = response.status().as_u16();
//!         response.into_body().collect().await.map_err(|e| e.to_string())?; // the attempt ends here
//!         if status < 500 {
//!             return Ok(status);
//!         }
//!         tokio::time::sleep(pause).await; // virtual: no real waiting
//!         pause *= 2;
//!     }
//!     Err("gave up".to_owned())
//! });
//! assert!(report.passed(), "{}", report.summary());
//! ```
//!
//! The library's files set `snapshot: true` and carry snapshots of the built-in client, so
//! against them check [`Report::passed`]; on scenarios of your own, [`Report::assert`] also
//! asserts the snapshot.
//!
//! A retry crate wants one attempt it can call again: [`attempt`] is that attempt (the
//! operation on [`Env::http_client`], the body read to the end), with the answer classified
//! as `Ok(status)` for a 2xx or an [`AttemptError`] that says whether a retry may help. With
//! backon it reads `(|| attempt(&env)).retry(builder).when(AttemptError::is_retryable)`; by
//! hand:
//!
//! ```
//! use std::time::Duration;
//! use retrylab::prelude::*;
//!
//! let scenario = Scenario::load("../scenarios/http/5xx-burst-then-success.yaml").unwrap();
//! let report = scenario.run(|env| async move {
//!     let mut pause = Duration::from_millis(100);
//!     loop {
//!         match attempt(&env).await {
//!             Err(error) if error.is_retryable() && pause <= Duration::from_millis(400) => {
//!                 tokio::time::sleep(pause).await; // 100ms, 200ms, 400ms of virtual time
//!                 pause *= 2;
//!             }
//!             result => return result,
//!         }
//!     }
//! });
//! assert!(report.passed(), "{}", report.summary());
//! ```
//!
//! A client with a network stack of its own (a plain `reqwest::Client`, curl, a program in
//! another language) runs against the same endpoints on real sockets: `backend: real` serves
//! them on 127.0.0.1 in real time (`env.url(..)` names the address), and
//! [`Scenario::serve`] (`retrylab serve`) serves a scenario to a client outside the process
//! and judges what it did.
//!
//! # Checks
//!
//! `expect:` holds the checks; each applies to every call (`total_*` ones to all calls
//! together), and each failed verdict explains itself and points at the attempt. A check
//! without the evidence it needs (no attempt, a run cut short) is not judged, which counts
//! as a failure:
//!
//! - `outcome` / `outcomes`: `success`, `failure` or `stopped` (by a limit).
//! - `stop_reason`: why the built-in client stopped (`not_retryable`, ...).
//! - `attempts` / `total_attempts`: attempts per call, or over all calls.
//! - `requests_received`: the requests that reached the endpoints.
//! - `gaps` / `gaps_each`: bounds on the time from the end of one attempt to the start of the
//!   next (`within`, `at_least`, `at_most`).
//! - `retry_after`: `Retry-After` was honoured (`honour: max | exact`, `cap`, `invalid`).
//! - `not_retried_on`: no attempt follows these statuses.
//! - `effects`: `exactly_once`, `at_most_once` or `at_least_once`.
//! - `conforms_to`: every attempt fits what a named policy allows any correct client to do
//!   (and, for a jittered policy, the delays are not all its schedule without jitter).
//! - `jitter: present`: two calls that retried after the same responses do not always sleep
//!   the same; a client whose jitter is off fails.
//! - `total_time`: a bound on each call's duration.
//! - `no_attempt_after`: no attempt starts later than this after its call started (a
//!   client-side deadline).
//! - `dead_lettered`, `max_rate`, `late_requests`: hand-offs to a dead-letter endpoint,
//!   requests per window, requests after their call returned.
//! - `same_idempotency_key`, `same_body`, `header`: what the requests of a call carried.
//! - `distinct_keys`, `duplicates`, `consumer`: the messages a `kind: broker` endpoint
//!   stored: every one with a key of its own, at most `n` duplicates, and one message per
//!   send for a consumer that deduplicates on the key.
//!
//! `must_fail: [check, ...]` marks a scenario that demonstrates a caught defect: it passes
//! only when exactly those checks fail. A client that ignores `Retry-After` is caught:
//!
//! ```
//! let scenario = retrylab::Scenario::load("../scenarios/http/retry-after-ignored.yaml").unwrap();
//! assert_eq!(scenario.must_fail, ["retry_after"]);
//! let report = scenario.run_builtin();
//! assert!(report.passed(), "{}", report.summary());
//! ```
//!
//! # Snapshots
//!
//! With `snapshot: true`, [`Report::assert`] compares the compacted trace (calls, attempts,
//! connections, effects, verdicts) with an insta snapshot named after the scenario file, in
//! `tests/snapshots/` of the crate that runs the test. A new or changed trace fails and leaves
//! a `.snap.new` beside it: review it with `cargo insta review` (or accept every change with
//! `INSTA_UPDATE=always`). CI runs with `INSTA_UPDATE=no`, so a pending snapshot fails there.
//! `RETRYLAB_SEED=N` reruns a scenario with another seed (its verdicts are judged; the
//! snapshot is compared only for the scenario's own seed); a failing report prints the seed
//! that reproduces it.
//!
//! # One test per scenario file
//!
//! [`scenario_main!`](crate::scenario_main) turns a folder of scenario files into one test per
//! file (and per seed of a `seeds:` sweep), so `cargo test -- --list`, filters and
//! `cargo nextest run --partition` work as for any test. It defines `main`, so it goes in a
//! test target of its own, without libtest:
//!
//! ```toml
//! [[test]]
//! name = "scenarios"
//! path = "tests/scenarios.rs"
//! harness = false
//! ```
//!
//! ```text
//! // tests/scenarios.rs: the directory is relative to the crate's Cargo.toml
//! retrylab::scenario_main!(dir = "scenarios", clients = my_clients());
//! ```
//!
//! Files with `client: { custom: <name> }` run the Rust client registered under that name;
//! the others run their built-in client. A registered client is called like the closure of
//! [`Scenario::run`]:
//!
//! ```
//! use retrylab::{Clients, Scenario};
//!
//! let clients = Clients::new().register("one_shot", |env| async move {
//!     let response = env.http_client().request(env.operation().request()).await;
//!     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
//! });
//! let scenario = Scenario::from_yaml_str(
//!     "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
//!      operation: { endpoint: api }\nclient: { custom: one_shot }\nexpect: { attempts: 1 }\n",
//!     "ok.yaml",
//! )
//! .unwrap();
//! clients.run(&scenario, scenario.seed).unwrap().assert();
//! ```
//!
//! # What breaks virtual time
//!
//! Virtual time is tokio's paused clock: everything on `tokio::time` (sleeps, timeouts,
//! `tokio::time::Instant`) follows it with no help, and so does [`Env::now_system`]:
//!
//! ```
//! use std::time::Duration;
//! use retrylab::prelude::*;
//!
//! let scenario = Scenario::builder("an hour")
//!     .endpoint("api", endpoint().script([status(200)]))
//!     .operation(get("api", "/"))
//!     .build()
//!     .unwrap();
//! let report = scenario.run(|env| async move {
//!     let start = env.now_system();
//!     tokio::time::sleep(Duration::from_secs(3600)).await; // returns at once
//!     assert_eq!(env.now_system().duration_since(start).unwrap(), Duration::from_secs(3600));
//!     let response = env.http_client().request(env.operation().request()).await;
//!     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
//! });
//! report.assert();
//! assert_eq!(report.trace().timeline(), "t=3600.000s  #1  GET /  -> 200  conn 1 new\n");
//! ```
//!
//! What does not follow it:
//!
//! - **Blocking the thread** (`std::thread::sleep`, blocking IO, a busy loop, a pause inside
//!   `spawn_blocking`) stops virtual time. After `limits.wall` of real time (60 s by default)
//!   the run is stopped with the verdict `wall_limit`, which says whether the thread was
//!   blocked, busy or the run merely slow, keeping its trace so far; a shorter block fails
//!   the verdict `stopped_clock`, which names the attempts around it.
//! - **The real clock**: a budget or deadline read from `std::time::Instant::now()` or
//!   `SystemTime::now()` barely moves while a run covers hours, so it never expires. Give a
//!   crate that takes a clock [`Env::std_clock`] (for `backoff`, feature `backoff`), compare
//!   HTTP-dates with [`Env::now_system`], and bound the rest with `tokio::time::timeout`.
//! - **Bypassing the harness**: a client with its own connector talks to the real network;
//!   when nothing reached the endpoint, the verdict `bypass` asks whether it used
//!   [`Env::http_client`] or [`Env::connector`].
//! - **Unseeded randomness** does not stop time, but every run differs and no snapshot holds:
//!   seed jitter from [`Env::call_seed`] (a generator made in each call) or [`Env::seed`] (one
//!   generator for every call), or check bounds with `snapshot: false`.
//!
//! # Feature flags
//!
//! - `cli`: the `retrylab` binary (`retrylab run`, `retrylab check`, `retrylab serve`,
//!   `retrylab search`); it turns on `search`.
//! - `search`: property search, `retrylab::search` (the `search` module): proptest draws
//!   fault schedules around a scenario, checks invariants on each, and shrinks a failure into
//!   a regression file; and `search:` blocks in the scenario suite.
//! - `schema`: `scenario::json_schema()`, the JSON Schema of scenario files.
//! - `backoff`: a `backoff::Clock` on virtual time, [`env::VirtualStdClock`]. Opt-in, since
//!   the `backoff` crate is unmaintained.
//! - `reqwest`: `adapters::reqwest`, reqwest 0.13 (reqwest-middleware 0.5) on the harness's
//!   network, with `env.reqwest_client(..)`; `reqwest-0-12`: the same for reqwest 0.12
//!   (reqwest-middleware 0.4), `adapters::reqwest_0_12`. Without TLS.
//! - `aws`: the AWS SDK for Rust on the harness, [`adapters`]`::aws`: its HTTP client, clock
//!   and sleeps on the simulated network and virtual time, and `env.aws_sdk_config()` /
//!   `env.aws_sdk_client(..)`. The AWS crates need rustc 1.94.1 (the rest builds with 1.85).
//!
//! # Stability
//!
#![doc = include_str!("../docs/stability.md")]
//!
//! # Read more
//!
//! - [The guide](https://github.com/retrylab/retrylab/blob/main/docs/guide/README.md): task-first
//!   chapters (a Rust client, reqwest and the AWS SDK, other languages, timing, snapshots in
//!   CI, search, fleets, conformance).
//! - [The scenario format](https://github.com/retrylab/retrylab/blob/main/docs/scenario-format.md):
//!   every key, its default and whether it runs today (also the [`scenario`] module's page).
//! - [The architecture](https://github.com/retrylab/retrylab/blob/main/docs/architecture.md):
//!   the pipeline, the sim backend, virtual time and determinism.
//! - [Retry behaviours](https://github.com/retrylab/retrylab/blob/main/docs/retry-behaviours.md):
//!   the real-world retry behaviours the built-in policies model.

pub mod adapters;
mod backend;
mod check;
pub mod client;
pub mod conformance;
#[cfg(feature = "diagnostics")]
pub mod diagnostic;
pub mod env;
pub mod internals;
pub mod overrides;
#[cfg(feature = "plot")]
pub mod plot;
pub mod policy;
pub mod prelude;
mod report;
pub mod rng;
mod run;
pub mod scenario;
#[cfg(feature = "search")]
pub mod search;
pub mod suite;
pub mod trace;

pub use env::{
    AttemptError, Connecting, Env, EnvConnector, HttpClient, Operation, attempt, attempt_with,
};
pub use report::{Judgement, ProcessExit, ProcessOutput, ProcessRun, Report, RunEnd, Verdict};
pub use run::{Listening, ServeOptions};
pub use scenario::Scenario;
#[cfg(feature = "search")]
pub use search::search;
pub use suite::Clients;
