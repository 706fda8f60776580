//! Admission: what the endpoint does with a request as it arrives, before any latency. The
//! gate, then the bucket and the broker in front of the routes, routing, dedupe, script
//! consumption, the request record and an arrival commit; then the step runs at once or in
//! a task of its own.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use tokio::sync::oneshot;

use crate::http::detach::RequestHead;
use crate::http::headers::RequestHeaders;
use crate::http::response::SentResponse;
use crate::http::wire::{CALL_HEADER_NAME, CLIENT_HEADER_NAME};
use crate::kinds::broker;
use crate::kinds::rate_limiter::Admit;
use crate::ledger::{DedupeOutcome, RequestId, RequestRecord};
use crate::script::ScopeKey;
use crate::script::route::Scope;
use crate::script::step::Commit;

use super::commit::EffectCtx;
use super::route_state::Planned;
#[cfg(feature = "wiremock")]
use super::task::record_outcome;
use super::task::{Answer, Reply, StepPlan, finish_step};
use super::{Endpoint, State};

/// A request read completely from a connection.
pub(crate) struct Arrival {
    pub(crate) conn_id: u64,
    pub(crate) seq: u32,
    /// The HTTP/2 stream it came on (`None` on HTTP/1.1).
    pub(crate) stream_id: Option<u32>,
    pub(crate) inbound: Range<u64>,
    /// The head, already copied out of hyper's request (see
    /// [`Ledger::keep_head`](crate::Ledger::keep_head)).
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

/// How a request will be answered.
pub(crate) enum Admission {
    /// Now (404, dedupe rejections and replays).
    Ready(Arc<SentResponse>),
    /// Now, by a step that had nothing to wait for ([`Endpoint::admit`] says which).
    Done(Answer),
    /// By a detached step task.
    Pending(oneshot::Receiver<Answer>),
}

/// A request going through admission, as each of its stages reads it.
struct Admitting<'a> {
    id: RequestId,
    conn_id: u64,
    head: &'a RequestHead,
    body: &'a Bytes,
    /// The idempotency key (for `Scope::Key` counters, effect records and a broker's send).
    key: Option<&'a HeaderValue>,
    now_ms: u64,
}

/// What the endpoint decided for a request, before its record is written.
struct Decision {
    /// The route that matched, if any (a broker's refusal leaves one only for a bad body).
    route: Option<usize>,
    /// On a broker: the send the request is.
    send: Option<broker::Send>,
    routed: Routed,
}

/// What the route made of a request, or the response that answered before any route.
struct Routed {
    dedupe: DedupeOutcome,
    /// The dedupe key the request was checked with, if dedupe saw it.
    dedupe_key: Option<HeaderValue>,
    /// The step chosen for it, or the response that answers it instead.
    answer: Result<Planned, Arc<SentResponse>>,
}

impl Routed {
    /// A response that no dedupe and no script had a say in.
    fn answered(response: Arc<SentResponse>) -> Self {
        Routed {
            dedupe: DedupeOutcome::NotApplied,
            dedupe_key: None,
            answer: Err(response),
        }
    }
}

impl Endpoint {
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
                let outcome = Answer::Respond(Arc::clone(&response), Duration::ZERO);
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
            stream_id,
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
        let request = Admitting {
            id,
            conn_id,
            head: &head,
            body: &body,
            key: key.as_ref(),
            now_ms,
        };
        let Decision {
            route,
            send,
            routed:
                Routed {
                    dedupe,
                    dedupe_key,
                    mut answer,
                },
        } = self.decide(&mut state, &request);

        let (step_index, branches) = match &mut answer {
            Ok((index, _, _, branches)) => (*index, std::mem::take(branches)),
            Err(_) => (None, Vec::new()),
        };
        inner.ledger.push_request(RequestRecord {
            id,
            conn_id,
            seq,
            stream_id,
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

        let (_, step, rendered, _) = match answer {
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

    /// Which route `request` reaches and what answers it. The bucket and the broker in front
    /// of the routes come first; a request they let through goes to its route, if one matches.
    fn decide(&self, state: &mut State, request: &Admitting<'_>) -> Decision {
        let inner = &*self.inner;
        let head = request.head;
        let route = state.routes.iter().position(|r| {
            r.matcher
                .matches_received(&head.method, head.uri.path(), &head.headers)
        });

        // The bucket is in front of everything else: a request that finds it empty is
        // answered by it, and neither dedupe nor a script sees it.
        let limited = match &mut state.limiter {
            Some(limiter) => {
                match limiter.admit(&head.headers, request.now_ms, inner.clock().now_system()) {
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
            .map(|broker| broker.read(&head.method, head.uri.path(), request.body, request.key));
        let (route, send, refused) = match read {
            None => (route, None, None),
            Some(Ok(send)) => (route, Some(send), None),
            Some(Err(refusal)) => {
                let route = route.filter(|_| refusal == broker::Refusal::BadRequest);
                (route, None, Some(Arc::new(refusal.response())))
            }
        };
        let routed = match (route, limited, refused) {
            (_, Some(response), _) => {
                inner.ledger.push_rate_limited(request.id);
                Routed::answered(response)
            }
            (_, None, Some(response)) => {
                inner.ledger.push_refused(request.id);
                Routed::answered(response)
            }
            (None, None, None) => Routed::answered(Arc::clone(&inner.not_found)),
            (Some(route), None, None) => self.through_route(state, request, route),
        };
        Decision {
            route,
            send,
            routed,
        }
    }

    /// What route `route` makes of `request`: dedupe's own answer (a rejection or a replay)
    /// if it answers, else the step the route's script or timeline chooses.
    fn through_route(&self, state: &mut State, request: &Admitting<'_>, route: usize) -> Routed {
        let inner = &*self.inner;
        let head = request.head;
        let mut dedupe = DedupeOutcome::NotApplied;
        let mut dedupe_key = None;
        let answer = match (
            &mut state.dedupe,
            header(&head.headers, inner.dedupe_header.as_ref()),
        ) {
            (Some(table), Some(value)) => {
                let decision = table.begin(&value, request.body, request.id, request.now_ms);
                dedupe = decision.outcome();
                dedupe_key = Some(value);
                table.answer(decision, inner.clock().now_system())
            }
            _ => None,
        };
        let answer = match answer {
            Some(response) => Err(response),
            None => {
                let route_state = &mut state.routes[route];
                let scope_key = scope_key(
                    route_state.scope,
                    request.conn_id,
                    &head.headers,
                    request.key,
                );
                Ok(route_state.choose(&scope_key, Duration::from_millis(request.now_ms)))
            }
        };
        Routed {
            dedupe,
            dedupe_key,
            answer,
        }
    }
}

fn header(headers: &RequestHeaders, name: Option<&HeaderName>) -> Option<HeaderValue> {
    name.and_then(|name| headers.get(name))
}

fn scope_key(
    scope: Scope,
    conn_id: u64,
    headers: &RequestHeaders,
    key: Option<&HeaderValue>,
) -> ScopeKey {
    match scope {
        Scope::Endpoint => ScopeKey::Endpoint,
        Scope::Connection => ScopeKey::Connection(conn_id),
        Scope::Client => ScopeKey::Client(headers.get(&CLIENT_HEADER_NAME)),
        Scope::Key => ScopeKey::Key(key.cloned()),
    }
}
