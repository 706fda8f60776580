//! `duplicates: { at_most: n }`: stored messages beyond the first of each key in its topic,
//! or, for messages sent without a key, beyond the first of each call, over all the brokers.
//! The broker stores every send, so a retried send that had already been stored is one.
//! A keyless message that no call can be found for fails the check: whether it repeats
//! another cannot be told, and passing over it could hide a duplicate.

use super::broker_messages::{Callers, Identity, groups, listed, sends};
use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::AtMostSpec;

pub(super) fn check(ctx: &Ctx<'_>, spec: AtMostSpec) -> Verdict {
    let mut found: Vec<Finding> = Vec::new();
    let mut count = 0u64;
    // Keyless messages tied to no call: whether one repeats another cannot be told, so
    // they are reported rather than counted as no duplicate.
    let mut unattributed = 0usize;
    let callers = Callers::new(ctx);
    for ((topic, identity), messages) in groups(ctx) {
        let times = messages.len();
        let topic = ctx.trace.name(topic);
        match identity {
            Identity::Alone(_) => unattributed += times,
            _ if times < 2 => {}
            Identity::Key(key) => {
                count += times as u64 - 1;
                found.push(Finding::from(format!(
                    "key {} was stored {times} times in topic {topic} ({})",
                    ctx.trace.name(key),
                    listed(ctx, &messages)
                )));
            }
            Identity::Call(call) => {
                count += times as u64 - 1;
                found.push(callers.finding(ctx, call, |name| {
                    format!(
                        "{name} stored {times} messages without a key in topic {topic} ({})",
                        listed(ctx, &messages)
                    )
                }));
            }
        }
    }
    let duplicates = match count {
        1 => "1 duplicate".to_owned(),
        n => format!("{n} duplicates"),
    };
    let mut problems = if count > spec.at_most {
        let mut problems = vec![Finding::from(format!(
            "{duplicates}, at most {} allowed",
            spec.at_most
        ))];
        problems.extend(found);
        problems
    } else {
        Vec::new()
    };
    if unattributed > 0 {
        let (messages, they) = match unattributed {
            1 => ("message", "it is a duplicate"),
            _ => ("messages", "they are duplicates"),
        };
        problems.push(Finding::from(format!(
            "{unattributed} stored {messages} without a key could not be attributed to a \
             call, so whether {they} cannot be told"
        )));
    }
    let stored = ctx.trace.messages.len();
    let verdict = verdict_on(
        "duplicates",
        sends(ctx),
        || "no send reached a broker, so no duplicate could be stored or judged".to_owned(),
        problems,
        || {
            format!(
                "{duplicates} among {stored} stored messages (at most {})",
                spec.at_most
            )
        },
    );
    ctx.unless_unsettled(verdict)
}
