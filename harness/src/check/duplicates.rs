//! `duplicates: { at_most: n }`: stored messages beyond the first of each key in its topic,
//! or, for messages sent without a key, beyond the first of each call, over all the brokers.
//! The broker stores every send, so a retried send that had already been stored is one.

use super::messages::{Identity, groups, listed, sends};
use super::{Ctx, verdict_on};
use crate::report::{Finding, Verdict};
use crate::scenario::AtMostSpec;

pub(super) fn check(ctx: &Ctx<'_>, spec: AtMostSpec) -> Verdict {
    let mut found: Vec<Finding> = Vec::new();
    let mut count = 0u64;
    for ((topic, identity), messages) in groups(ctx) {
        if messages.len() < 2 {
            continue;
        }
        count += messages.len() as u64 - 1;
        let topic = ctx.trace.name(topic);
        let list = listed(ctx, &messages);
        found.push(match identity {
            Identity::Key(key) => Finding::from(format!(
                "key {} was stored {} times in topic {topic} ({list})",
                ctx.trace.name(key),
                messages.len()
            )),
            Identity::Call(call) => Finding::call(
                0,
                call,
                format!(
                    "call {call} stored {} messages without a key in topic {topic} ({list})",
                    messages.len()
                ),
            ),
            // A group of its own holds one message.
            Identity::Alone(_) => continue,
        });
    }
    let duplicates = match count {
        1 => "1 duplicate".to_owned(),
        n => format!("{n} duplicates"),
    };
    let problems = if count > spec.at_most {
        let mut problems = vec![Finding::from(format!(
            "{duplicates}, at most {} allowed",
            spec.at_most
        ))];
        problems.extend(found);
        problems
    } else {
        Vec::new()
    };
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
