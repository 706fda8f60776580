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
//! | `reqwest_retry_exponential` | reqwest-retry | `ExponentialBackoff`, [100ms, 1s], no jitter, 5 retries |
//! | `reqwest_retry_doc_example` | reqwest-retry | `ExponentialBackoff::builder().build_with_max_retries(3)`, jittered |
//! | `reqwest_retry_total_duration` | reqwest-retry | `build_with_total_retry_duration_and_max_retries(5s, 20)` |
//! | `reqwest_retry_limit_retries` | reqwest-retry | `build_with_total_retry_duration_and_limit_retries(24h)` |
//!
//! The reqwest-retry clients need feature `reqwest` (reqwest 0.13); without it they are
//! registered as unavailable, and the suite lists their scenarios as ignored.
//! [`reqwest_retry_0_8`] (feature `reqwest-0-12`) holds the same clients on reqwest 0.12,
//! which `tests/reqwest.rs` runs against the same files.

use retrylab::suite::Clients;

pub mod backoff;
pub mod backon;
#[cfg(feature = "reqwest")]
pub mod reqwest_retry;
#[cfg(feature = "reqwest-0-12")]
pub mod reqwest_retry_0_8;
pub mod tokio_retry2;
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
    with_reqwest_retry(Clients::new())
        .register("tower_retry_backoff", tower::retry_backoff)
        .register("tower_retry_budget", tower::retry_budget)
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
             (cargo test -p retrylab-tests --features reqwest)",
        )
    })
}
