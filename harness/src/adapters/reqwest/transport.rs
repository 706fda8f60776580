//! The reqwest adapter's one source, compiled once per supported reqwest version: the parent
//! module names the version's crates `reqwest_crate` and `middleware_crate`, and this file
//! reads them through `super` (`adapters/reqwest/mod.rs` for reqwest 0.13,
//! `adapters/reqwest/v0_12.rs` for reqwest 0.12). Everything here must compile against both
//! versions' APIs; what differs between them (the names of the `Env` shorthands, their docs)
//! stays in the parents.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use super::{middleware_crate as reqwest_middleware, reqwest_crate as reqwest};
use crate::Env;
use crate::env::{AttemptBody, HttpClient, HttpError};

/// The harness's transport as the last middleware of a `reqwest_middleware` stack: each
/// request it gets is one attempt on `env.http_client()`, tagged with its call.
///
/// It never calls `next`: the inner `reqwest::Client` of the stack never sends anything,
/// and a middleware added after this one never runs. `reqwest_client` on [`Env`] builds a
/// stack with it last; build one yourself with
/// `ClientBuilder::new(client).with(..).with(EnvTransport::new(&env)).build()`.
///
/// The response it returns is a `reqwest::Response` whose body streams from the attempt's:
/// the attempt ends when the body has been read to the end, or the response dropped (a
/// response without a body ends with its head). Its `url()` is the request's.
///
/// What it sends: the request's method, URL, version, headers and body. A body must be held
/// in memory (made from `Bytes`, a `String`, a `Vec<u8>`, `&'static str`...), as reqwest-retry
/// requires too: a streaming body (`reqwest::Body::wrap`, `wrap_stream`) fails the request
/// with [`TransportError::StreamingBody`]. A request's `timeout` (`RequestBuilder::timeout`)
/// bounds the attempt from its start to the last byte of its body, as reqwest's does; the
/// inner client's settings (a client-wide timeout, default headers) play no part, since it
/// never sends. Every failure reaches the stack as
/// `reqwest_middleware::Error::Middleware`, never `Error::Reqwest` (reqwest gives no way to
/// make a `reqwest::Error`): reqwest-retry classifies such an error as fatal, so the
/// transport faults of a scenario (resets, refused or black-holed connects, hangs, cut
/// bodies) end the call instead of being retried as over reqwest's own connector.
#[derive(Debug, Clone)]
pub struct EnvTransport {
    client: HttpClient,
}

impl EnvTransport {
    /// The transport of `env`'s call: its requests are attempts of that call.
    ///
    /// Make one per call (from the `Env` the call receives), as `reqwest_client` does: a
    /// transport kept for a later call would tag that call's attempts with this one.
    pub fn new(env: &Env) -> EnvTransport {
        EnvTransport {
            client: env.http_client(),
        }
    }

    /// Sends `request` as one attempt.
    async fn send(&self, request: reqwest::Request) -> Result<reqwest::Response, TransportError> {
        let url = request.url().clone();
        let url_text = url.to_string();
        let timeout = request.timeout().copied();
        let method = request.method().to_string();
        let (parts, body) = http::Request::try_from(request)
            .map_err(|source| TransportError::Convert {
                url: url_text.clone(),
                source: Box::new(source),
            })?
            .into_parts();
        let Some(body) = body.as_bytes() else {
            return Err(TransportError::StreamingBody {
                method,
                url: url_text,
            });
        };
        let request = http::Request::from_parts(parts, Full::new(Bytes::copy_from_slice(body)));
        // One deadline for the head and the body, as reqwest's own timeout: "from when the
        // request starts connecting until the response body has finished".
        let deadline = timeout.map(|timeout| (Instant::now() + timeout, timeout));
        let sending = self.client.request(request);
        let response = match deadline {
            // Dropping the attempt's future at the deadline records it as abandoned there.
            Some((at, timeout)) => {
                tokio::time::timeout_at(at, sending)
                    .await
                    .map_err(|_| TransportError::Timeout {
                        url: url_text.clone(),
                        timeout,
                    })?
            }
            None => sending.await,
        }
        .map_err(|source| TransportError::Request {
            url: url_text.clone(),
            source,
        })?;
        // `reqwest::Response::from` reads the URL from an extension that only
        // `ResponseBuilderExt::url` sets (without it, `url()` is
        // `http://no.url.provided.local`).
        let with_url = {
            use reqwest::ResponseBuilderExt as _;
            http::Response::builder().url(url).body(())
        };
        let (url_parts, ()) = with_url
            .map_err(|source| TransportError::Convert {
                url: url_text.clone(),
                source: Box::new(source),
            })?
            .into_parts();
        let (mut parts, body) = response.into_parts();
        parts.extensions.extend(url_parts.extensions);
        let body = match deadline {
            Some((at, timeout)) => reqwest::Body::wrap(DeadlineBody {
                inner: Some(body),
                deadline: Box::pin(tokio::time::sleep_until(at)),
                url: url_text,
                timeout,
            }),
            None => reqwest::Body::wrap(body),
        };
        Ok(reqwest::Response::from(http::Response::from_parts(
            parts, body,
        )))
    }
}

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for EnvTransport {
    async fn handle(
        &self,
        request: reqwest::Request,
        _extensions: &mut http::Extensions,
        _next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        self.send(request)
            .await
            .map_err(reqwest_middleware::Error::middleware)
    }
}

/// A `reqwest_middleware::ClientWithMiddleware` whose last middleware is `env`'s
/// [`EnvTransport`], after those `configure` adds.
///
/// The inner `reqwest::Client` is built with `no_proxy()`, so it reads no proxy variables
/// from the process environment; it never sends (the transport does).
pub(super) fn client(
    env: &Env,
    configure: impl FnOnce(reqwest_middleware::ClientBuilder) -> reqwest_middleware::ClientBuilder,
) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
    let inner = reqwest::Client::builder().no_proxy().build()?;
    let builder = configure(reqwest_middleware::ClientBuilder::new(inner));
    Ok(builder.with(EnvTransport::new(env)).build())
}

/// Why [`EnvTransport`] failed a request. It reaches the middleware stack as
/// `reqwest_middleware::Error::Middleware`, with this error as its cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The request's body is a stream, which the harness's client cannot send (it sends a
    /// body held in memory, so that it can be sent again).
    #[error(
        "retrylab's reqwest transport sends only bodies held in memory, and the {method} \
         request to {url} has a streaming body (reqwest::Body::wrap or wrap_stream): make the \
         body from Bytes, a String or a Vec<u8>"
    )]
    StreamingBody {
        /// The request's method.
        method: String,
        /// The request's URL.
        url: String,
    },
    /// The request or its response could not be converted between reqwest's and `http`'s
    /// types.
    #[error("the request to {url} could not be converted between reqwest's and http's types")]
    Convert {
        /// The request's URL.
        url: String,
        /// reqwest's or `http`'s error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The attempt failed on the harness's network (a reset, a refused connect, the run's
    /// end...).
    #[error("the request to {url} failed on the harness's network")]
    Request {
        /// The request's URL.
        url: String,
        /// The harness client's error.
        #[source]
        source: HttpError,
    },
    /// The request's `timeout` passed before its response's body had been read.
    #[error("the request to {url} timed out after {timeout:?} (its reqwest timeout)")]
    Timeout {
        /// The request's URL.
        url: String,
        /// The request's timeout.
        timeout: Duration,
    },
}

pin_project_lite::pin_project! {
    /// An attempt's body under its request's timeout: a read at or past the deadline fails,
    /// as reqwest's `TotalTimeoutBody` does, and drops the attempt (its end recorded then).
    struct DeadlineBody {
        inner: Option<AttemptBody>,
        deadline: Pin<Box<Sleep>>,
        url: String,
        timeout: Duration,
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.project();
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        // The deadline first, as reqwest polls it: a frame due at the deadline is too late.
        if this.deadline.as_mut().poll(cx).is_ready() {
            *this.inner = None;
            return Poll::Ready(Some(Err(Box::new(TransportError::Timeout {
                url: std::mem::take(this.url),
                timeout: *this.timeout,
            }))));
        }
        Pin::new(inner)
            .poll_frame(cx)
            .map(|frame| frame.map(|frame| frame.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}
