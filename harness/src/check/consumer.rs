//! `consumer: { idempotent_by: key | none }`: `effects: exactly_once`, judged on what a
//! consumer of the brokers' stored messages processes rather than on what was stored.
//!
//! The consumer reads the stored messages in the order they were stored. Idempotent by
//! `key`, it skips a message whose key it has already processed in that topic (the remedy
//! `RocketMQ`'s documentation gives for the duplicate a timed-out send leaves); a message
//! without a key it cannot deduplicate, and processes. With `none`, it processes every
//! message. Each call that succeeded must then have exactly one message processed, and no
//! call more than one: a duplicate the consumer processes twice fails, and so does a call
//! whose only message was skipped because another call's message shared its key.

use std::collections::{BTreeMap, BTreeSet};

use super::broker_messages::{listed, sends};
use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::{ConsumerSpec, IdempotentBy};
use crate::trace::{CallResult, Message};

pub(super) fn check(ctx: &Ctx<'_>, spec: ConsumerSpec) -> Verdict {
    let mut seen = BTreeSet::new();
    let mut processed: BTreeMap<u32, Vec<&Message>> = BTreeMap::new();
    let mut skipped = 0usize;
    let mut unattributed = 0usize;
    for m in &ctx.trace.messages {
        let duplicate = match (spec.idempotent_by, m.key) {
            (IdempotentBy::Key, Some(key)) => !seen.insert((m.topic, key)),
            (IdempotentBy::Key, None) | (IdempotentBy::None, _) => false,
        };
        if duplicate {
            skipped += 1;
            continue;
        }
        match m.call_id {
            Some(call) => processed.entry(call).or_default().push(m),
            None => unattributed += 1,
        }
    }
    let mut problems = Vec::new();
    for call in &ctx.trace.calls {
        let messages = processed.get(&call.call_id).map_or(&[][..], Vec::as_slice);
        let name = ctx.call_name(call.client_id, call.call_id);
        let succeeded = matches!(call.result, CallResult::Success(_));
        if messages.len() > 1 {
            let keyless = messages.iter().filter(|m| m.key.is_none()).count();
            let why = match (spec.idempotent_by, keyless) {
                (IdempotentBy::Key, 0) => String::new(),
                (IdempotentBy::Key, n) => format!("; {n} of them had no key to deduplicate on"),
                (IdempotentBy::None, _) => String::new(),
            };
            problems.push(Finding::call(
                call.client_id,
                call.call_id,
                format!(
                    "the consumer processed {} messages of {name} ({}){why}",
                    messages.len(),
                    listed(ctx, messages)
                ),
            ));
        } else if succeeded && messages.is_empty() {
            problems.push(Finding::call(
                call.client_id,
                call.call_id,
                format!("{name} succeeded but the consumer processed no message of it"),
            ));
        }
    }
    if unattributed > 0 {
        problems.push(Finding::from(format!(
            "{unattributed} processed messages could not be attributed to a call"
        )));
    }
    let by = spec.idempotent_by.name();
    let count = ctx.trace.messages.len() - skipped;
    let verdict = verdict_on(
        "consumer",
        sends(ctx),
        || "no send reached a broker, so no message could be processed or judged".to_owned(),
        problems,
        || {
            format!(
                "a consumer idempotent by {by} processed {count} of {} stored messages, \
                 one per call over {} calls",
                ctx.trace.messages.len(),
                ctx.trace.calls.len()
            )
        },
    );
    ctx.unless_unsettled(verdict)
}
