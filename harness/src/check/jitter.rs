//! `jitter: present`: the client's retry delays are jittered, judged without knowing its
//! policy (docs/scenario-format.md#expectations).
//!
//! A client without jitter is a function of what it saw: two calls whose timelines were the
//! same up to the end of attempt `n - 1` (the same responses, at the same instants from the
//! call's start) start attempt `n` at the same instant, whatever its schedule (exponential,
//! linear, Fibonacci, a table, measured from the end, the head or the start of an attempt).
//! So each delay is compared with the delay of the first earlier call whose timeline it
//! shares:
//!
//! - one delay that differs proves the delays vary: the check passes;
//! - delays that all equal their earlier call's are evidence of no jitter. A client that
//!   jitters draws each delay so that one whole millisecond `v` gets probability at most
//!   [`SPREAD_MS`]` / v`, so a match on a delay of `v` ms multiplies the chance that a
//!   jittered client made all the matches by at most `6 / v`. The check fails when that
//!   product is below [`FALSE_ALARM`] (1e-6) even without the matches at the one value that
//!   counts most, since a jitter capped after drawing (decorrelated jitter, a cap applied
//!   after the jitter) sleeps exactly its cap again and again;
//! - otherwise the evidence is too thin either way: not judged, with how much more it needs.
//!
//! Each delay's bound holds whatever came before it, so by Ville's inequality a client that
//! jitters as modelled is flagged with probability at most 1e-6 per run, however many calls
//! the run makes. The model covers full jitter (`1/v`), equal (`2/v`), decorrelated below its
//! cap (`1.5/v`), AWS's random factor (`1/v`), SNS's ±10 % (`5.5/v`), and the jitters of
//! backon (`2/v`), tokio-retry2 (`1.5/v`), backoff with its default randomization (`1.5/v`)
//! and tower (`3/v`). A delay that follows a response carrying `Retry-After` or
//! `x-amz-retry-after` is not compared: a jittered client honouring it sleeps exactly that.
//! An attempt hyper-util resent on a fresh connection is not the client's delay and is not
//! compared either.
//!
//! Under a tolerance, and on real sockets whatever the tolerance, neither finding is made and
//! the check is not judged: instants measured with slack, or in real time, make two calls'
//! timelines differ by noise, and make a delay that differs by a few milliseconds no proof of
//! jitter.

use std::collections::BTreeMap;

use super::Ctx;
use super::conforms::{Answer, answers};
use crate::policy::aws::RETRY_AFTER_HEADER as AMZ_RETRY_AFTER;
use crate::report::Verdict;
use crate::trace::{Attempt, seconds};

const CHECK: &str = "jitter";

/// The false-alarm bound: the most probability with which a client that jitters as modelled
/// is flagged, per run.
const FALSE_ALARM: f64 = 1e-6;

/// A jittered delay equals any one whole millisecond `v` with probability at most
/// `SPREAD_MS / v`. The narrowest jitter the model covers is SNS's ±10 %: a window of a fifth
/// of the nominal delay, whose top is 1.1 times it, so `5.5 / (v - 0.5)` after rounding to
/// the millisecond, below `6 / v` from 6 ms up (and below that the bound says nothing).
const SPREAD_MS: f64 = 6.0;

/// What identifies an attempt in a call's timeline: what it came to, the response as
/// scripted, and its instants relative to the call's start. Two calls with the same steps saw
/// the same thing at the same time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Step {
    /// The outcome, the transport error after the head and how the attempt ended, by their
    /// `Debug` text (compared for equality only; never shown).
    outcome: String,
    /// The `Retry-After` the client saw, raw.
    retry_after: Option<String>,
    /// The scripted response's headers and body, when the endpoint's ledger names them (an
    /// AWS error code in the body changes what a client does).
    response: Option<Answer>,
    start_ms: u64,
    head_ms: Option<u64>,
    end_ms: Option<u64>,
    resent: bool,
}

impl Step {
    fn of(ctx: &Ctx<'_>, attempt: &Attempt, answer: Option<&Answer>, call_start_ms: u64) -> Step {
        let rel = |t: u64| t.saturating_sub(call_start_ms);
        Step {
            outcome: format!(
                "{:?} {:?} {:?}",
                attempt.outcome, attempt.body_error, attempt.end
            ),
            retry_after: attempt
                .retry_after
                .map(|raw| ctx.trace.name(raw).to_owned()),
            response: answer.cloned(),
            start_ms: rel(attempt.start_ms),
            head_ms: attempt.head_ms.map(rel),
            end_ms: attempt.end_ms.map(rel),
            resent: attempt.resent,
        }
    }
}

/// One attempt of a call, as the comparison sees it.
struct Entry {
    step: Step,
    /// Its number in the call.
    attempt: u32,
    /// What came before it: the client's own delay, or why there is none to compare.
    before: Before,
}

/// What preceded an attempt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Before {
    /// Nothing comparable: the first attempt, an attempt hyper-util resent, or one after an
    /// attempt that never ended.
    Nothing,
    /// The delay the server set: the attempt before carried `Retry-After` or
    /// `x-amz-retry-after`.
    PushedBack,
    /// The client's delay: from the end of the attempt before to the start of this one.
    Delay(u64),
}

/// The attempts of one call, in order.
struct Timeline {
    call: String,
    entries: Vec<Entry>,
}

/// Every call's timeline, in call order.
fn timelines(ctx: &Ctx<'_>) -> Vec<Timeline> {
    let answers = answers(ctx);
    let pushed_back = |a: &Attempt| {
        a.retry_after.is_some()
            || answers
                .get(&a.id)
                .is_some_and(|r| r.headers.iter().any(|(n, _)| n == AMZ_RETRY_AFTER))
    };
    ctx.trace
        .calls
        .iter()
        .map(|call| {
            let attempts = ctx.attempts_of(call.client_id, call.call_id);
            let entries = attempts
                .iter()
                .enumerate()
                .map(|(i, attempt)| {
                    let previous = i.checked_sub(1).map(|p| attempts[p]);
                    let before = match previous.and_then(|p| Some((p, p.end_ms?))) {
                        _ if attempt.resent => Before::Nothing,
                        Some((p, _)) if pushed_back(p) => Before::PushedBack,
                        Some((_, end)) => Before::Delay(attempt.start_ms.saturating_sub(end)),
                        None => Before::Nothing,
                    };
                    Entry {
                        step: Step::of(ctx, attempt, answers.get(&attempt.id), call.start_ms),
                        attempt: attempt.n,
                        before,
                    }
                })
                .collect();
            Timeline {
                call: ctx.call_name(call.client_id, call.call_id),
                entries,
            }
        })
        .collect()
}

/// A delay compared with the earlier call's delay after the same timeline prefix.
struct Comparison {
    call: String,
    attempt: u32,
    gap_ms: u64,
    earlier: String,
    earlier_gap_ms: u64,
}

impl Comparison {
    fn describe(&self) -> String {
        if self.gap_ms == self.earlier_gap_ms {
            format!(
                "{} attempt {}: {} as in {}",
                self.call,
                self.attempt,
                seconds(self.gap_ms),
                self.earlier
            )
        } else {
            format!(
                "{}'s attempt {} started {} after attempt {} ended, {}'s {}",
                self.call,
                self.attempt,
                seconds(self.gap_ms),
                self.attempt.saturating_sub(1),
                self.earlier,
                seconds(self.earlier_gap_ms)
            )
        }
    }
}

/// The delays of a run, compared.
#[derive(Default)]
struct Comparisons {
    /// Each delay that followed a timeline prefix an earlier call had, with that call's.
    list: Vec<Comparison>,
    /// The client's own delays.
    delays: usize,
    /// Delays the server set.
    pushed_back: usize,
}

/// Compares each delay with the first earlier call's after the same timeline prefix.
fn compare(timelines: &[Timeline]) -> Comparisons {
    // A trie of timeline prefixes: node 0 is the empty prefix; `first[node]` is the call
    // and delay that first followed it.
    let mut children: BTreeMap<(usize, &Step), usize> = BTreeMap::new();
    let mut first: Vec<Option<(&str, u64)>> = vec![None];
    let mut out = Comparisons::default();
    for timeline in timelines {
        let mut node = 0;
        for entry in &timeline.entries {
            match entry.before {
                Before::Nothing => {}
                Before::PushedBack => out.pushed_back += 1,
                Before::Delay(gap_ms) => {
                    out.delays += 1;
                    match first[node] {
                        Some((earlier, earlier_gap_ms)) => out.list.push(Comparison {
                            call: timeline.call.clone(),
                            attempt: entry.attempt,
                            gap_ms,
                            earlier: earlier.to_owned(),
                            earlier_gap_ms,
                        }),
                        None => first[node] = Some((&timeline.call, gap_ms)),
                    }
                }
            }
            let next = first.len();
            node = *children.entry((node, &entry.step)).or_insert(next);
            if node == next {
                first.push(None);
            }
        }
    }
    out
}

/// `-ln` of the bound on a jittered delay matching `gap_ms`: the evidence one match carries.
fn evidence(gap_ms: u64) -> f64 {
    let p = (SPREAD_MS / gap_ms as f64).min(1.0);
    -libm::log(p)
}

/// The evidence against jitter of delays that all matched.
struct Evidence {
    /// `-ln` of the bound on a jittered client making every match, leaving out the matches
    /// at the value that counts most.
    remaining: f64,
    /// That value, in case it is a cap, and its matches.
    cap_ms: u64,
    cap_count: usize,
    /// The matches that count: not at that value, and above [`SPREAD_MS`].
    counted: usize,
}

impl Evidence {
    fn of(comparisons: &[Comparison]) -> Evidence {
        let mut by_value: BTreeMap<u64, (usize, f64)> = BTreeMap::new();
        for c in comparisons {
            let entry = by_value.entry(c.gap_ms).or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += evidence(c.gap_ms);
        }
        // The first value of the most evidence (ties go to the shorter delay).
        let (cap_ms, (cap_count, cap_evidence)) = by_value
            .iter()
            .fold(
                None,
                |best: Option<(u64, (usize, f64))>, (v, e)| match best {
                    Some((_, (_, b))) if b >= e.1 => best,
                    _ => Some((*v, *e)),
                },
            )
            .unwrap_or((0, (0, 0.0)));
        let total: f64 = by_value.values().map(|e| e.1).sum();
        Evidence {
            remaining: (total - cap_evidence).max(0.0),
            cap_ms,
            cap_count,
            counted: comparisons
                .iter()
                .filter(|c| c.gap_ms != cap_ms && evidence(c.gap_ms) > 0.0)
                .count(),
        }
    }
}

/// Up to three comparisons, for a message.
fn examples(comparisons: &[&Comparison]) -> String {
    let shown: Vec<String> = comparisons.iter().take(3).map(|c| c.describe()).collect();
    let more = comparisons.len().saturating_sub(shown.len());
    if more == 0 {
        shown.join("; ")
    } else {
        format!("{}; {more} more", shown.join("; "))
    }
}

pub(super) fn check(ctx: &Ctx<'_>) -> Verdict {
    // On real sockets instants are measured in real time, where the scheduler alone makes
    // two delays differ by a millisecond or more: a client that sleeps exactly the same
    // would pass as jittered. Nothing is judged from noise, whatever the tolerance.
    if ctx.trace.on_real_sockets() {
        return Verdict::not_judged(
            CHECK,
            "the run was on real sockets, where delays are measured in real time and differ \
             by scheduling noise alone, so no difference proves jitter; judge jitter on a run \
             on `backend: sim`",
        );
    }
    if !ctx.tolerance.is_zero() {
        return Verdict::not_judged(
            CHECK,
            format!(
                "the run is judged with a {}ms tolerance: its instants are not exact, so delays \
                 that differ may differ by measurement noise alone and no two timelines are \
                 surely the same; judge jitter on a run without one (`backend: sim`, no \
                 `tolerance`)",
                ctx.tolerance.ms()
            ),
        );
    }
    let ended_early = ctx
        .end
        .verdict_name()
        .map(|end| format!(" (the run ended early: {end})"))
        .unwrap_or_default();
    judge(&compare(&timelines(ctx)), &ended_early)
}

/// The verdict on a run's comparisons; `ended_early` is appended to a verdict not judged.
fn judge(compared: &Comparisons, ended_early: &str) -> Verdict {
    let comparisons = &compared.list;
    let differing: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.gap_ms != c.earlier_gap_ms)
        .collect();
    if let Some(first) = differing.first() {
        return Verdict::pass(
            CHECK,
            format!(
                "the delays vary: after the same responses at the same instants, {} ({} of {} \
                 delays compared differ from an earlier call's)",
                first.describe(),
                differing.len(),
                comparisons.len()
            ),
        );
    }
    if comparisons.is_empty() {
        let why = match (compared.delays, compared.pushed_back) {
            (0, 0) => "the run made no retry delay".to_string(),
            (0, pushed) => format!(
                "each of the run's {pushed} retry delays followed a `Retry-After` or \
                 `x-amz-retry-after`, which a jittered client sleeps exactly too"
            ),
            (delays, _) => format!(
                "no two calls retried after the same responses at the same instants ({delays} \
                 delays), so no delay could be compared"
            ),
        };
        return Verdict::not_judged(
            CHECK,
            format!(
                "{why}{ended_early}: needs 2 or more calls that each retry after the same \
                 responses (a script whose last step repeats, or `scope: key`)"
            ),
        );
    }
    let Evidence {
        remaining,
        cap_ms,
        cap_count,
        counted,
    } = Evidence::of(comparisons);
    let needed = -libm::log(FALSE_ALARM);
    let all: Vec<&Comparison> = comparisons.iter().collect();
    let left_out = format!(
        "leaving out the {cap_count} at {}, which could be a cap",
        seconds(cap_ms)
    );
    if remaining >= needed {
        return Verdict::fail(
            CHECK,
            format!(
                "the delays do not vary: each of the {} delays compared equals an earlier call's \
                 after the same responses at the same instants ({}); a client that jitters does \
                 that with probability below {FALSE_ALARM:e}, even {left_out}",
                comparisons.len(),
                examples(&all)
            ),
        );
    }
    let more = if counted == 0 {
        "needs equal delays of two values or more, each above 6ms (a backoff that grows)"
            .to_string()
    } else {
        let per_delay = remaining / counted as f64;
        let more = libm::ceil((needed - remaining) / per_delay) as u64;
        format!("needs about {more} more equal delays like these (more calls) to flag it")
    };
    Verdict::not_judged(
        CHECK,
        format!(
            "each of the {} delays compared equals an earlier call's ({}), but a client that \
             jitters does that with probability up to {:.1e} ({left_out}), not below \
             {FALSE_ALARM:e}{ended_early}: {more}",
            comparisons.len(),
            examples(&all),
            libm::exp(-remaining),
        ),
    )
}

#[cfg(test)]
mod tests;
