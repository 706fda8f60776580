//! Does a call's timeline conform to a policy? ([`conforms`], [`Conformance`])
//!
//! For each attempt `n` the policy's [`Envelope`] is compared with what happened next:
//! attempt `n+1` started some gap after the envelope's anchor, or the call stopped. Each
//! mismatch is a [`Violation`] whose message says what and where, with durations as
//! `1.200s` (exact to the millisecond).
//!
//! One check looks across attempts: when the policy draws uniformly over a window (full or
//! equal jitter) and a client lands exactly on the same bound of it again and again, the
//! client is not drawing from that window. A cap applied after the jitter pins every late
//! delay at the cap, and a missing jitter pins every delay at the top, yet each single delay
//! lies inside its window; only the repetition shows. The check reports it when the chance
//! that a correct client pins at least that many times is below [`PIN_PROBABILITY`]: each
//! landing pins with probability at most `1 / (width_ms - 1)`, independently, and the
//! Poisson-binomial tail of those bounds is computed exactly. Windows narrower than
//! [`PIN_MIN_WIDTH_MS`] are not counted. With windows of about a second it takes five pinned
//! retries in one call; the check is per call, and skipped under a tolerance, where instants
//! are not exact.

pub(crate) mod pinned;
mod violation;

use super::attempt::{AttemptView, CallHistory, ClientHistory};
use super::decision_order::decision_order;
use super::units::fmt_ms;
use super::{Envelope, Next, Observed, Policy, StopReason};
use pinned::{Landing, pinned};
pub(crate) use pinned::{PIN_MIN_WIDTH_MS, PIN_PROBABILITY};
pub use violation::{Violation, ViolationKind};

/// Checks the calls of one client in order, replaying the policy's client-wide state.
///
/// ```
/// use retrylab::policy::{AttemptView, Conformance, FixedConfig, Observed};
/// use std::time::Duration;
///
/// let policy = FixedConfig { delay: Duration::from_millis(100), ..Default::default() };
/// let mut check = Conformance::new(policy.into_policy());
/// let call = [
///     AttemptView::new(1, Observed::Status(503), 0, Some(10), 10),
///     AttemptView::new(2, Observed::Status(200), 60, Some(70), 70),
/// ];
/// let violations = check.check_call(&call);
/// assert_eq!(
///     violations[0].message,
///     "attempt 2 started 0.050s after the end of attempt 1, a 503 (needed exactly 0.100s)"
/// );
/// ```
#[derive(Debug)]
pub struct Conformance {
    policy: Box<dyn Policy>,
    client: ClientHistory,
    tolerance_ms: u64,
    /// The client's own attempt timeout, which may cut an attempt before the policy would.
    attempt_timeout_ms: Option<u64>,
}

/// When a policy lets the retry after attempt `after` start ([`Conformance::windows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryWindow {
    /// The attempt the retry follows.
    pub after: u32,
    /// The earliest instant the retry may start, in ms of virtual time.
    pub earliest_ms: u64,
    /// The latest, in ms of virtual time.
    pub latest_ms: u64,
}

impl Conformance {
    /// A checker for a client driven by `policy` (its state is replayed, so pass a fresh
    /// policy or a copy).
    pub fn new(policy: Box<dyn Policy>) -> Conformance {
        Conformance {
            policy,
            client: ClientHistory::default(),
            tolerance_ms: 0,
            attempt_timeout_ms: None,
        }
    }

    /// The client's own `attempt_timeout`: an attempt it cut there is not given up early,
    /// whatever the policy would let it run.
    pub fn with_attempt_timeout_ms(mut self, ms: Option<u64>) -> Conformance {
        self.attempt_timeout_ms = ms;
        self
    }

    /// Widens every timing bound by `ms` on both sides (the scenario's `tolerance`), and
    /// turns the pinned-bound check off. A violation of a widened bound says so.
    ///
    /// ```
    /// use retrylab::policy::{AttemptView, Conformance, FixedConfig, Observed};
    /// use std::time::Duration;
    ///
    /// let policy = FixedConfig { delay: Duration::from_millis(100), ..Default::default() };
    /// let call = |retry_at| [
    ///     AttemptView::new(1, Observed::Status(503), 0, Some(10), 10),
    ///     AttemptView::new(2, Observed::Status(200), retry_at, Some(retry_at), retry_at),
    /// ];
    /// let mut check = Conformance::new(policy.into_policy()).with_tolerance_ms(20);
    /// // 0.090s after the end: 10 ms early, within the 20 ms.
    /// assert!(check.check_call(&call(100)).is_empty());
    /// let violations = check.check_call(&call(80));
    /// assert_eq!(
    ///     violations[0].message,
    ///     "attempt 2 started 0.070s after the end of attempt 1, a 503 (needed exactly 0.100s, \
    ///      give or take the 20ms tolerance)"
    /// );
    /// ```
    pub fn with_tolerance_ms(mut self, ms: u64) -> Conformance {
        self.tolerance_ms = ms;
        self
    }

    /// Sets the client scope (fleet index, calls already made).
    pub fn with_client(mut self, client: ClientHistory) -> Conformance {
        self.client = client;
        self
    }

    /// The policy, in its replayed state.
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
    }

    /// Checks the next call of the client; its attempts in order, numbered from 1.
    pub fn check_call(&mut self, attempts: &[AttemptView]) -> Vec<Violation> {
        self.check_calls(&[attempts]).pop().unwrap_or_default()
    }

    /// Checks the client's next calls, each with its attempts in order, numbered from 1.
    /// The calls may have been in flight at once (`operation.concurrency`): their attempts
    /// are judged and replayed in the order the client decided on them, by when each ended,
    /// so a quota the calls share is drawn on as it was. Returns each call's violations, in
    /// the order of `calls`.
    ///
    /// ```
    /// use retrylab::policy::{AttemptView, Conformance, Observed};
    /// use retrylab::policy::aws::{AwsConfig, AwsJitter};
    ///
    /// // A quota of 5 pays for one retry (AWS standard: 5 a retry, 1 s after the first
    /// // attempt without jitter). Two calls overlap: the one whose first attempt ended first
    /// // took the retry, so the other had to stop.
    /// let policy = AwsConfig { initial_tokens: 5, jitter: AwsJitter::None, ..Default::default() };
    /// let early = [
    ///     AttemptView::new(1, Observed::Status(500), 0, Some(10), 10),
    ///     AttemptView::new(2, Observed::Status(200), 1010, Some(1020), 1020),
    /// ];
    /// let late = [AttemptView::new(1, Observed::Status(500), 0, Some(20), 20)];
    /// let violations = Conformance::new(policy.into_policy()).check_calls(&[&late, &early]);
    /// assert!(violations.iter().all(Vec::is_empty), "{violations:?}");
    /// ```
    pub fn check_calls(&mut self, calls: &[&[AttemptView]]) -> Vec<Vec<Violation>> {
        let mut out: Vec<Vec<Violation>> = calls.iter().map(|c| misnumbered(c)).collect();
        // A call whose attempts are misnumbered cannot be judged, nor its state replayed.
        let judged: Vec<&[AttemptView]> = calls
            .iter()
            .zip(&out)
            .map(|(call, found)| if found.is_empty() { *call } else { &[][..] })
            .collect();
        let histories = self.histories(calls);
        let mut landings: Vec<Vec<Landing>> = calls.iter().map(|_| Vec::new()).collect();
        // Once a call made an attempt the policy forbids, what follows is outside the
        // policy: stop judging it, but keep replaying state for the other calls.
        let mut beyond = vec![false; calls.len()];
        for (c, i) in decision_order(&judged) {
            let attempts = judged[c];
            let ctx = &attempts[i];
            let history = CallHistory::new(&attempts[..i], &histories[c]);
            let next = attempts.get(i + 1);
            if !beyond[c] {
                if let Some(v) = self.gave_up_early(ctx, &history) {
                    out[c].push(v);
                }
                let envelope = self.policy.envelope(ctx, &history);
                if let Some(v) = self.judge(ctx, &history, &envelope, next, &mut landings[c]) {
                    beyond[c] = matches!(v.kind, ViolationKind::RetriedAfterStop(_));
                    out[c].push(v);
                }
            }
            self.policy.record(ctx, &history, next_of(next));
        }
        if self.tolerance_ms == 0 {
            for (found, landings) in out.iter_mut().zip(&landings) {
                found.extend(pinned(landings));
            }
        }
        out
    }

    /// Where each of `calls` sits in the client's life, in the order given; the client's
    /// scope moves past them all.
    fn histories(&mut self, calls: &[&[AttemptView]]) -> Vec<ClientHistory> {
        calls
            .iter()
            .map(|call| {
                let history = self.client;
                self.client.call_done(call.len());
                history
            })
            .collect()
    }

    /// The windows the policy allows one call's retries in, as instants of virtual time:
    /// after each attempt a next one followed, the next may start from `earliest_ms` to
    /// `latest_ms` (before any tolerance). The policy's state is replayed as
    /// [`Conformance::check_call`] replays it, so the windows of a call follow from the calls
    /// before it; a plot shades them.
    ///
    /// ```
    /// use retrylab::policy::{AttemptView, Conformance, FixedConfig, Observed, RetryWindow};
    /// use std::time::Duration;
    ///
    /// let policy = FixedConfig { delay: Duration::from_millis(100), ..Default::default() };
    /// let attempts = [
    ///     AttemptView::new(1, Observed::Status(503), 0, Some(10), 10),
    ///     AttemptView::new(2, Observed::Status(200), 110, Some(120), 120),
    /// ];
    /// let windows = Conformance::new(policy.into_policy()).windows(&attempts);
    /// assert_eq!(windows, [RetryWindow { after: 1, earliest_ms: 110, latest_ms: 110 }]);
    /// ```
    pub fn windows(&mut self, attempts: &[AttemptView]) -> Vec<RetryWindow> {
        self.windows_of_calls(&[attempts]).pop().unwrap_or_default()
    }

    /// [`Conformance::windows`] for calls that may have been in flight at once, replayed as
    /// [`Conformance::check_calls`] replays them; each call's windows, in the order of
    /// `calls`.
    ///
    /// ```
    /// use retrylab::policy::{AttemptView, Conformance, FixedConfig, Observed, RetryWindow};
    /// use std::time::Duration;
    ///
    /// let policy = FixedConfig { delay: Duration::from_millis(100), ..Default::default() };
    /// let a = [
    ///     AttemptView::new(1, Observed::Status(503), 0, Some(10), 10),
    ///     AttemptView::new(2, Observed::Status(200), 110, Some(120), 120),
    /// ];
    /// let b = [AttemptView::new(1, Observed::Status(200), 5, Some(15), 15)];
    /// let windows = Conformance::new(policy.into_policy()).windows_of_calls(&[&a, &b]);
    /// assert_eq!(windows[0], [RetryWindow { after: 1, earliest_ms: 110, latest_ms: 110 }]);
    /// assert!(windows[1].is_empty());
    /// ```
    pub fn windows_of_calls(&mut self, calls: &[&[AttemptView]]) -> Vec<Vec<RetryWindow>> {
        let histories = self.histories(calls);
        let mut out: Vec<Vec<RetryWindow>> = calls.iter().map(|_| Vec::new()).collect();
        for (c, i) in decision_order(calls) {
            let attempts = calls[c];
            let ctx = &attempts[i];
            let history = CallHistory::new(&attempts[..i], &histories[c]);
            let next = attempts.get(i + 1);
            if let (
                Envelope::Retry {
                    min_ms,
                    max_ms,
                    from,
                    ..
                },
                Some(_),
            ) = (self.policy.envelope(ctx, &history), next)
            {
                let anchor = ctx.anchor_ms(from);
                out[c].push(RetryWindow {
                    after: ctx.n,
                    earliest_ms: anchor.saturating_add(min_ms),
                    latest_ms: anchor.saturating_add(max_ms),
                });
            }
            self.policy.record(ctx, &history, next_of(next));
        }
        out
    }

    /// A timed-out attempt that ran less than the policy lets one run, and less than the
    /// client's own attempt timeout.
    fn gave_up_early(&self, ctx: &AttemptView, history: &CallHistory<'_>) -> Option<Violation> {
        if ctx.outcome != Observed::Timeout {
            return None;
        }
        let least = self.policy.min_attempt_ms(ctx, history)?;
        let least = self.attempt_timeout_ms.map_or(least, |t| least.min(t));
        let ran = ctx.end_ms.saturating_sub(ctx.start_ms);
        if ran.saturating_add(self.tolerance_ms) >= least {
            return None;
        }
        Some(Violation {
            attempt: ctx.n,
            kind: ViolationKind::GaveUpEarly,
            message: format!(
                "attempt {} was given up after {}, but the policy lets it run {}{}",
                ctx.n,
                fmt_ms(ran),
                fmt_ms(least),
                self.note("less the")
            ),
        })
    }

    fn judge(
        &self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        envelope: &Envelope,
        next: Option<&AttemptView>,
        landings: &mut Vec<Landing>,
    ) -> Option<Violation> {
        let n = ctx.n;
        let tol = i128::from(self.tolerance_ms);
        match (envelope, next) {
            (Envelope::MustStop(_), None) => None,
            (Envelope::MustStop(reason), Some(_)) => Some(Violation {
                attempt: n + 1,
                kind: ViolationKind::RetriedAfterStop(*reason),
                message: self.retried_after_stop(ctx, history, *reason),
            }),
            (Envelope::Retry { optional: true, .. }, None) => None,
            (Envelope::Retry { .. }, None) => {
                let allows = match self.policy.max_attempts() {
                    Some(max) => format!("policy allows {}", count(max)),
                    None => "the policy allows another attempt".to_string(),
                };
                Some(Violation {
                    attempt: n,
                    kind: ViolationKind::StoppedEarly,
                    message: format!(
                        "attempt {n}: the call stopped after a retryable {} with attempts left \
                         ({allows})",
                        ctx.outcome.noun()
                    ),
                })
            }
            (
                Envelope::Retry {
                    min_ms,
                    max_ms,
                    from,
                    not_before,
                    uniform,
                    ..
                },
                Some(nx),
            ) => {
                if let Some(nb) = not_before {
                    if i128::from(nx.start_ms) + tol < i128::from(nb.at_ms) {
                        let head = ctx.head_ms.unwrap_or(ctx.end_ms);
                        return Some(Violation {
                            attempt: nx.n,
                            kind: ViolationKind::RetryAfterNotHonoured,
                            message: format!(
                                "attempt {} started {} the head of a {} with {}: {} (needed >= \
                                 {}{})",
                                nx.n,
                                signed(
                                    i128::from(nx.start_ms) - i128::from(head),
                                    "after",
                                    "before"
                                ),
                                ctx.outcome.noun(),
                                nb.header,
                                nb.value,
                                fmt_ms(nb.after(head)),
                                self.note("less the"),
                            ),
                        });
                    }
                }
                let gap = i128::from(nx.start_ms) - i128::from(ctx.anchor_ms(*from));
                let describe = || {
                    let needed = if min_ms == max_ms {
                        format!("needed exactly {}", fmt_ms(*min_ms))
                    } else {
                        format!("needed {} to {}", fmt_ms(*min_ms), fmt_ms(*max_ms))
                    };
                    format!(
                        "attempt {} started {} the {} of attempt {n}, a {} ({needed}{})",
                        nx.n,
                        signed(gap, "after", "before"),
                        from.as_str(),
                        ctx.outcome.noun(),
                        self.note("give or take the"),
                    )
                };
                if gap + tol < i128::from(*min_ms) {
                    return Some(Violation {
                        attempt: nx.n,
                        kind: ViolationKind::TooEarly,
                        message: describe(),
                    });
                }
                if gap > i128::from(*max_ms) + tol {
                    return Some(Violation {
                        attempt: nx.n,
                        kind: ViolationKind::TooLate,
                        message: describe(),
                    });
                }
                if *uniform && max_ms - min_ms >= PIN_MIN_WIDTH_MS {
                    landings.push(Landing {
                        attempt: nx.n,
                        width_ms: max_ms - min_ms,
                        at_min: gap == i128::from(*min_ms),
                        at_max: gap == i128::from(*max_ms),
                        gap_ms: u64::try_from(gap).unwrap_or(0),
                        from: *from,
                        after: n,
                    });
                }
                None
            }
        }
    }

    /// `, less the 50ms tolerance` after a bound the tolerance widened; empty without one.
    fn note(&self, how: &str) -> String {
        if self.tolerance_ms == 0 {
            String::new()
        } else {
            format!(", {how} {}ms tolerance", self.tolerance_ms)
        }
    }

    fn retried_after_stop(
        &self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        reason: StopReason,
    ) -> String {
        let n = ctx.n;
        let next = n + 1;
        let outcome = ctx.outcome.noun();
        match reason {
            StopReason::Success => {
                format!("attempt {next} was made after attempt {n} succeeded ({outcome})")
            }
            StopReason::MaxAttemptsExceeded => match self.policy.max_attempts() {
                Some(max) => {
                    format!(
                        "attempt {next} was made but the policy allows at most {}",
                        count(max)
                    )
                }
                None => format!("attempt {next} was made but the policy allows no more attempts"),
            },
            StopReason::NotRetryable => {
                format!(
                    "attempt {next} was made after a {outcome}, which the policy does not retry"
                )
            }
            StopReason::RetryQuotaExceeded => {
                // The quota as the policy saw it when it stopped: after what the attempt
                // itself costs (gRPC's token for a failure), before any retry's charge.
                let mut stopped = self.policy.clone_box();
                stopped.record(ctx, history, Next::Stopped);
                let state = stopped
                    .describe_state()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!(
                    "attempt {next} was made after a {outcome} but the retry quota could not pay \
                     for it{state}"
                )
            }
            StopReason::Pushback => {
                format!("attempt {next} was made after a {outcome} whose pushback forbade retrying")
            }
            StopReason::Deadline => {
                format!("attempt {next} was made after a {outcome} past the policy's deadline")
            }
        }
    }
}

/// What a client did after an attempt: started `next`, or stopped.
fn next_of(next: Option<&AttemptView>) -> Next {
    match next {
        Some(nx) => Next::Retried {
            start_ms: nx.start_ms,
        },
        None => Next::Stopped,
    }
}

/// The violation of a call whose attempts are not numbered 1, 2, 3, ... in order, if so.
fn misnumbered(attempts: &[AttemptView]) -> Vec<Violation> {
    attempts
        .iter()
        .enumerate()
        .find(|(i, a)| u64::from(a.n) != *i as u64 + 1)
        .map(|(i, a)| Violation {
            attempt: a.n,
            kind: ViolationKind::Numbering,
            message: format!(
                "the attempt at position {} is numbered {}: attempts must be numbered 1, 2, \
                 3, ... in order",
                i + 1,
                a.n
            ),
        })
        .into_iter()
        .collect()
}

/// `1.200s after` / `0.050s before`.
fn signed(ms: i128, after: &str, before: &str) -> String {
    let abs = u64::try_from(ms.unsigned_abs()).unwrap_or(u64::MAX);
    format!("{} {}", fmt_ms(abs), if ms < 0 { before } else { after })
}

/// `1 attempt`, `3 attempts`.
fn count(n: u32) -> String {
    if n == 1 {
        "1 attempt".to_string()
    } else {
        format!("{n} attempts")
    }
}

/// Checks one call against a fresh copy of `policy` (its current state): the violations, in
/// attempt order, the pinned-bound finding last.
///
/// ```
/// use retrylab::policy::{conforms, AttemptView, NoRetryConfig, Observed};
///
/// let policy = NoRetryConfig::default().into_policy();
/// let call = [
///     AttemptView::new(1, Observed::Status(503), 0, Some(10), 10),
///     AttemptView::new(2, Observed::Status(200), 20, Some(30), 30),
/// ];
/// let v = conforms(policy.as_ref(), &call);
/// assert_eq!(v[0].message, "attempt 2 was made but the policy allows at most 1 attempt");
/// ```
pub fn conforms(policy: &dyn Policy, attempts: &[AttemptView]) -> Vec<Violation> {
    Conformance::new(policy.clone_box()).check_call(attempts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(signed(-50, "after", "before"), "0.050s before");
        assert_eq!(count(1), "1 attempt");
    }
}
