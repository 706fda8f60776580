//! Commits: a request's effect recorded in the ledger, unless dedupe says its key already
//! committed one, and on a broker the message its send stores.

use std::sync::Arc;

use http::HeaderValue;

use crate::kinds::broker;
use crate::ledger::{EffectRecord, RequestId};

use super::{Endpoint, State};

/// What a commit needs to know about its request.
pub(super) struct EffectCtx {
    pub(super) request: RequestId,
    pub(super) key: Option<HeaderValue>,
    pub(super) call_tag: Option<HeaderValue>,
    pub(super) dedupe_key: Option<HeaderValue>,
    /// On a broker: the send, stored when the step commits.
    pub(super) send: Option<broker::Send>,
    /// On a broker: the id of the message the send stored on arrival, if it did.
    pub(super) stored: Option<Arc<str>>,
}

impl Endpoint {
    /// Record the effect of `ctx`'s request, unless dedupe says its key already committed;
    /// on a broker, store its message too and return the message's id.
    pub(super) fn commit(
        &self,
        state: &mut State,
        ctx: &EffectCtx,
        now_ms: u64,
    ) -> Option<Arc<str>> {
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
