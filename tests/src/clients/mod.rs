//! Real retry crates around a call on `env.http_client()`, one module per crate, each
//! configured as the `scenarios/clients/` file that names it says.
//!
//! Every client makes its attempts with [`retrylab::attempt`]: the scenario's request on the
//! harness client, body read to the end, answer classified ([`retrylab::AttemptError`]). The
//! retry crate decides the rest: whether to retry, and how long to sleep. [`registry`]
//! registers them all for `client: { custom: <name> }`.
//!
//! | name | crate | what |
//! |---|---|---|
//! | `tower_retry_backoff` | tower | `Retry` + a `Policy` sleeping `retry::backoff::ExponentialBackoff` |
//! | `tower_retry_budget` | tower | `Retry` + a `Policy` spending `retry::budget::TpsBudget` |
//! | `tower_timeout_head` | tower | `Retry` around `timeout::Timeout` (1s) around a service answering at the head; the body is read afterwards |
//! | `backon_exponential` | backon | `ExponentialBuilder::default()` |
//! | `backon_exponential_jitter` | backon | `ExponentialBuilder::default().with_jitter()`, seeded |
//! | `backon_fibonacci` | backon | `FibonacciBuilder`, 100ms, max 400ms, 6 retries |
//! | `backon_retry_after` | backon | `ExponentialBuilder::default()` + the `.adjust` of its docs |
//! | `tokio_retry2_exponential` | tokio-retry2 | the `ExponentialBackoff` example of its docs |
//! | `tokio_retry2_jitter` | tokio-retry2 | `ExponentialBackoff` `.map(jitter)` |
//! | `tokio_retry2_retry_after` | tokio-retry2 | `RetryError::retry_after` on a 429 |
//! | `tokio_retry2_max_duration` | tokio-retry2 | `FixedInterval` `.max_duration(5s)` |
//! | `backoff_virtual_clock` | backoff | `ExponentialBackoff<VirtualStdClock>`, `max_elapsed_time` 10s |
//! | `backoff_system_clock` | backoff | the same on the default `SystemClock` |
//! | `naive_retry_after_date_as_seconds` | none | a loop reading `Retry-After` as its first number: an HTTP-date waits its day of the month |
//! | `naive_retry_after_garbage_immediately` | none | a loop retrying at once on a `Retry-After` it cannot parse |
//! | `naive_idempotency_conflict_as_success` | none | a loop ending the call in success on a 409, the in-flight rejection of its own key |
//! | `naive_idempotency_new_body_on_retry` | none | a loop stamping each attempt's number into its body, so a retry reuses the key with another body |
//! | `servicenow_get_delay` | none | `ServiceNow`'s custom strategy: a `get_delay(attempt, response)` behind its loop, 3 retries |
//! | `planted_off_by_one` | none | the reference client, `exponential` with one attempt more than its `max_attempts`: the planted defect of `scenarios/search/` |
//! | `planted_correct` | none | the same client without the defect |
//! | `http1_then_http2` | hyper-util | `env.http_client()` in even calls, `env.http2_client()` in odd ones, a 5xx retried after 100ms, 3 attempts |
//! | `grpc_counts_refused_streams` | none | the reference client, `grpc_retry` (3 attempts), counting a refused HTTP/2 stream as an attempt where A6 retries it transparently |
//! | `reqwest_retry_exponential` | reqwest-retry | `ExponentialBackoff`, [100ms, 1s], no jitter, 5 retries |
//! | `reqwest_retry_doc_example` | reqwest-retry | `ExponentialBackoff::builder().build_with_max_retries(3)`, jittered |
//! | `reqwest_retry_total_duration` | reqwest-retry | `build_with_total_retry_duration_and_max_retries(5s, 20)` |
//! | `reqwest_retry_limit_retries` | reqwest-retry | `build_with_total_retry_duration_and_limit_retries(24h)` |
//! | `aws_sdk_sqs` | aws-sdk-sqs | `RetryConfig::standard()` (feature `aws`) |
//! | `aws_sdk_sqs_no_jitter` | aws-sdk-sqs | the same, jitter factor fixed at 1 (feature `aws`) |
//! | `aws_sdk_sqs_100_attempts` | aws-sdk-sqs | no jitter, 100 attempts per call (feature `aws`) |
//! | `tonic_retry_loop` | tonic | a hand-written loop on `env.tonic_channel()`: `UNAVAILABLE` retried after the pushback, else 100ms doubling, 4 attempts (feature `tonic`) |
//! | `tonic_tower_retry` | tonic, tower | `Retry` + a `Policy` retrying `UNAVAILABLE` 3 times, 100ms apart (feature `tonic`) |
//! | `tonic_backon` | tonic, backon | `ExponentialBuilder::default()` + an `.adjust` waiting the pushback (feature `tonic`) |
//!
//! A client with a network stack of its own, for `backend: real` scenarios
//! (`scenarios/real/`): it reaches the endpoints over real sockets at 127.0.0.1, and its
//! attempts are rebuilt from what the endpoints recorded. (Programs in other languages, curl
//! and urllib3 among them, need no Rust: their files name them with `client: { command }`.)
//!
//! | name | client | what |
//! |---|---|---|
//! | `reqwest_plain` | reqwest 0.13 | a plain `reqwest::Client` in a loop retrying resets and unexpected ends of stream (feature `reqwest`) |
//!
//! The reqwest-retry clients need feature `reqwest` (reqwest 0.13); without it they are
//! registered as unavailable, and the suite lists their scenarios as ignored.
//! [`reqwest_retry_0_8`] (feature `reqwest-0-12`) holds the same clients on reqwest 0.12,
//! which `tests/reqwest.rs` runs against the same files. The AWS SDK clients need feature
//! `aws` in the same way.

use retrylab::suite::Clients;

#[cfg(feature = "aws")]
pub mod aws_sdk;
pub mod backoff;
pub mod backon;
pub mod http2;
pub mod http2_counting;
pub mod naive_idempotency;
pub mod naive_retry_after;
pub mod planted;
#[cfg(feature = "reqwest")]
pub mod reqwest;
#[cfg(feature = "reqwest")]
pub mod reqwest_retry;
#[cfg(feature = "reqwest-0-12")]
pub mod reqwest_retry_0_8;
pub mod servicenow;
pub mod tokio_retry2;
#[cfg(feature = "tonic")]
pub mod tonic;
pub mod tower;

/// The reqwest-retry clients, by the names `scenarios/clients/reqwest-retry-*.yaml` give.
const REQWEST_RETRY: [&str; 4] = [
    "reqwest_retry_exponential",
    "reqwest_retry_doc_example",
    "reqwest_retry_total_duration",
    "reqwest_retry_limit_retries",
];

/// Every client of this module, by the name `scenarios/clients/` files give in
/// `client: { custom: <name> }`.
pub fn registry() -> Clients {
    let clients = Clients::new()
        .register("tower_retry_backoff", tower::retry_backoff)
        .register("tower_retry_budget", tower::retry_budget)
        .register("tower_timeout_head", tower::timeout_head)
        .register("backon_exponential", backon::exponential)
        .register("backon_exponential_jitter", backon::exponential_jitter)
        .register("backon_fibonacci", backon::fibonacci)
        .register("backon_retry_after", backon::retry_after)
        .register("tokio_retry2_exponential", tokio_retry2::exponential)
        .register("tokio_retry2_jitter", tokio_retry2::jitter)
        .register("tokio_retry2_retry_after", tokio_retry2::retry_after)
        .register("tokio_retry2_max_duration", tokio_retry2::max_duration)
        .register("backoff_virtual_clock", backoff::virtual_clock)
        .register("backoff_system_clock", backoff::system_clock)
        .register(
            "naive_retry_after_date_as_seconds",
            naive_retry_after::date_as_seconds,
        )
        .register(
            "naive_retry_after_garbage_immediately",
            naive_retry_after::garbage_immediately,
        )
        .register(
            "naive_idempotency_conflict_as_success",
            naive_idempotency::conflict_as_success,
        )
        .register(
            "naive_idempotency_new_body_on_retry",
            naive_idempotency::new_body_on_retry,
        )
        .register("servicenow_get_delay", servicenow::get_delay_client)
        .register("planted_off_by_one", planted::off_by_one)
        .register("planted_correct", planted::correct)
        .register("http1_then_http2", http2::http1_then_http2)
        .register(
            "grpc_counts_refused_streams",
            http2_counting::counts_refused_streams,
        );
    with_tonic(with_reqwest_plain(with_aws_sdk(with_reqwest_retry(
        clients,
    ))))
}

/// The tonic clients, by the names `scenarios/clients/tonic-*.yaml` give.
pub const TONIC_CLIENTS: [&str; 3] = ["tonic_retry_loop", "tonic_tower_retry", "tonic_backon"];

/// `clients` with the tonic clients (feature `tonic`).
#[cfg(feature = "tonic")]
fn with_tonic(clients: Clients) -> Clients {
    let [retry_loop, tower_retry, backon] = TONIC_CLIENTS;
    clients
        .register(retry_loop, tonic::retry_loop)
        .register(tower_retry, tonic::tower_retry)
        .register(backon, tonic::backon)
}

/// Without feature `tonic` the tonic clients cannot run: their scenarios are listed as
/// ignored, with how to run them.
#[cfg(not(feature = "tonic"))]
fn with_tonic(clients: Clients) -> Clients {
    TONIC_CLIENTS.iter().fold(clients, |clients, name| {
        clients.unavailable(
            name,
            "the tonic clients need feature `tonic` (rustc 1.88 or later): cargo test -p retrylab-tests --features tonic --test scenarios",
        )
    })
}

/// The name of the plain reqwest client (feature `reqwest`).
pub const REQWEST_PLAIN: &str = "reqwest_plain";

#[cfg(feature = "reqwest")]
fn with_reqwest_plain(clients: Clients) -> Clients {
    clients.register(REQWEST_PLAIN, reqwest::retry_loop)
}

#[cfg(not(feature = "reqwest"))]
fn with_reqwest_plain(clients: Clients) -> Clients {
    clients.unavailable(
        REQWEST_PLAIN,
        "the plain reqwest client runs with feature `reqwest` of retrylab-tests \
         (cargo test -p retrylab-tests --features reqwest --test scenarios)",
    )
}

/// `clients` with the AWS SDK for Rust clients (feature `aws`), under the names of
/// [`AWS_CLIENTS`].
#[cfg(feature = "aws")]
fn with_aws_sdk(clients: Clients) -> Clients {
    let [standard, no_jitter, hundred_attempts] = AWS_CLIENTS;
    clients
        .register(standard, aws_sdk::standard)
        .register(no_jitter, aws_sdk::no_jitter)
        .register(hundred_attempts, aws_sdk::hundred_attempts)
}

/// The names of the AWS SDK for Rust clients, for the build without feature `aws`.
pub const AWS_CLIENTS: [&str; 3] = [
    "aws_sdk_sqs",
    "aws_sdk_sqs_no_jitter",
    "aws_sdk_sqs_100_attempts",
];

/// Without feature `aws` the AWS SDK clients cannot run: their scenarios are listed as
/// ignored, with how to run them.
#[cfg(not(feature = "aws"))]
fn with_aws_sdk(clients: Clients) -> Clients {
    AWS_CLIENTS.iter().fold(clients, |clients, name| {
        clients.unavailable(
            name,
            "the AWS SDK for Rust clients need feature `aws` (rustc 1.94.1 or later): \
             cargo test -p retrylab-tests --features aws --test scenarios",
        )
    })
}

/// `clients` with the reqwest-retry clients (feature `reqwest`).
#[cfg(feature = "reqwest")]
fn with_reqwest_retry(clients: Clients) -> Clients {
    let [exponential, doc_example, total_duration, limit_retries] = REQWEST_RETRY;
    clients
        .register(exponential, reqwest_retry::exponential)
        .register(doc_example, reqwest_retry::doc_example)
        .register(total_duration, reqwest_retry::total_duration)
        .register(limit_retries, reqwest_retry::limit_retries)
}

/// `clients` with the reqwest-retry clients named, as unavailable in this build.
#[cfg(not(feature = "reqwest"))]
fn with_reqwest_retry(clients: Clients) -> Clients {
    REQWEST_RETRY.iter().fold(clients, |clients, name| {
        clients.unavailable(
            name,
            "reqwest-retry runs with feature `reqwest` of retrylab-tests \
             (cargo test -p retrylab-tests --features reqwest --test scenarios)",
        )
    })
}
