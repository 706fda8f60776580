//! What the message checks (`distinct_keys`, `duplicates`, `consumer`) share: the brokers'
//! stored messages, grouped as a consumer of one topic would tell them apart.

use std::collections::BTreeMap;

use super::Ctx;
use crate::trace::{Message, Name, seconds};

/// What tells a stored message from another of its topic: its key, else (a message sent
/// without one) the call that sent it, else nothing (a message no call can be found for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Identity {
    /// The message's key.
    Key(Name),
    /// No key: the call it is attributed to.
    Call(u32),
    /// Neither: the message's position in the trace, so it groups with no other.
    Alone(usize),
}

/// The stored messages of each (topic, identity), in the order they were stored.
pub(super) fn groups<'t>(ctx: &Ctx<'t>) -> BTreeMap<(Name, Identity), Vec<&'t Message>> {
    let mut groups: BTreeMap<(Name, Identity), Vec<&Message>> = BTreeMap::new();
    for (i, m) in ctx.trace.messages.iter().enumerate() {
        let identity = match (m.key, m.call_id) {
            (Some(key), _) => Identity::Key(key),
            (None, Some(call)) => Identity::Call(call),
            (None, None) => Identity::Alone(i),
        };
        groups.entry((m.topic, identity)).or_default().push(m);
    }
    groups
}

/// `broker-1 at 0.003s`: how a verdict names a stored message.
pub(super) fn named(ctx: &Ctx<'_>, m: &Message) -> String {
    format!("{} at {}", ctx.trace.name(m.id), seconds(m.at_ms))
}

/// `broker-1 at 0.003s, broker-2 at 1.003s`.
pub(super) fn listed(ctx: &Ctx<'_>, messages: &[&Message]) -> String {
    messages
        .iter()
        .map(|m| named(ctx, m))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Requests that reached a broker: with none, no message could be stored or judged.
pub(super) fn sends(ctx: &Ctx<'_>) -> usize {
    ctx.ledgers
        .iter()
        .filter(|(name, _)| {
            ctx.scenario
                .endpoints
                .get(name)
                .is_some_and(|e| e.kind == crate::scenario::EndpointKind::Broker)
        })
        .map(|(_, ledger)| ledger.requests.len())
        .sum()
}
