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

use std::fmt;

use super::attempt::{AttemptView, CallHistory, ClientHistory};
use super::units::fmt_ms;
use super::{Anchor, Envelope, Next, Observed, Policy, StopReason};

/// The false-alarm bound of the pinned-bound check, per call and bound.
pub const PIN_PROBABILITY: f64 = 1e-9;

/// Windows narrower than this (ms) do not count for the pinned-bound check: on them a
/// correct client hits a bound too often for a repeat to mean much.
pub const PIN_MIN_WIDTH_MS: u64 = 10;

/// What kind of rule a [`Violation`] broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// The next attempt started before the policy's window.
    TooEarly,
    /// The next attempt started after the policy's window.
    TooLate,
    /// The next attempt started before the floor a server header set (`Retry-After`).
    RetryAfterNotHonoured,
    /// The call stopped where the policy requires another attempt.
    StoppedEarly,
    /// An attempt was made where the policy requires the call to stop, for this reason.
    RetriedAfterStop(StopReason),
    /// Too many delays sat exactly on one bound of a uniform window.
    PinnedAtBound,
    /// The attempts are not numbered 1, 2, 3, ...: the timeline cannot be judged.
    Numbering,
    /// An attempt timed out sooner than the policy lets one run (gRPC's connect deadline,
    /// at least `MIN_CONNECT_TIMEOUT`).
    GaveUpEarly,
}

/// One way a call departed from its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The attempt the message is about (the later one for a gap).
    pub attempt: u32,
    /// The rule broken.
    pub kind: ViolationKind,
    /// A sentence naming the attempt, what happened and what was needed.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

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

/// A retry that landed in a uniform window, for the pinned-bound check. It keeps the facts,
/// not their text: every jittered retry of a call lands, and only a pinned finding is
/// described (a string per landing was most of the judging of a long jittered call).
struct Landing {
    attempt: u32,
    width_ms: u64,
    at_min: bool,
    at_max: bool,
    /// The delay, measured from `from` of attempt `after`.
    gap_ms: u64,
    from: Anchor,
    after: u32,
}

impl Landing {
    /// `3s after the end of attempt 2`.
    fn description(&self) -> String {
        format!(
            "{} after the {} of attempt {}",
            fmt_ms(self.gap_ms),
            self.from.as_str(),
            self.after
        )
    }
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
        let mut out = Vec::new();
        if let Some((i, a)) = attempts
            .iter()
            .enumerate()
            .find(|(i, a)| u64::from(a.n) != *i as u64 + 1)
        {
            out.push(Violation {
                attempt: a.n,
                kind: ViolationKind::Numbering,
                message: format!(
                    "the attempt at position {} is numbered {}: attempts must be numbered 1, \
                     2, 3, ... in order",
                    i + 1,
                    a.n
                ),
            });
            return out;
        }
        let mut landings = Vec::new();
        // Once the client made an attempt the policy forbids, what follows is outside the
        // policy: stop judging, but keep replaying state for later calls.
        let mut beyond = false;
        for (i, ctx) in attempts.iter().enumerate() {
            let history = CallHistory::new(&attempts[..i], &self.client);
            let next = attempts.get(i + 1);
            if !beyond {
                if let Some(v) = self.gave_up_early(ctx, &history) {
                    out.push(v);
                }
                let envelope = self.policy.envelope(ctx, &history);
                if let Some(v) = self.judge(ctx, &history, &envelope, next, &mut landings) {
                    beyond = matches!(v.kind, ViolationKind::RetriedAfterStop(_));
                    out.push(v);
                }
            }
            let step = match next {
                Some(nx) => Next::Retried {
                    start_ms: nx.start_ms,
                },
                None => Next::Stopped,
            };
            self.policy.record(ctx, &history, step);
        }
        if self.tolerance_ms == 0 {
            out.extend(pinned(&landings));
        }
        self.client.call_done(attempts.len());
        out
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
        let mut out = Vec::new();
        for (i, ctx) in attempts.iter().enumerate() {
            let history = CallHistory::new(&attempts[..i], &self.client);
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
                out.push(RetryWindow {
                    after: ctx.n,
                    earliest_ms: anchor.saturating_add(min_ms),
                    latest_ms: anchor.saturating_add(max_ms),
                });
            }
            let step = match next {
                Some(nx) => Next::Retried {
                    start_ms: nx.start_ms,
                },
                None => Next::Stopped,
            };
            self.policy.record(ctx, &history, step);
        }
        self.client.call_done(attempts.len());
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

/// `6, 7 and 8`.
fn join_and(items: &[u32]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(u32::to_string).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

/// The largest pin count the tail computation tracks: `P(at least k)` is bounded by
/// `P(at least 64)` beyond it, which is already far below any threshold, and the cap keeps
/// the computation linear in the number of attempts.
const PIN_TAIL_CAP: usize = 64;

/// `P(at least k of the events happen)` for independent events of probabilities `ps`
/// (Poisson-binomial tail, by dynamic programming over the count, capped at
/// [`PIN_TAIL_CAP`]). Monotone in every `p`, so upper bounds on the `p`s give an upper bound.
fn tail_at_least(ps: &[f64], k: usize) -> f64 {
    let top = k.min(PIN_TAIL_CAP);
    if top == 0 {
        return 1.0;
    }
    // dist[j] = P(exactly j so far) for j < top; dist[top] = P(at least top so far).
    let mut dist = vec![0.0f64; top + 1];
    dist[0] = 1.0;
    for &p in ps {
        dist[top] += dist[top - 1] * p;
        for j in (1..top).rev() {
            dist[j] = dist[j] * (1.0 - p) + dist[j - 1] * p;
        }
        dist[0] *= 1.0 - p;
    }
    dist[top]
}

/// The pinned-bound check over one call's uniform landings.
fn pinned(landings: &[Landing]) -> Vec<Violation> {
    // Chance that a correct client's delay rounds to one given bound: the nanoseconds that
    // round to that millisecond span at most 1 ms of a window at least `width - 1` ms wide.
    let ps: Vec<f64> = landings
        .iter()
        .map(|l| 1.0 / (l.width_ms.saturating_sub(1)).max(1) as f64)
        .collect();
    let mut out = Vec::new();
    for (is_max, word, cause) in [
        (
            true,
            "maximum",
            "a cap applied after the jitter, or no jitter at all, does this every time",
        ),
        (
            false,
            "minimum",
            "a client that skips or collapses the jittered sleep does this every time",
        ),
    ] {
        let hits: Vec<&Landing> = landings
            .iter()
            .filter(|l| if is_max { l.at_max } else { l.at_min })
            .collect();
        if hits.len() < 2 || tail_at_least(&ps, hits.len()) >= PIN_PROBABILITY {
            continue;
        }
        let numbers: Vec<u32> = hits.iter().map(|l| l.attempt).collect();
        out.push(Violation {
            attempt: numbers[0],
            kind: ViolationKind::PinnedAtBound,
            message: format!(
                "attempts {} each started exactly at the {word} of the policy's uniform jitter \
                 window (attempt {}: {}); a correct client does this with probability below \
                 {PIN_PROBABILITY:e} ({cause})",
                join_and(&numbers),
                numbers[0],
                hits[0].description(),
            ),
        });
    }
    out
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
    fn poisson_binomial_tail() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(tail_at_least(&[0.5, 0.5], 0), 1.0));
        assert!(close(tail_at_least(&[0.5, 0.5], 1), 0.75));
        assert!(close(tail_at_least(&[0.5, 0.5], 2), 0.25));
        assert!(close(tail_at_least(&[0.5, 0.5], 3), 0.0));
        assert!(close(tail_at_least(&[0.1, 0.2, 0.3], 2), 0.098));
        // Beyond the cap the tail is bounded by P(at least PIN_TAIL_CAP).
        let ps = vec![0.5; 100];
        assert!(tail_at_least(&ps, 90) >= tail_at_least(&ps, 64) - 1e-15);
    }

    #[test]
    fn words() {
        assert_eq!(join_and(&[3]), "3");
        assert_eq!(join_and(&[3, 4, 5]), "3, 4 and 5");
        assert_eq!(signed(-50, "after", "before"), "0.050s before");
        assert_eq!(count(1), "1 attempt");
    }
}
