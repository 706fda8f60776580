//! Does a client follow its policy's schedule with the jitter left out? ([`Nominal`])
//!
//! A client whose jitter is silently off sleeps the nominal delay of its schedule every time.
//! Each delay on its own lies inside the jittered policy's envelope, so only the repetition
//! over the run shows it. [`Nominal`] replays two copies of the policy on a client's calls,
//! the jittered one and the same one with its jitter off, and compares each retry's start
//! with the instant the nominal delay gives:
//!
//! - a retry that starts anywhere else means the client does not follow the nominal
//!   schedule, and there is no finding;
//! - a retry on the nominal instant is one more match. A client that jitters as the policy
//!   says lands on it with probability at most `1 / (width - 1)`, `width` being the jitter
//!   window in whole milliseconds (the bound of the pinned-bound check in [`conformance`]),
//!   when it draws uniformly over the window, or when the nominal delay lies strictly inside
//!   a window whose only atoms are its bounds (decorrelated jitter's cap, a throttle's
//!   spacing). A nominal delay on a bound of such a window, a window under 2 ms wide, or a
//!   server-imposed floor (`Retry-After`) carries no evidence.
//!
//! The finding is reported when every retry of the run matched and the product of those
//! bounds is below [`PIN_PROBABILITY`]. Each bound holds whatever came before it, so a client
//! that jitters as the policy says is flagged with probability at most that, per run.
//!
//! [`conformance`]: super::conformance

use super::attempt::{AttemptView, CallHistory, ClientHistory};
use super::conformance::PIN_PROBABILITY;
use super::decision_order::decision_order;
use super::units::fmt_ms;
use super::{Envelope, Next, Policy};

/// The evidence, over a run, that a client follows a jittered policy's nominal schedule.
#[derive(Debug)]
pub(crate) struct Nominal {
    jittered: Box<dyn Policy>,
    plain: Box<dyn Policy>,
    /// The two policies as they were given, for the next client of a fleet: each client
    /// has its own state.
    fresh: (Box<dyn Policy>, Box<dyn Policy>),
    /// Retries that started on their nominal instant.
    matched: usize,
    /// The sum of `-ln` of each match's probability bound.
    evidence: f64,
    /// The first matches, for the message.
    examples: Vec<String>,
    /// A retry started off its nominal instant.
    departed: bool,
}

impl Nominal {
    /// Evidence for a client of `jittered`, whose nominal schedule is `plain` (the same
    /// policy with its jitter off). Pass fresh policies: their state is replayed.
    pub(crate) fn new(jittered: Box<dyn Policy>, plain: Box<dyn Policy>) -> Nominal {
        Nominal {
            fresh: (jittered.clone_box(), plain.clone_box()),
            jittered,
            plain,
            matched: 0,
            evidence: 0.0,
            examples: Vec::new(),
            departed: false,
        }
    }

    /// Adds calls of the client that may have been in flight at once, each as (its place in
    /// the client's life, its name in messages, its attempts numbered from 1): replayed in
    /// the order the client decided on them, as [`Conformance`](super::Conformance) does.
    pub(crate) fn observe_calls(&mut self, calls: &[(ClientHistory, &str, &[AttemptView])]) {
        let attempts: Vec<&[AttemptView]> = calls.iter().map(|(_, _, a)| *a).collect();
        for (c, i) in decision_order(&attempts) {
            let (client, call, attempts) = &calls[c];
            let ctx = &attempts[i];
            let history = CallHistory::new(&attempts[..i], client);
            let next = attempts.get(i + 1);
            if let Some(next) = next {
                if !self.departed {
                    self.judge(call, ctx, &history, next);
                }
            }
            let step = match next {
                Some(next) => Next::Retried {
                    start_ms: next.start_ms,
                },
                None => Next::Stopped,
            };
            self.jittered.record(ctx, &history, step);
            self.plain.record(ctx, &history, step);
        }
    }

    fn judge(
        &mut self,
        call: &str,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        next: &AttemptView,
    ) {
        let Envelope::Retry {
            min_ms,
            max_ms,
            from,
            ..
        } = self.plain.envelope(ctx, history)
        else {
            // The nominal client would have stopped: no nominal delay to compare with.
            return;
        };
        if min_ms != max_ms {
            return;
        }
        let nominal_start = ctx.anchor_ms(from).saturating_add(min_ms);
        if next.start_ms != nominal_start {
            self.departed = true;
            return;
        }
        let p = match self.jittered.envelope(ctx, history) {
            Envelope::Retry {
                min_ms,
                max_ms,
                from,
                not_before: None,
                uniform,
                ..
            } => {
                let width = max_ms.saturating_sub(min_ms);
                let inside = nominal_start
                    .checked_sub(ctx.anchor_ms(from))
                    .is_some_and(|d| d > min_ms && d < max_ms);
                if width >= 2 && (uniform || inside) {
                    1.0 / (width - 1) as f64
                } else {
                    1.0
                }
            }
            _ => 1.0,
        };
        self.matched += 1;
        self.evidence -= libm::log(p);
        if self.examples.len() < 3 {
            self.examples.push(format!(
                "{call} attempt {}: {}",
                next.n,
                fmt_ms(next.start_ms.saturating_sub(ctx.anchor_ms(from)))
            ));
        }
    }

    /// Starts on the next client of a fleet: the evidence adds up over the run, the
    /// policies' state starts afresh.
    pub(crate) fn next_client(&mut self) {
        self.jittered = self.fresh.0.clone_box();
        self.plain = self.fresh.1.clone_box();
    }

    /// The finding, when every retry of the run started on its nominal instant and a client
    /// jittering as the policy says does that with probability below [`PIN_PROBABILITY`].
    pub(crate) fn finding(&self) -> Option<String> {
        if self.departed || self.evidence < -libm::log(PIN_PROBABILITY) {
            return None;
        }
        let more = self.matched.saturating_sub(self.examples.len());
        let examples = if more == 0 {
            self.examples.join("; ")
        } else {
            format!("{}; {more} more", self.examples.join("; "))
        };
        Some(format!(
            "every one of the {} retry delays is the {} schedule's without jitter ({examples}); \
             a client jittering as the policy says does that with probability below \
             {PIN_PROBABILITY:e}: its jitter looks off",
            self.matched,
            self.jittered.name()
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::policy::aws::{AwsConfig, AwsJitter, AwsMode};
    use crate::policy::sns::{SnsBackoff, SnsConfig};
    use crate::policy::{Decision, ExponentialConfig, FibonacciConfig, Jitter, Observed};
    use crate::rng::Stream;

    /// A jittered policy, and the same with its jitter off.
    type Pair = (&'static str, Box<dyn Policy>, Box<dyn Policy>);

    /// The library's jittered policies, each with its jitter off.
    fn pairs() -> Vec<Pair> {
        let exponential = |jitter, max_delay| ExponentialConfig {
            max_attempts: 6,
            max_delay,
            jitter,
            ..ExponentialConfig::default()
        };
        let fibonacci = |jitter| FibonacciConfig {
            max_attempts: 6,
            initial: Duration::from_millis(20),
            jitter,
            ..FibonacciConfig::default()
        };
        let aws = |jitter| AwsConfig {
            mode: AwsMode::Standard,
            max_attempts: Some(5),
            jitter,
            ..AwsConfig::default()
        };
        let sns = |jitter| SnsConfig {
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
            num_retries: 4,
            backoff: SnsBackoff::Exponential,
            jitter,
            ..SnsConfig::default()
        };
        let long = Duration::from_secs(20);
        let short = Duration::from_millis(400);
        vec![
            (
                "full",
                exponential(Jitter::Full, long).into_policy(),
                exponential(Jitter::None, long).into_policy(),
            ),
            (
                "equal",
                exponential(Jitter::Equal, long).into_policy(),
                exponential(Jitter::None, long).into_policy(),
            ),
            (
                "decorrelated",
                exponential(Jitter::Decorrelated, short).into_policy(),
                exponential(Jitter::None, short).into_policy(),
            ),
            (
                "fibonacci, equal",
                fibonacci(Jitter::Equal).into_policy(),
                fibonacci(Jitter::None).into_policy(),
            ),
            (
                "aws_standard",
                aws(AwsJitter::Random).into_policy(),
                aws(AwsJitter::None).into_policy(),
            ),
            (
                "sns_delivery",
                sns(0.1).into_policy(),
                sns(0.0).into_policy(),
            ),
        ]
    }

    /// `calls` calls of the reference client of `policy` against 503s answered at once,
    /// observed by `nominal`.
    fn observe(policy: &dyn Policy, nominal: &mut Nominal, seed: u64, calls: u32) {
        let mut policy = policy.clone_box();
        let mut rng = Stream::new(seed, "client/0/jitter");
        for call_index in 0..calls {
            let client = ClientHistory {
                client_index: 0,
                call_index,
                attempts_before: 0,
            };
            let mut views: Vec<AttemptView> = Vec::new();
            let mut t = 0;
            loop {
                let n = views.len() as u32 + 1;
                let view = AttemptView::new(n, Observed::Status(503), t, Some(t), t);
                let decision = policy.decide(&view, &CallHistory::new(&views, &client), &mut rng);
                views.push(view);
                match decision {
                    Decision::Retry { delay, .. } => t += delay.as_millis() as u64,
                    Decision::Stop(_) => break,
                }
            }
            nominal.observe_calls(&[(client, &format!("call {call_index}"), &views)]);
        }
    }

    /// A client that jitters as its policy says is flagged with probability below 1e-9 per
    /// run: over these 6,000 runs, never.
    #[test]
    fn jittered_clients_are_not_flagged() {
        for (name, jittered, plain) in pairs() {
            for seed in 0..1000 {
                let mut nominal = Nominal::new(jittered.clone_box(), plain.clone_box());
                observe(jittered.as_ref(), &mut nominal, seed, 4);
                assert_eq!(nominal.finding(), None, "{name}, seed {seed}");
            }
        }
    }

    #[test]
    fn clients_with_their_jitter_off_are_flagged() {
        for (name, jittered, plain) in pairs() {
            let mut nominal = Nominal::new(jittered.clone_box(), plain.clone_box());
            observe(plain.as_ref(), &mut nominal, 7, 4);
            let finding = nominal.finding();
            assert!(
                finding
                    .as_ref()
                    .is_some_and(|f| f.starts_with("every one of the")),
                "{name}: {finding:?}"
            );
        }
    }

    #[test]
    fn one_call_of_short_delays_is_too_little_evidence() {
        let (_, jittered, plain) = pairs().remove(0);
        let mut nominal = Nominal::new(jittered.clone_box(), plain.clone_box());
        // 100ms, 200ms: a full jitter lands on both tops with probability 1/99 x 1/199.
        let calls = ExponentialConfig {
            max_attempts: 3,
            jitter: Jitter::None,
            ..ExponentialConfig::default()
        };
        observe(calls.into_policy().as_ref(), &mut nominal, 7, 1);
        assert_eq!(nominal.finding(), None);
    }
}
