//! `dead_lettered: n`: messages that reached the scenario's dead-letter endpoints.

use super::{Ctx, count_text, verdict};
use crate::report::Verdict;
use crate::scenario::CountSpec;
use crate::trace::seconds;

pub(super) fn check(ctx: &Ctx<'_>, count: CountSpec) -> Verdict {
    let mut at = Vec::new();
    for (name, ledger) in ctx.ledgers {
        if ctx.is_dead_letter(name) {
            at.extend(ledger.effects.iter().map(|e| seconds(e.at_ms)));
        }
    }
    let n = at.len() as u64;
    let problems = if count.contains(n) {
        vec![]
    } else {
        vec![format!(
            "{n} messages were dead-lettered{}, expected {}",
            if at.is_empty() {
                String::new()
            } else {
                format!(" (at {})", at.join(", "))
            },
            count_text(count)
        )]
    };
    ctx.unless_unsettled(verdict("dead_lettered", problems, || {
        format!("{n} messages dead-lettered")
    }))
}
