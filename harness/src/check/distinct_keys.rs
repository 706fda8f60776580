//! `distinct_keys: true | false`: whether every message the brokers stored carries a key
//! of its own within its topic, so that a consumer can tell every message apart. A message
//! without a key cannot be told from a second send of the same message: that is the
//! producer that retries a timed-out send without a key.

use super::broker_messages::{Callers, Identity, groups, listed, named};
use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};

pub(super) fn check(ctx: &Ctx<'_>, expected: bool) -> Verdict {
    let mut reasons: Vec<Finding> = Vec::new();
    let callers = Callers::new(ctx);
    for ((topic, identity), messages) in groups(ctx) {
        let topic = ctx.trace.name(topic);
        match identity {
            Identity::Key(key) if messages.len() > 1 => reasons.push(Finding::from(format!(
                "key {} was stored {} times in topic {topic} ({})",
                ctx.trace.name(key),
                messages.len(),
                listed(ctx, &messages)
            ))),
            Identity::Key(_) => {}
            Identity::Call(_) | Identity::Alone(_) => {
                for m in messages {
                    let finding = format!("{} in topic {topic} has no key", named(ctx, m));
                    reasons.push(match m.call_id {
                        Some(call) => {
                            callers.finding(ctx, call, |name| format!("{name}: {finding}"))
                        }
                        None => Finding::from(finding),
                    });
                }
            }
        }
    }
    let stored = ctx.trace.messages.len();
    let distinct = reasons.is_empty();
    let problems = if distinct == expected {
        Vec::new()
    } else if expected {
        reasons
    } else {
        vec![Finding::from(format!(
            "every one of the {stored} stored messages has a key of its own"
        ))]
    };
    let verdict = verdict_on(
        "distinct_keys",
        stored,
        || "no broker stored a message, so no key could be judged".to_owned(),
        problems,
        || {
            if distinct {
                format!("every one of the {stored} stored messages has a key of its own")
            } else {
                format!("{stored} stored messages, not every one with a key of its own")
            }
        },
    );
    ctx.unless_unsettled(verdict)
}
