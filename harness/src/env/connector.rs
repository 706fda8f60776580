//! `env.connector()`: the simulated network as a `tower::Service<Uri>`, for clients that bring
//! their own HTTP stack (anything on tokio + hyper).
//!
//! It records which attempt a connect was started for, so the trace can name the connection of
//! an attempt that failed before any response did.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Uri;

use crate::backend::{ConnectFuture, Connector, Stream};
use crate::trace::record::Recorder;

/// The connector handed to clients: connects to the scenario's endpoints by name
/// (`http://api/...` reaches endpoint `api`), on the sim network or, on the real backend,
/// over TCP (where the address an endpoint listens on, `env.url(..)`, reaches it too).
///
/// ```
/// use http_body_util::{BodyExt, Full};
/// use hyper_util::client::legacy::Client;
/// use hyper_util::rt::{TokioExecutor, TokioTimer};
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
///
/// let scenario = Scenario::builder("own client")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(200)]))
///     .operation(OperationSpec::get("api", "/"))
///     .build()
///     .unwrap();
/// let report = scenario.run(|env| async move {
///     // A client the user configured, on the harness's network.
///     let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new())
///         .pool_timer(TokioTimer::new())
///         .build(env.connector());
///     let response = client.get(env.url("api").parse().unwrap()).await.map_err(|e| e.to_string())?;
///     Ok::<_, String>(response.status().as_u16())
/// });
/// assert_eq!(report.trace().attempts.len(), 1);
/// ```
#[derive(Clone)]
pub struct EnvConnector {
    inner: Connector,
    recorder: Recorder,
    /// The client instance it belongs to: a fleet's attempts rebuilt from what the endpoints
    /// saw are that client's.
    client_id: u32,
}

impl std::fmt::Debug for EnvConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvConnector").finish_non_exhaustive()
    }
}

impl EnvConnector {
    pub(crate) fn new(inner: Connector, recorder: Recorder, client_id: u32) -> EnvConnector {
        EnvConnector {
            inner,
            recorder,
            client_id,
        }
    }

    /// Whether the run this connector belongs to has ended: every connect fails from then
    /// on, saying so.
    pub(crate) fn run_ended(&self) -> bool {
        self.inner.run_ended()
    }
}

impl tower_service::Service<Uri> for EnvConnector {
    type Response = Stream;
    type Error = io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let dialing = self.inner.connect(uri);
        // On the sim network the id is assigned when the connect starts, so even a refused or
        // abandoned connect names it; on the real backend the endpoint names the connection
        // when it accepts it, and the trace joins the two by the attempt's tag.
        let conn = dialing.conn_id;
        let attempt = self.recorder.connect_started(conn);
        if let Some(conn) = conn {
            self.recorder.conn_of_client(conn, self.client_id);
        }
        Connecting {
            inner: dialing.future,
            recorder: self.recorder.clone(),
            attempt,
            conn,
            finished: false,
        }
    }
}

/// A connect under way through an [`EnvConnector`]: a `Stream` to the endpoint, or the
/// error the network answered with.
///
/// A named future rather than a boxed one, so it allocates nothing beyond what the backend's
/// connect does (nothing on the sim network): a run of a hundred thousand attempts on new
/// connections makes as many connects.
///
/// ```
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
/// use retrylab::trace::ConnEventKind;
/// use tower_service::Service as _;
///
/// let scenario = Scenario::builder("connect")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(200)]))
///     .operation(OperationSpec::get("api", "/"))
///     .build()
///     .unwrap();
/// let report = scenario.run(|env| async move {
///     let mut connector = env.connector();
///     // What hyper-util's client does with a connector: one connect per call.
///     let connecting: retrylab::Connecting = connector.call("http://api/".parse().unwrap());
///     let connected = connecting.await.is_ok();
///     Ok::<_, String>(connected)
/// });
/// // A connection and no request: the trace has no attempt, and the connect completed.
/// assert!(report.trace().attempts.is_empty());
/// let connections = report.trace().connections.iter();
/// assert_eq!(connections.filter(|e| e.kind == ConnEventKind::Connected).count(), 1);
/// ```
#[must_use = "a connect does nothing unless polled"]
pub struct Connecting {
    inner: ConnectFuture,
    recorder: Recorder,
    /// The attempt the connect was started for, if any.
    attempt: Option<u32>,
    /// The connection's id, where the backend assigns it up front.
    conn: Option<u64>,
    /// The connect completed and was recorded as finished: a poll after that is an error of
    /// the caller's, and records nothing again (it could mark a later connect of the same
    /// attempt finished).
    finished: bool,
}

impl std::fmt::Debug for Connecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connecting")
            .field("conn", &self.conn)
            .finish_non_exhaustive()
    }
}

impl Future for Connecting {
    type Output = io::Result<Stream>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `ConnectFuture` is `Unpin`, and so is this.
        let this = self.get_mut();
        if this.finished {
            return Poll::Ready(Err(io::Error::other("connect polled after it completed")));
        }
        let result = std::task::ready!(Pin::new(&mut this.inner).poll(cx));
        // Only a connect that completed, either way, is finished: one dropped before then
        // stays in progress for its attempt, as the trace shows an abandoned connect.
        this.recorder.connect_finished(this.attempt, this.conn);
        this.finished = true;
        Poll::Ready(result)
    }
}
