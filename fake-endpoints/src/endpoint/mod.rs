//! The endpoint: routing, script consumption, dedupe and commits, and the detached step tasks.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};
use tokio::sync::{Notify, oneshot};

use crate::KeepAlive;
use crate::config::EndpointConfig;
use crate::http::detach::RequestHead;
use crate::http::headers::RequestHeaders;
use crate::http::wire::{CALL_HEADER_NAME, CLIENT_HEADER_NAME};
use crate::kinds::broker::{self, Broker};
use crate::kinds::dedupe::DedupeTable;
use crate::kinds::rate_limiter::{Admit, Limiter};
use crate::ledger::{ConnectRecord, DedupeOutcome, EffectRecord, Ledger, RequestId, RequestRecord};
#[cfg(feature = "wiremock")]
use crate::ledger::{ResponseOutcome, ResponseRecord};
use crate::script::choice::{Half, resolve};
use crate::script::connect::{ConnectAction, ConnectSchedule};
use crate::script::crash::{Lives, ScriptState};
use crate::script::draw::Draw;
use crate::script::gate::Gate;
use crate::script::route::{Matcher, Route, Scope};
use crate::script::step::{Branch, Commit, Fail, SentResponse, Step};
use crate::script::timeline::Timeline;
use crate::script::{ScopeKey, Script};

/// A scripted HTTP endpoint. Cheap to clone (all clones share state); `Send + Sync`.
///
/// The harness calls [`Endpoint::on_connect`] for each connection attempt and, for accepted
/// ones, [`Endpoint::serve`] with the connection's stream. Everything the endpoint sees and does
/// lands in its [`Ledger`].
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, Empty};
/// use hyper_util::rt::TokioIo;
/// use retrylab_endpoints::{ConnInfo, Endpoint, EndpointConfig, Step, VirtualClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let endpoint = Endpoint::new(
///     EndpointConfig::http("api").script([Step::status(503).times(2), Step::status(200).body("ok")]),
///     VirtualClock::new(),
/// );
///
/// // The harness would hand over its own in-memory TCP stream; a duplex pipe will do here.
/// let (client_io, server_io) = tokio::io::duplex(64 * 1024);
/// let server = endpoint.clone();
/// tokio::spawn(async move { server.serve(server_io, ConnInfo::without_reset(1)).await });
///
/// let (mut client, conn) = hyper::client::conn::http1::handshake(TokioIo::new(client_io)).await.unwrap();
/// tokio::spawn(conn);
/// let mut statuses = Vec::new();
/// for _ in 0..3 {
///     let request = http::Request::get("/orders").body(Empty::<Bytes>::new()).unwrap();
///     let response = client.send_request(request).await.unwrap();
///     statuses.push(response.status().as_u16());
///     response.into_body().collect().await.unwrap();
/// }
/// assert_eq!(statuses, [503, 503, 200]);
/// assert_eq!(endpoint.ledger().requests_received(), 3);
/// assert_eq!(endpoint.ledger().effect_count(), 1); // the 2xx committed
/// # }
/// ```
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    name: String,
    pub(crate) keep_alive: KeepAlive,
    key_header: Option<HeaderName>,
    dedupe_header: Option<HeaderName>,
    /// The clock the endpoint was made with: what it reads until its host comes back on a
    /// runtime of its own (a bounced turmoil host). A plain copy, so that the simulated path,
    /// which reads it several times per request, takes no lock for it.
    clock: crate::VirtualClock,
    /// Set once the endpoint follows another clock (kept in `followed`): read before the
    /// lock, which only an endpoint that has followed one takes.
    follows: AtomicBool,
    /// The clock of the runtime the endpoint's host came back on last (`clock` until then).
    followed: Mutex<crate::VirtualClock>,
    pub(crate) ledger: Ledger,
    not_found: Arc<SentResponse>,
    state: Mutex<State>,
    /// Step tasks spawned and not finished: requests whose answer, and maybe whose commit,
    /// is still to come.
    steps_in_progress: AtomicUsize,
    /// Woken when the last step in progress finishes.
    idle: Notify,
    /// Decides which requests reach the routes at all (none: every one does).
    gate: Option<Arc<dyn Gate>>,
    /// Crashes end a life; a step runs only while the life it was admitted in lasts.
    pub(crate) lives: Lives,
    /// Set on a message broker: only sends reach the routes, and commits store messages.
    broker: Option<Broker>,
}

impl Inner {
    /// The clock the endpoint times its records with.
    pub(crate) fn clock(&self) -> crate::VirtualClock {
        if !self.follows.load(Ordering::Acquire) {
            return self.clock;
        }
        // A clock is copied in and out whole: a poisoned lock still holds a whole one. The
        // flag is set after the clock is stored, so the lock holds the one followed.
        *self.followed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct State {
    routes: Vec<RouteState>,
    connect: ConnectSchedule,
    dedupe: Option<DedupeTable>,
    /// The token buckets in front of the routes, if the endpoint is a rate limiter.
    limiter: Option<Limiter>,
    /// Crashed and not restarted yet: no process to admit a request or take a connection.
    down: bool,
}

struct RouteState {
    matcher: Matcher,
    scope: Scope,
    steps: Steps,
    /// What the route's random steps draw.
    draw: Box<dyn Draw>,
    /// What the route's sampled latencies draw.
    latency_draw: Box<dyn Draw>,
    /// Each step's response rendered once, when it does not depend on the moment it is sent
    /// (no HTTP-date `Retry-After`): step tasks share it instead of rendering it again.
    rendered: Vec<Option<Arc<SentResponse>>>,
}

/// How a route chooses a request's step: by count or by time.
enum Steps {
    Script(Script),
    Timeline(Timeline),
}

impl RouteState {
    fn new(route: Route) -> Self {
        let steps = if route.timeline.is_empty() {
            Steps::Script(Script::new(route.script))
        } else {
            Steps::Timeline(Timeline::new(route.timeline))
        };
        let rendered = match &steps {
            Steps::Script(script) => script.steps().iter().map(|step| prerender(step)).collect(),
            Steps::Timeline(timeline) => timeline.steps().map(|step| prerender(step)).collect(),
        };
        RouteState {
            matcher: route.matcher,
            scope: route.scope,
            steps,
            draw: route
                .draws
                .map_or_else(|| Box::new(Half) as Box<dyn Draw>, |d| d.make()),
            latency_draw: route
                .latency_draws
                .map_or_else(|| Box::new(Half) as Box<dyn Draw>, |d| d.make()),
            rendered,
        }
    }

    /// The step answering a request of scope `key` arriving at `now`: its index (none for a
    /// timeline's gap), the step, and its response if rendered in advance.
    fn choose(&mut self, key: &ScopeKey, now: Duration) -> Planned {
        let (index, step) = match &mut self.steps {
            Steps::Script(script) => {
                let (index, step) = script.next_shared(key);
                (Some(index), step)
            }
            Steps::Timeline(timeline) => {
                let (index, step) = timeline.at(now);
                (index, Arc::clone(step))
            }
        };
        let rendered = index.and_then(|i| self.rendered.get(i).cloned().flatten());
        // A random step's branch is drawn here, in arrival order, so the choices of a run
        // follow its requests; its response is rendered when it is sent.
        let (mut step, branches) = resolve(step, self.draw.as_mut());
        // A sampled latency is drawn here too, once per request in arrival order, after the
        // branch (whose own latency may be the sampled one).
        if let Some(distribution) = &step.latency_distribution {
            let latency = distribution.sample(self.latency_draw.as_mut());
            step = Arc::new(Step {
                latency,
                latency_distribution: None,
                ..Step::clone(&step)
            });
        }
        (index, step, rendered, branches)
    }
}

/// A chosen step: its index (if any), the step, its response if rendered in advance, and
/// the branches a random step took to it.
type Planned = (
    Option<usize>,
    Arc<Step>,
    Option<Arc<SentResponse>>,
    Vec<Branch>,
);

/// A request read completely from a connection.
pub(crate) struct Arrival {
    pub(crate) conn_id: u64,
    pub(crate) seq: u32,
    pub(crate) inbound: Range<u64>,
    /// The head, already copied out of hyper's request (see [`Ledger::keep_head`]).
    pub(crate) head: RequestHead,
    pub(crate) body: Bytes,
}

/// What admission decided for a request, before anything is spawned.
enum Plan {
    /// Answer now (404, dedupe rejections and replays).
    Ready(Arc<SentResponse>),
    /// Run a step (its arrival commit, if it has one, is done).
    Step(StepPlan),
}

/// A step to run for one request.
struct StepPlan {
    step: Arc<Step>,
    /// The step's response, when it could be rendered in advance.
    rendered: Option<Arc<SentResponse>>,
    ctx: EffectCtx,
    /// The endpoint's life the request was admitted in.
    life: u64,
}

/// How a request will be answered.
pub(crate) enum Admission {
    /// Now (404, dedupe rejections and replays).
    Ready(Arc<SentResponse>),
    /// Now, by a step that had nothing to wait for ([`Endpoint::admit`] says which).
    Done(Outcome),
    /// By a detached step task.
    Pending(oneshot::Receiver<Outcome>),
}

/// What a step task hands to its connection.
pub(crate) enum Outcome {
    /// The response, and the time its body is spread over ([`Step::trickle`]).
    Respond(Arc<SentResponse>, Duration),
    /// The response, the failure that cuts it, and its trickle.
    Truncate(Arc<SentResponse>, Fail, Duration),
    Fail(Fail),
}

/// Where a step task's outcome goes.
enum Reply {
    /// To the connection serving the request, which sends it and records the response.
    Connection(oneshot::Sender<Outcome>),
    /// Nowhere: the server already holds the response and sends it when the latency ends (a
    /// wiremock responder), so the task records it, on connection `conn_id`.
    #[cfg(feature = "wiremock")]
    Record { conn_id: u64 },
}

/// What a commit needs to know about its request.
struct EffectCtx {
    request: RequestId,
    key: Option<HeaderValue>,
    call_tag: Option<HeaderValue>,
    dedupe_key: Option<HeaderValue>,
    /// On a broker: the send, stored when the step commits.
    send: Option<broker::Send>,
    /// On a broker: the id of the message the send stored on arrival, if it did.
    stored: Option<Arc<str>>,
}

impl Endpoint {
    /// An endpoint running `config`, timing its records with `clock`.
    pub fn new(config: EndpointConfig, clock: crate::VirtualClock) -> Self {
        Self::build(config, clock, None)
    }

    /// Like [`new`](Endpoint::new), with a [`Gate`] that decides which requests reach the
    /// routes: a refused request is neither recorded nor answered (see [`Gate`] for an
    /// example).
    pub fn with_gate(
        config: EndpointConfig,
        clock: crate::VirtualClock,
        gate: Arc<dyn Gate>,
    ) -> Self {
        Self::build(config, clock, Some(gate))
    }

    fn build(
        config: EndpointConfig,
        clock: crate::VirtualClock,
        gate: Option<Arc<dyn Gate>>,
    ) -> Self {
        let key_header = config.effective_key_header().cloned();
        let EndpointConfig {
            name,
            routes,
            connect,
            keep_alive,
            dedupe,
            key_header: _,
            rate_limit,
            broker,
        } = config;
        let dedupe_header = dedupe.as_ref().map(|d| d.header.clone());
        let routes = routes.into_iter().map(RouteState::new).collect();
        Self {
            inner: Arc::new(Inner {
                name,
                keep_alive,
                key_header,
                dedupe_header,
                clock,
                follows: AtomicBool::new(false),
                followed: Mutex::new(clock),
                ledger: Ledger::new(),
                not_found: Arc::new(SentResponse::status_only(StatusCode::NOT_FOUND)),
                state: Mutex::new(State {
                    routes,
                    connect: ConnectSchedule::new(connect),
                    dedupe: dedupe.map(DedupeTable::new),
                    limiter: rate_limit.map(Limiter::new),
                    down: false,
                }),
                steps_in_progress: AtomicUsize::new(0),
                idle: Notify::new(),
                gate,
                lives: Lives::default(),
                broker,
            }),
        }
    }

    /// The endpoint's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The number of requests still being processed: admitted, with their step's latency,
    /// commit or answer still to come.
    pub fn steps_in_progress(&self) -> usize {
        self.inner.steps_in_progress.load(Ordering::Acquire)
    }

    /// Resolves once no request is being processed: every admitted request's step has run
    /// (its commit, if any, is in the ledger). A request admitted later starts a new wait.
    pub async fn idle(&self) {
        loop {
            // Registered before the count is read, so a step that finishes in between still
            // wakes this wait.
            let notified = self.inner.idle.notified();
            if self.steps_in_progress() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// The endpoint's ledger (a shared handle).
    pub fn ledger(&self) -> Ledger {
        self.inner.ledger.clone()
    }

    /// The endpoint's clock.
    pub fn clock(&self) -> crate::VirtualClock {
        self.inner.clock()
    }

    /// From now on the endpoint times its records with `clock`: the clock of the runtime its
    /// host came back on, reading the same virtual time as the one it replaces. The ledger
    /// and the scripts are untouched.
    #[cfg(feature = "turmoil")]
    pub(crate) fn follow_clock(&self, clock: crate::VirtualClock) {
        *self
            .inner
            .followed
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = clock;
        self.inner.follows.store(true, Ordering::Release);
    }

    /// A connection attempt `conn_id` arrived: consume the connect schedule, record the
    /// decision, and return it (the harness carries it out).
    pub fn on_connect(&self, conn_id: u64) -> ConnectAction {
        let mut state = self.lock();
        let action = state.connect.next();
        self.inner.ledger.push_connect(ConnectRecord {
            conn_id,
            at_ms: self.inner.clock().now_ms(),
            action,
        });
        action
    }

    /// [`on_connect`](Endpoint::on_connect), unless the endpoint is crashed: then `None`, and
    /// no step is consumed and nothing recorded (no process is there to decide). For a host
    /// whose listener outlives the endpoint's crash by a moment (a turmoil host, crashed the
    /// tick after its endpoint).
    #[cfg(feature = "turmoil")]
    pub(crate) fn on_connect_if_up(&self, conn_id: u64) -> Option<ConnectAction> {
        let mut state = self.lock();
        if state.down {
            return None;
        }
        let action = state.connect.next();
        self.inner.ledger.push_connect(ConnectRecord {
            conn_id,
            at_ms: self.inner.clock().now_ms(),
            action,
        });
        Some(action)
    }

    /// The endpoint's life requests are admitted in now: it changes at each
    /// [`crash`](Endpoint::crash).
    #[cfg(feature = "turmoil")]
    pub(crate) fn life(&self) -> u64 {
        self.inner.lives.current()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Route, dedupe, consume a step and record the request; spawn the step's task, or do the
    /// step now when it has no latency and the request no dedupe key. `None` when the gate
    /// refuses the request, or the endpoint is crashed: then nothing is recorded and nothing
    /// answers.
    pub(crate) fn admit(&self, arrival: Arrival) -> Option<(RequestId, Admission)> {
        let (id, plan) = self.plan(arrival)?;
        let admission = match plan {
            Plan::Ready(response) => Admission::Ready(response),
            // A step without latency whose request carries no dedupe key would do all its
            // work in its task's first poll, at this same instant: it is done here instead,
            // which spares a task, a channel and a second poll of the connection per request.
            // A keyed request still goes through a task, so that dedupe sees it in flight
            // until the tasks admitted at the same instant before it have run.
            Plan::Step(plan) if plan.step.latency.is_zero() && plan.ctx.dedupe_key.is_none() => {
                match finish_step(self, &plan.step, plan.rendered, &plan.ctx, plan.life) {
                    Some(outcome) => Admission::Done(outcome),
                    // Its life ended since `plan` (a crash from another thread): no answer,
                    // as from a task that drops its reply.
                    None => Admission::Pending(oneshot::channel().1),
                }
            }
            Plan::Step(plan) => {
                let (tx, rx) = oneshot::channel();
                self.spawn_step(plan, Reply::Connection(tx));
                Admission::Pending(rx)
            }
        };
        Some((id, admission))
    }

    /// Like [`Endpoint::admit`], for a server that must be handed the whole response and the
    /// delay before sending it as soon as the request arrives (a wiremock responder). The
    /// step's response is rendered for the instant its latency ends; the step's task still
    /// runs detached (latency, commit, dedupe) and records the response when it ends. Only
    /// for steps without a failure: such a server can send nothing else than a response.
    #[cfg(feature = "wiremock")]
    pub(crate) fn admit_at_once(&self, arrival: Arrival) -> Option<(Arc<SentResponse>, Duration)> {
        let conn_id = arrival.conn_id;
        let (id, plan) = self.plan(arrival)?;
        match plan {
            Plan::Ready(response) => {
                let outcome = Outcome::Respond(Arc::clone(&response), Duration::ZERO);
                record_outcome(&self.inner, id, conn_id, &outcome);
                Some((response, Duration::ZERO))
            }
            Plan::Step(mut plan) => {
                let latency = plan.step.latency;
                let response = match plan.rendered.take() {
                    Some(response) => response,
                    None => {
                        let now = self.inner.clock().now_system();
                        let sent_at = now.checked_add(latency).unwrap_or(now);
                        Arc::new(plan.step.respond.render(sent_at))
                    }
                };
                // The task then hands dedupe exactly the response the server sends.
                plan.rendered = Some(Arc::clone(&response));
                self.spawn_step(plan, Reply::Record { conn_id });
                Some((response, latency))
            }
        }
    }

    /// Everything [`Endpoint::admit`] does up to the step's task: gate, routing, dedupe,
    /// script consumption, the request record and an arrival commit. Nothing of it while the
    /// endpoint is crashed: `None`, as for a request the gate refuses.
    fn plan(&self, arrival: Arrival) -> Option<(RequestId, Plan)> {
        let inner = &*self.inner;
        let now_ms = inner.clock().now_ms();
        let Arrival {
            conn_id,
            seq,
            inbound,
            head,
            body,
        } = arrival;
        if inner
            .gate
            .as_ref()
            .is_some_and(|gate| !gate.admit_head(&head))
        {
            return None;
        }
        let body = inner.ledger.keep_body(&body);
        let key = header(&head.headers, inner.key_header.as_ref());
        let call_tag = head.headers.get(&CALL_HEADER_NAME);

        let mut state = self.lock();
        // A request reaching a crashed endpoint (its host's connections are reset an instant
        // later) finds no process: it consumes nothing and is not recorded.
        if state.down {
            return None;
        }
        let id = inner.ledger.next_request_id();
        let route = state.routes.iter().position(|r| {
            r.matcher
                .matches_received(&head.method, head.uri.path(), &head.headers)
        });

        // The bucket is in front of everything else: a request that finds it empty is
        // answered by it, and neither dedupe nor a script sees it.
        let limited = match &mut state.limiter {
            Some(limiter) => {
                match limiter.admit(&head.headers, now_ms, inner.clock().now_system()) {
                    Admit::Token => None,
                    Admit::Empty(response) => Some(Arc::new(response)),
                }
            }
            None => None,
        };
        // A broker answers what is not a send itself, before any step; a wrong path or topic
        // matches no route, a bad body matches the route and reaches no step.
        let read = inner
            .broker
            .as_ref()
            .map(|broker| broker.read(&head.method, head.uri.path(), &body, key.as_ref()));
        let (route, send, refused) = match read {
            None => (route, None, None),
            Some(Ok(send)) => (route, Some(send), None),
            Some(Err(refusal)) => {
                let route = route.filter(|_| refusal == broker::Refusal::BadRequest);
                (route, None, Some(Arc::new(refusal.response())))
            }
        };
        let mut dedupe = DedupeOutcome::NotApplied;
        let mut dedupe_key = None;
        let mut plan: Result<Planned, Arc<SentResponse>> = match (route, limited, refused) {
            (_, Some(response), _) => {
                inner.ledger.push_rate_limited(id);
                Err(response)
            }
            (_, None, Some(response)) => {
                inner.ledger.push_refused(id);
                Err(response)
            }
            (None, None, None) => Err(Arc::clone(&inner.not_found)),
            (Some(route), None, None) => {
                // Dedupe's own answer (a rejection or a replay), if it answers.
                let answer = match (
                    &mut state.dedupe,
                    header(&head.headers, inner.dedupe_header.as_ref()),
                ) {
                    (Some(table), Some(value)) => {
                        let decision = table.begin(&value, &body, id, now_ms);
                        dedupe = decision.outcome();
                        dedupe_key = Some(value);
                        table.answer(decision, inner.clock().now_system())
                    }
                    _ => None,
                };
                match answer {
                    Some(response) => Err(response),
                    None => {
                        let route_state = &mut state.routes[route];
                        let scope_key = scope_key(route_state.scope, conn_id, &head.headers, &key);
                        Ok(route_state.choose(&scope_key, Duration::from_millis(now_ms)))
                    }
                }
            }
        };

        let (step_index, branches) = match &mut plan {
            Ok((index, _, _, branches)) => (*index, std::mem::take(branches)),
            Err(_) => (None, Vec::new()),
        };
        inner.ledger.push_request(RequestRecord {
            id,
            conn_id,
            seq,
            at_ms: now_ms,
            method: head.method,
            uri: head.uri,
            headers: head.headers,
            body,
            inbound,
            route,
            step: step_index,
            branches,
            dedupe,
        });

        let (_, step, rendered, _) = match plan {
            Ok(step) => step,
            Err(response) => return Some((id, Plan::Ready(response))),
        };
        let mut ctx = EffectCtx {
            request: id,
            key,
            call_tag,
            dedupe_key,
            send,
            stored: None,
        };
        if step.effective_commit() == Commit::Arrival {
            ctx.stored = self.commit(&mut state, &ctx, now_ms);
        }
        // Read under the lock a crash takes, so the step belongs to the life that admitted it.
        let life = inner.lives.current();
        drop(state);
        Some((
            id,
            Plan::Step(StepPlan {
                step,
                rendered,
                ctx,
                life,
            }),
        ))
    }

    /// Spawns the task that runs a planned step.
    fn spawn_step(&self, plan: StepPlan, reply: Reply) {
        let StepPlan {
            step,
            rendered,
            ctx,
            life,
        } = plan;
        self.inner.steps_in_progress.fetch_add(1, Ordering::AcqRel);
        // Made with the count, so the step is counted done however its task ends: run to its
        // end, or dropped unfinished, before its first poll or after, with the runtime it was
        // spawned on (a crashed turmoil host's).
        let done = StepDone(self.clone());
        // Detached from the connection: a client that gives up drops the service future, not
        // this task, so a commit scheduled later still happens (duplicate-on-timeout).
        // Boxed, so the task moves a pointer around rather than the whole job (the spawn path
        // copies a future several times).
        tokio::spawn(run_step(Box::new(StepJob {
            endpoint: self.clone(),
            step,
            rendered,
            ctx,
            reply,
            life,
            done,
        })));
    }

    /// The endpoint's process crashes. Requests being processed end here: none of them
    /// commits or answers from now on (what they committed on arrival stays in the ledger),
    /// and the dedupe table forgets which keys were in flight, as
    /// [`DedupeTable::crash`](crate::DedupeTable::crash) says. The ledger loses nothing.
    ///
    /// Until [`restart`](Endpoint::restart) the endpoint admits no request: one that reaches
    /// it is neither recorded nor answered, and consumes no step.
    ///
    /// This is the endpoint's half of a crash. Its connections are the network's: the
    /// harness resets them and refuses connects until [`restart`](Endpoint::restart).
    ///
    /// ```
    /// use retrylab_endpoints::{ConnectAction, ConnectStep, Endpoint, EndpointConfig, ScriptState, VirtualClock};
    ///
    /// let endpoint = Endpoint::new(
    ///     EndpointConfig::http("api").connect([ConnectStep::refuse(), ConnectStep::accept()]),
    ///     VirtualClock::new(),
    /// );
    /// assert_eq!(endpoint.on_connect(1), ConnectAction::Refuse);
    /// endpoint.crash();
    /// // Restarted with its schedules from the start: the first connect is refused again.
    /// endpoint.restart(ScriptState::Reset);
    /// assert_eq!(endpoint.on_connect(2), ConnectAction::Refuse);
    /// assert_eq!(endpoint.on_connect(3), ConnectAction::Accept);
    /// ```
    pub fn crash(&self) {
        let mut state = self.lock();
        self.inner.lives.end();
        state.down = true;
        if let Some(table) = &mut state.dedupe {
            table.crash();
        }
    }

    /// The endpoint comes back after a [`crash`](Endpoint::crash), with its scripts and
    /// connect schedule where they were ([`ScriptState::Keep`]) or from their first step
    /// ([`ScriptState::Reset`]). Timelines are unaffected either way: their windows are
    /// instants of the run, not of the process.
    pub fn restart(&self, scripts: ScriptState) {
        let mut state = self.lock();
        state.down = false;
        if scripts == ScriptState::Reset {
            for route in &mut state.routes {
                if let Steps::Script(script) = &mut route.steps {
                    script.restart();
                }
            }
            state.connect.restart();
        }
    }

    /// Record the effect of `ctx`'s request, unless dedupe says its key already committed;
    /// on a broker, store its message too and return the message's id.
    fn commit(&self, state: &mut State, ctx: &EffectCtx, now_ms: u64) -> Option<Arc<str>> {
        let new_effect = match (&mut state.dedupe, &ctx.dedupe_key) {
            (Some(table), Some(key)) => table.commit(key, ctx.request, now_ms),
            _ => true,
        };
        if new_effect {
            self.inner.ledger.push_effect(EffectRecord {
                request: ctx.request,
                at_ms: now_ms,
                key: ctx.key.clone(),
                call_tag: ctx.call_tag.clone(),
            });
            if let Some(send) = &ctx.send {
                let name = &self.inner.name;
                let id = self.inner.ledger.push_message(
                    ctx.request,
                    now_ms,
                    &send.topic,
                    send.key.as_ref(),
                    |n| broker::message_id(name, n),
                );
                return Some(id);
            }
        }
        None
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

/// What a step task needs.
struct StepJob {
    endpoint: Endpoint,
    step: Arc<Step>,
    /// The step's response, when it could be rendered in advance.
    rendered: Option<Arc<SentResponse>>,
    ctx: EffectCtx,
    reply: Reply,
    /// The endpoint's life the request was admitted in.
    life: u64,
    /// Counts the step done when the job is dropped, wherever that happens.
    done: StepDone,
}

/// One request's step: latency, commit, then the outcome goes to the connection (if it is
/// still there).
async fn run_step(job: Box<StepJob>) {
    // Only the box and (rarely) the boxed timer live across the await: the task stays small.
    if !job.step.latency.is_zero() {
        let inner = &*job.endpoint.inner;
        // Biased: polled in a fixed order, so that a crash already made when the latency
        // ends wins, never a random branch choice.
        tokio::select! {
            biased;
            _ = inner.lives.ended(job.life) => {}
            _ = Box::pin(tokio::time::sleep(job.step.latency)) => {}
        }
    }
    let StepJob {
        endpoint,
        step,
        rendered,
        ctx,
        reply,
        life,
        done: _done,
    } = *job;
    match finish_step(&endpoint, &step, rendered, &ctx, life) {
        // An error means the connection went away first; the step has done its work regardless.
        Some(outcome) => match reply {
            Reply::Connection(tx) => {
                let _ = tx.send(outcome);
            }
            #[cfg(feature = "wiremock")]
            Reply::Record { conn_id } => {
                record_outcome(&endpoint.inner, ctx.request, conn_id, &outcome);
            }
        },
        // The process that admitted the request is gone: no answer.
        None => drop(reply),
    }
}

/// Marks a step task done when dropped: see [`step_done`].
struct StepDone(Endpoint);

impl Drop for StepDone {
    fn drop(&mut self) {
        step_done(&self.0.inner);
    }
}

/// A step's work once its latency is over: its outcome, its commit before the response and
/// its dedupe entry. `None` if the endpoint's life `life` has ended: then nothing commits or
/// answers, and the crash already released the request's dedupe key.
fn finish_step(
    endpoint: &Endpoint,
    step: &Step,
    rendered: Option<Arc<SentResponse>>,
    ctx: &EffectCtx,
    life: u64,
) -> Option<Outcome> {
    let inner = &*endpoint.inner;
    let render =
        || rendered.unwrap_or_else(|| Arc::new(step.respond.render(inner.clock().now_system())));
    let outcome = match step.fail {
        None => Outcome::Respond(render(), step.trickle),
        Some(fail) if fail.after_bytes().is_some() => {
            Outcome::Truncate(render(), fail, step.trickle)
        }
        Some(fail) => Outcome::Fail(fail),
    };
    let mut state = endpoint.lock();
    if inner.lives.current() != life {
        return None;
    }
    let stored = match step.effective_commit() {
        Commit::BeforeResponse => endpoint.commit(&mut state, ctx, inner.clock().now_ms()),
        Commit::Arrival | Commit::Never => ctx.stored.clone(),
    };
    // A broker acknowledges a stored send with the id it gave the message, known only now.
    let outcome = match outcome {
        Outcome::Respond(response, trickle) if inner.broker.is_some() => {
            match broker::acknowledgement(&response, stored.as_deref()) {
                Some(ack) => Outcome::Respond(Arc::new(ack), trickle),
                None => Outcome::Respond(response, trickle),
            }
        }
        outcome => outcome,
    };
    // A hanging request is still being processed as far as dedupe knows: its key stays in
    // flight.
    if let (Some(table), Some(key)) = (&mut state.dedupe, &ctx.dedupe_key) {
        match &outcome {
            Outcome::Respond(response, _) | Outcome::Truncate(response, _, _) => {
                table.finish(key, ctx.request, Some(Arc::clone(response)));
            }
            Outcome::Fail(Fail::Hang) => {}
            Outcome::Fail(_) => table.finish(key, ctx.request, None),
        }
    }
    Some(outcome)
}

/// A step task ends: the last one wakes [`Endpoint::idle`].
fn step_done(inner: &Inner) {
    if inner.steps_in_progress.fetch_sub(1, Ordering::AcqRel) == 1 {
        inner.idle.notify_waiters();
    }
}

/// Records how a request ended, for a server that reports neither its connection's bytes nor
/// their flush (a wiremock responder): byte ranges stay empty and `end_ms` unknown.
#[cfg(feature = "wiremock")]
fn record_outcome(inner: &Inner, request: RequestId, conn_id: u64, outcome: &Outcome) {
    let (outcome, retry_after) = match outcome {
        Outcome::Respond(response, _) => (
            ResponseOutcome::Sent {
                status: response.status,
            },
            response.retry_after_lines().cloned().collect(),
        ),
        Outcome::Truncate(response, fail, _) => (
            ResponseOutcome::Truncated {
                status: response.status,
                fail: *fail,
            },
            response.retry_after_lines().cloned().collect(),
        ),
        Outcome::Fail(fail) => (ResponseOutcome::Failed(*fail), Vec::new()),
    };
    inner.ledger.push_response(ResponseRecord {
        request,
        conn_id,
        at_ms: inner.clock().now_ms(),
        end_ms: None,
        outcome,
        retry_after,
        outbound: 0..0,
    });
}

/// A step's response rendered in advance, unless it depends on when it is sent (an HTTP-date
/// `Retry-After` is the virtual wall clock at that moment plus an offset).
fn prerender(step: &Step) -> Option<Arc<SentResponse>> {
    if step.chance.is_some() {
        // Which response it sends is drawn per request.
        return None;
    }
    step.respond.prerendered()
}

fn header(headers: &RequestHeaders, name: Option<&HeaderName>) -> Option<HeaderValue> {
    name.and_then(|name| headers.get(name))
}

fn scope_key(
    scope: Scope,
    conn_id: u64,
    headers: &RequestHeaders,
    key: &Option<HeaderValue>,
) -> ScopeKey {
    match scope {
        Scope::Endpoint => ScopeKey::Endpoint,
        Scope::Connection => ScopeKey::Connection(conn_id),
        Scope::Client => ScopeKey::Client(headers.get(&CLIENT_HEADER_NAME)),
        Scope::Key => ScopeKey::Key(key.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConnectStep, ScriptState, VirtualClock};

    #[tokio::test(start_paused = true)]
    async fn connect_schedule_is_consumed_and_recorded() {
        let endpoint = Endpoint::new(
            EndpointConfig::http("api").connect([
                ConnectStep::refuse().times(2),
                ConnectStep::blackhole(),
                ConnectStep::accept(),
            ]),
            VirtualClock::new(),
        );
        let actions: Vec<_> = (1..=5).map(|id| endpoint.on_connect(id)).collect();
        use ConnectAction::*;
        assert_eq!(actions, [Refuse, Refuse, Blackhole, Accept, Accept]);
        let connects = endpoint.ledger().snapshot().connects;
        assert_eq!(connects.len(), 5);
        assert_eq!(
            connects[2],
            ConnectRecord {
                conn_id: 3,
                at_ms: 0,
                action: Blackhole
            }
        );
    }

    /// A GET of `/` on connection `conn_id`, as a connection hands it over.
    fn arrival(conn_id: u64) -> Arrival {
        let (parts, ()) = http::Request::get("/").body(()).unwrap().into_parts();
        Arrival {
            conn_id,
            seq: 0,
            inbound: 0..0,
            head: crate::http::detach::Recent::default().head(parts),
            body: Bytes::new(),
        }
    }

    #[test]
    fn a_step_whose_task_never_ran_is_counted_done_when_its_runtime_goes() {
        // A crashed turmoil host's runtime is dropped with the tasks spawned on it, some
        // perhaps never polled: their steps must not stay in progress.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let endpoint = {
            let _in = runtime.enter();
            let endpoint = Endpoint::new(
                EndpointConfig::http("api")
                    .script([Step::status(200).latency(Duration::from_secs(1))]),
                VirtualClock::new(),
            );
            assert!(endpoint.admit(arrival(1)).is_some());
            endpoint
        };
        assert_eq!(endpoint.steps_in_progress(), 1);
        drop(runtime);
        assert_eq!(endpoint.steps_in_progress(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_crashed_endpoint_admits_nothing_until_it_restarts() {
        let endpoint = Endpoint::new(
            EndpointConfig::http("api").script([Step::status(503), Step::status(200)]),
            VirtualClock::new(),
        );
        endpoint.crash();
        assert!(endpoint.admit(arrival(1)).is_none());
        endpoint.restart(ScriptState::Keep);
        // The script's first step is still there for the first request admitted.
        let Some((_, Admission::Done(Outcome::Respond(response, _)))) = endpoint.admit(arrival(2))
        else {
            panic!("not answered at once with a response");
        };
        assert_eq!(response.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(endpoint.ledger().snapshot().requests.len(), 1);
    }

    #[test]
    fn endpoint_is_send_sync_clone() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<Endpoint>();
        check::<Ledger>();
    }
}
