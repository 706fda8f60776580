//! reqwest 0.12 on the harness's network (feature `reqwest-0-12`: reqwest 0.12 with
//! reqwest-middleware 0.4, on which reqwest-retry 0.7 and 0.8 run).
//!
//! The same adapter as `adapters::reqwest` (feature `reqwest`, reqwest 0.13), compiled from
//! the same source against reqwest 0.12's crates: [`EnvTransport`] is the last middleware of
//! a `reqwest_middleware` 0.4 stack and sends each request as one attempt on
//! [`Env::http_client`]; [`Env::reqwest_0_12_client`] builds the stack. What it can and
//! cannot express is the same: status codes, `Retry-After`, latency and commits work;
//! transport faults reach the stack as `reqwest_middleware::Error::Middleware`, which
//! reqwest-retry treats as fatal.
//!
//! ```
//! use retrylab::prelude::*;
//!
//! let scenario = Scenario::builder("a 503")
//!     .endpoint("api", endpoint().script([status(503)]))
//!     .operation(get("api", "/items"))
//!     .build()
//!     .unwrap();
//! let report = scenario.run(|env| async move {
//!     let client = env.reqwest_0_12_client(|builder| builder).map_err(|e| e.to_string())?;
//!     let response = client.get("http://api/items").send().await.map_err(|e| e.to_string())?;
//!     Ok::<_, String>(response.status().as_u16())
//! });
//! assert_eq!(report.trace().timeline(), "t=0.000s  #1  GET /items  -> 503  conn 1 new\n");
//! ```

use ::reqwest_0_12 as reqwest_crate;
use ::reqwest_middleware_0_4 as middleware_crate;

// Loaded once per reqwest version on purpose: one source, compiled against each version's
// crates (see the file's header).
#[allow(clippy::duplicate_mod)]
#[path = "transport.rs"]
mod transport;

pub use transport::{EnvTransport, TransportError};

use crate::Env;

impl Env {
    /// A reqwest-middleware 0.4 client (reqwest 0.12) whose requests are attempts on this
    /// call's [`Env::http_client`]: `configure` adds the middlewares, and the harness's
    /// [`EnvTransport`] comes last. Make one per call. As `reqwest_client` (feature
    /// `reqwest`) for reqwest 0.13.
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
    ///     let client = env.reqwest_0_12_client(|builder| builder).map_err(|e| e.to_string())?;
    ///     let response = client.get("http://api/items").send().await.map_err(|e| e.to_string())?;
    ///     response.text().await.map_err(|e| e.to_string())
    /// });
    /// report.assert();
    /// ```
    pub fn reqwest_0_12_client(
        &self,
        configure: impl FnOnce(
            reqwest_middleware_0_4::ClientBuilder,
        ) -> reqwest_middleware_0_4::ClientBuilder,
    ) -> Result<reqwest_middleware_0_4::ClientWithMiddleware, reqwest_0_12::Error> {
        transport::client(self, configure)
    }
}
