//! reqwest on the harness's network (feature `reqwest`: reqwest 0.13 with
//! reqwest-middleware 0.5; feature `reqwest-0-12` gives the same for reqwest 0.12 with
//! reqwest-middleware 0.4, as `adapters::reqwest_0_12`).
//!
//! reqwest takes no connector of its own, so the harness meets it where
//! [reqwest-middleware](https://docs.rs/reqwest-middleware/0.5.2) lets anything in: a
//! middleware. [`EnvTransport`] is the last middleware of the stack and sends each request as
//! one attempt on [`Env::http_client`], tagged with its call; the middlewares before it (a
//! retry middleware such as reqwest-retry's `RetryTransientMiddleware`) run as they would
//! in production, on virtual time. [`Env::reqwest_client`] builds such a stack:
//!
//! ```
//! use std::time::Duration;
//! use reqwest_middleware::{Middleware, Next};
//! use retrylab::prelude::*;
//!
//! /// Retries once, 100ms after a 5xx: the smallest retry middleware there is.
//! struct RetryOnce;
//!
//! #[async_trait::async_trait]
//! impl Middleware for RetryOnce {
//!     async fn handle(
//!         &self,
//!         request: reqwest::Request,
//!         extensions: &mut http::Extensions,
//!         next: Next<'_>,
//!     ) -> reqwest_middleware::Result<reqwest::Response> {
//!         let again = request.try_clone();
//!         let response = next.clone().run(request, extensions).await?;
//!         match again {
//!             Some(again) if response.status().is_server_error() => {
//!                 drop(response); // ends the attempt
//!                 tokio::time::sleep(Duration::from_millis(100)).await; // virtual time
//!                 next.run(again, extensions).await
//!             }
//!             _ => Ok(response),
//!         }
//!     }
//! }
//!
//! let scenario = Scenario::builder("one 503, then 200")
//!     .endpoint("api", endpoint().script([status(503), status(200).body("done")]))
//!     .latency(ms(1))
//!     .operation(post("api", "/orders"))
//!     .build()
//!     .unwrap();
//! let report = scenario.run(|env| async move {
//!     let client = env.reqwest_client(|builder| builder.with(RetryOnce)).map_err(|e| e.to_string())?;
//!     let response = client
//!         .post(env.operation().url.as_str())
//!         .body("{}")
//!         .send()
//!         .await
//!         .map_err(|e| e.to_string())?;
//!     assert_eq!(response.url().as_str(), "http://api/orders");
//!     let status = response.status().as_u16();
//!     let body = response.text().await.map_err(|e| e.to_string())?; // the attempt ends here
//!     Ok::<_, String>((status, body))
//! });
//! assert_eq!(report.trace().timeline(), "\
//! t=0.000s  #1  POST /orders  -> 503  conn 1 new
//! t=0.104s  #2  POST /orders  -> 200  conn 1 reused  gap 0.100s
//! ");
//! ```
//!
//! With reqwest-retry (not a dependency of retrylab; `tests/src/clients/reqwest_retry.rs` runs
//! it against the scenario library):
//!
//! ```ignore
//! use reqwest_retry::{Jitter, RetryTransientMiddleware, policies::ExponentialBackoff};
//!
//! let policy = ExponentialBackoff::builder()
//!     .retry_bounds(Duration::from_millis(100), Duration::from_secs(1))
//!     .jitter(Jitter::None)
//!     .build_with_max_retries(5);
//! let client = env
//!     .reqwest_client(|builder| builder.with(RetryTransientMiddleware::new_with_policy(policy)))
//!     .map_err(|e| e.to_string())?;
//! ```
//!
//! # What works, and what cannot
//!
//! Status codes, `Retry-After` headers, latency, slow bodies and commits reach the stack as
//! they would over a socket: the retry middleware sees each response and decides. Transport
//! faults cannot be expressed through a middleware: a reset, a refused or black-holed
//! connect, a hang past a request's `timeout`, or a cut body reaches the stack as
//! `reqwest_middleware::Error::Middleware` (reqwest offers no way to make a
//! `reqwest::Error`), which reqwest-retry's `DefaultRetryableStrategy` classifies as fatal:
//! the call ends where reqwest's own connector would have given a retryable
//! `reqwest::Error`. For those, a plain `reqwest::Client` has to meet the endpoints over real
//! sockets, which is what the real backend (planned) is for. See [`EnvTransport`] for what
//! the transport sends.
//!
//! # The reqwest-middleware versions
//!
//! | feature | module | reqwest | reqwest-middleware | reqwest-retry on it |
//! |---|---|---|---|---|
//! | `reqwest` | `adapters::reqwest` | 0.13 (0.13.5) | 0.5 (0.5.2) | 0.9 (0.9.1) |
//! | `reqwest-0-12` | `adapters::reqwest_0_12` | 0.12 (0.12.28) | 0.4 (0.4.2) | 0.7 and 0.8 (0.8.0) |
//!
//! Both are compiled from one source; reqwest is taken without its default features (no
//! TLS: the harness's network is plain HTTP, `https` URLs included).

use ::reqwest as reqwest_crate;
use ::reqwest_middleware as middleware_crate;

// Loaded once per reqwest version on purpose: one source, compiled against each version's
// crates (see the file's header).
#[allow(clippy::duplicate_mod)]
mod transport;

pub use transport::{EnvTransport, TransportError};

use crate::Env;

impl Env {
    /// A reqwest-middleware 0.5 client (reqwest 0.13) whose requests are attempts on this
    /// call's [`Env::http_client`]: `configure` adds the middlewares (a retry middleware), and
    /// the harness's [`EnvTransport`] comes last. Make one per call.
    ///
    /// The inner `reqwest::Client` is built with `no_proxy()` (no proxy variables read from
    /// the process environment) and never sends. It fails only where reqwest cannot build a
    /// client at all (a TLS backend another crate enabled that cannot start).
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// let scenario = Scenario::builder("one GET")
    ///     .endpoint("api", endpoint().script([status(200).body("ok")]))
    ///     .operation(get("api", "/items"))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run(|env| async move {
    ///     let client = env.reqwest_client(|builder| builder).map_err(|e| e.to_string())?;
    ///     let response = client.get("http://api/items").send().await.map_err(|e| e.to_string())?;
    ///     response.text().await.map_err(|e| e.to_string())
    /// });
    /// report.assert();
    /// assert_eq!(report.trace().attempts.len(), 1);
    /// ```
    pub fn reqwest_client(
        &self,
        configure: impl FnOnce(reqwest_middleware::ClientBuilder) -> reqwest_middleware::ClientBuilder,
    ) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
        transport::client(self, configure)
    }
}
