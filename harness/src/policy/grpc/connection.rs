//! `grpc_connection_backoff`: gRPC's Connection Backoff Protocol, start to start.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::policy::backoff::{capped_ns, spread_ns};
use crate::policy::generic::ConfigError;
use crate::policy::units::{duration_ns, fmt_ms, ns_to_ms};
use crate::policy::{
    Anchor, AttemptView, CallHistory, ClientHistory, Decision, Envelope, Observed, Policy,
    StopReason,
};
use crate::rng::Stream;

/// `INITIAL_BACKOFF`: 1 s.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// `MULTIPLIER`: 1.6.
pub const MULTIPLIER: f64 = 1.6;
/// `JITTER`: ±20 %.
pub const JITTER: f64 = 0.2;
/// `MAX_BACKOFF`: 120 s.
pub const MAX_BACKOFF: Duration = Duration::from_secs(120);
/// `MIN_CONNECT_TIMEOUT`: 20 s.
pub const MIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Parameters of `grpc_connection_backoff`, defaulting to the published constants.
///
/// The model (gRPC's `ConnectWithBackoff`):
/// - attempt `n` of a call is a connect attempt with a deadline `D(n)` after its start:
///   `D(1) = initial_backoff` exactly, and for `n >= 2`
///   `D(n) = min(initial_backoff × multiplier^(n-1), max_backoff) × uniform(1 - jitter,
///   1 + jitter)` (the cap applies before the jitter, so a delay may reach
///   `max_backoff × (1 + jitter)`);
/// - attempt `n` may run for `max(D(n), min_connect_timeout)`: the reference client gives up
///   on it then ([`Policy::attempt_timeout`]), or at the scenario's `attempt_timeout` when
///   that is shorter. **Model:** the harness's attempt has no separate connect phase, so the
///   connect timeout bounds the whole attempt;
/// - after a failed connect (a refused connect, a transport error or a timeout) the client
///   sleeps until the deadline: attempt `n + 1` starts at `max(start(n) + D(n), end(n))`,
///   measured from `start(n)` ([`Anchor::Start`]); an attempt that outlasted its deadline is
///   followed at once;
/// - an attempt that got a response has connected: a 2xx ends the call as a success, any
///   other status as `not_retryable` (what the RPC does next is `grpc_retry`'s business);
/// - `max_attempts` connect attempts in all, when set; unbounded otherwise (the scenario's
///   `limits` stop the run).
///
/// ```
/// use retrylab::policy::{GrpcConnectionConfig, NO_CLIENT_HISTORY, Policy};
/// use std::time::Duration;
///
/// let config = GrpcConnectionConfig::default();
/// assert_eq!(config.nominal_deadline(1), Duration::from_secs(1));
/// assert_eq!(config.nominal_deadline(2), Duration::from_millis(1600));
/// assert_eq!(config.nominal_deadline(3), Duration::from_millis(2560));
/// assert_eq!(config.nominal_deadline(30), Duration::from_secs(120));
/// let policy = config.into_policy();
/// assert_eq!(policy.attempt_timeout(&NO_CLIENT_HISTORY, 1), Some(Duration::from_secs(20)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcConnectionConfig {
    /// `INITIAL_BACKOFF` (1 s).
    pub initial_backoff: Duration,
    /// `MULTIPLIER` (1.6).
    pub multiplier: f64,
    /// `JITTER`, a fraction in [0, 1] (0.2).
    pub jitter: f64,
    /// `MAX_BACKOFF` (120 s).
    pub max_backoff: Duration,
    /// `MIN_CONNECT_TIMEOUT` (20 s).
    pub min_connect_timeout: Duration,
    /// Connect attempts in all, the first included (unbounded).
    pub max_attempts: Option<u32>,
}

impl Default for GrpcConnectionConfig {
    fn default() -> GrpcConnectionConfig {
        GrpcConnectionConfig {
            initial_backoff: INITIAL_BACKOFF,
            multiplier: MULTIPLIER,
            jitter: JITTER,
            max_backoff: MAX_BACKOFF,
            min_connect_timeout: MIN_CONNECT_TIMEOUT,
            max_attempts: None,
        }
    }
}

impl GrpcConnectionConfig {
    /// Checks the domain: `initial_backoff` positive and at most `max_backoff`, `multiplier`
    /// finite and at least 1, `jitter` in [0, 1], `max_attempts` at least 1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.initial_backoff.is_zero() {
            return ConfigError::refuse("initial_backoff", "must be positive".to_owned());
        }
        if self.initial_backoff > self.max_backoff {
            return ConfigError::refuse(
                "initial_backoff",
                format!(
                    "{} is above max_backoff {}",
                    fmt_ms(self.initial_backoff.as_millis() as u64),
                    fmt_ms(self.max_backoff.as_millis() as u64)
                ),
            );
        }
        if !(self.multiplier.is_finite() && self.multiplier >= 1.0) {
            return ConfigError::refuse(
                "multiplier",
                format!(
                    "must be a finite number of at least 1, got {}",
                    self.multiplier
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return ConfigError::refuse("jitter", format!("{} is not in [0, 1]", self.jitter));
        }
        if self.max_attempts == Some(0) {
            return ConfigError::refuse("max_attempts", "must be at least 1".to_owned());
        }
        Ok(())
    }

    /// `D(n)` before jitter: `initial_backoff` for `n = 1`, else
    /// `min(initial_backoff × multiplier^(n-1), max_backoff)`.
    pub fn nominal_deadline(&self, n: u32) -> Duration {
        Duration::from_nanos(self.nominal_ns(n))
    }

    fn nominal_ns(&self, n: u32) -> u64 {
        capped_ns(
            duration_ns(self.initial_backoff),
            self.multiplier,
            n.saturating_sub(1),
            duration_ns(self.max_backoff),
        )
    }

    /// The window of `D(n)` in nanoseconds: exact for the first attempt, jittered after.
    pub(crate) fn deadline_window_ns(&self, n: u32) -> (u64, u64) {
        let b = self.nominal_ns(n);
        if n <= 1 {
            (b, b)
        } else {
            spread_ns(b, self.jitter)
        }
    }

    /// The policy (not validated: out-of-domain values behave as documented on
    /// [`GrpcConnectionBackoff`], without panicking).
    pub fn into_policy(self) -> Box<dyn Policy> {
        Box::new(GrpcConnectionBackoff::new(self))
    }
}

/// The gRPC connection backoff; see [`GrpcConnectionConfig`] for the model.
///
/// A NaN or infinite growth reaches the cap; a jitter outside [0, 1] is clamped into it.
#[derive(Debug, Clone)]
pub struct GrpcConnectionBackoff {
    config: GrpcConnectionConfig,
    /// The reference client's draw of `D(n)` for the attempt each of its calls is about to
    /// make, as `(n, ns)` by call index: calls of one client may run at once, and each keeps
    /// its own draw. Only `decide` and `attempt_timeout` read it: the envelope works from the
    /// window, so `record`, which has no random stream, leaves it alone. A call's entry goes
    /// when the call stops.
    drawn: BTreeMap<u32, (u32, u64)>,
    /// The draw made by the decision made last, for the trace (none after a stop).
    shown: Option<(u32, u64)>,
}

impl GrpcConnectionBackoff {
    /// The policy for `config`.
    pub fn new(config: GrpcConnectionConfig) -> GrpcConnectionBackoff {
        GrpcConnectionBackoff {
            config,
            drawn: BTreeMap::new(),
            shown: None,
        }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &GrpcConnectionConfig {
        &self.config
    }

    /// Why the call stops after `ctx`, if it does.
    fn stop(&self, ctx: &AttemptView) -> Option<StopReason> {
        match ctx.outcome {
            Observed::Status(_) if ctx.outcome.is_success() => Some(StopReason::Success),
            Observed::Status(_) => Some(StopReason::NotRetryable),
            Observed::Timeout | Observed::Transport(_) | Observed::Refused => self
                .config
                .max_attempts
                .filter(|max| ctx.n >= *max)
                .map(|_| StopReason::MaxAttemptsExceeded),
        }
    }

    /// `D(n)` as drawn for attempt `n` of call `call`, drawing it now when it was not drawn
    /// before.
    fn deadline_ns(&mut self, call: u32, n: u32, rng: &mut Stream) -> u64 {
        match self.drawn.get(&call) {
            Some(&(m, ns)) if m == n => ns,
            _ => {
                let (lo, hi) = self.config.deadline_window_ns(n);
                rng.uniform_u64(lo, hi)
            }
        }
    }
}

impl Policy for GrpcConnectionBackoff {
    fn name(&self) -> &'static str {
        "grpc_connection_backoff"
    }

    fn decide(
        &mut self,
        ctx: &AttemptView,
        history: &CallHistory<'_>,
        rng: &mut Stream,
    ) -> Decision {
        let call = history.client.call_index;
        if let Some(reason) = self.stop(ctx) {
            self.drawn.remove(&call);
            self.shown = None;
            return Decision::Stop(reason);
        }
        let deadline_ms = ns_to_ms(self.deadline_ns(call, ctx.n, rng));
        // The next attempt's deadline is set before its connect starts: draw it now, so
        // that its connect timeout is known.
        let next = ctx.n.saturating_add(1);
        let (lo, hi) = self.config.deadline_window_ns(next);
        let drawn = (next, rng.uniform_u64(lo, hi));
        self.drawn.insert(call, drawn);
        self.shown = Some(drawn);
        let ran_ms = ctx.end_ms.saturating_sub(ctx.start_ms);
        Decision::Retry {
            delay: Duration::from_millis(deadline_ms.max(ran_ms)),
            measured_from: Anchor::Start,
        }
    }

    fn envelope(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Envelope {
        if let Some(reason) = self.stop(ctx) {
            return Envelope::MustStop(reason);
        }
        let (lo_ns, hi_ns) = self.config.deadline_window_ns(ctx.n);
        let (lo, hi) = (ns_to_ms(lo_ns), ns_to_ms(hi_ns));
        // An attempt that ran past its deadline is followed at once.
        let ran_ms = ctx.end_ms.saturating_sub(ctx.start_ms);
        Envelope::Retry {
            min_ms: lo.max(ran_ms),
            max_ms: hi.max(ran_ms),
            from: Anchor::Start,
            optional: false,
            not_before: None,
            uniform: hi > lo && ran_ms <= lo,
        }
    }

    fn describe_state(&self) -> Option<String> {
        self.shown
            .map(|(n, ns)| format!("attempt {n} deadline: start + {}", fmt_ms(ns_to_ms(ns))))
    }

    fn max_attempts(&self) -> Option<u32> {
        self.config.max_attempts
    }

    fn attempt_timeout(&self, client: &ClientHistory, n: u32) -> Option<Duration> {
        let deadline_ns = match self.drawn.get(&client.call_index) {
            Some(&(m, ns)) if m == n => ns,
            // Not drawn (the first attempt, or a policy not driven by `decide`): the top of
            // the window, so that no connect is cut before its latest deadline.
            _ => self.config.deadline_window_ns(n).1,
        };
        Some(Duration::from_millis(ns_to_ms(deadline_ns)).max(self.config.min_connect_timeout))
    }

    fn min_attempt_ms(&self, ctx: &AttemptView, _history: &CallHistory<'_>) -> Option<u64> {
        // Its deadline may have been drawn anywhere in its window: the lowest is what every
        // correct client waits for at least, and never less than the minimum connect timeout.
        let lo = ns_to_ms(self.config.deadline_window_ns(ctx.n).0);
        Some(lo.max(ns_to_ms(duration_ns(self.config.min_connect_timeout))))
    }

    fn clone_box(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
