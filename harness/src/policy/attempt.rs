//! What a policy sees of one attempt ([`AttemptView`]) and of what came before it
//! ([`CallHistory`], [`ClientHistory`]).

use std::io;

use super::Anchor;
use super::retry_after::{NotBefore, RetryAfterValue};

/// The virtual wall clock at instant 0 when a scenario sets no `epoch:`: the endpoints' own
/// constant, so that the policies and the endpoints read one clock.
pub use retrylab_endpoints::DEFAULT_EPOCH_UNIX_MS;

/// What an attempt came to, as far as a retry policy cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed {
    /// A response head arrived with this status.
    Status(u16),
    /// The client gave up waiting (its attempt timeout, or a connect that never completed).
    Timeout,
    /// A transport error surfaced (reset, close before the head, ...), by kind.
    Transport(io::ErrorKind),
    /// The connect was refused (RST in answer to the SYN).
    Refused,
}

impl Observed {
    /// True for a 2xx status: the call succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self, Observed::Status(200..=299))
    }

    /// The outcome as a noun without an article, for messages: `503`, `timeout`,
    /// `transport error (ConnectionReset)`, `refused connection`.
    pub fn noun(&self) -> String {
        match self {
            Observed::Status(status) => status.to_string(),
            Observed::Timeout => "timeout".to_string(),
            Observed::Transport(kind) => format!("transport error ({kind:?})"),
            Observed::Refused => "refused connection".to_string(),
        }
    }
}

/// One attempt of a call, in virtual milliseconds since the run started (docs/architecture.md#attempts-time-and-ordering).
///
/// Built by the reference client as it runs, or from a trace for the conformance check.
/// Header names are stored lower-case so that policies compare them without case folding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptView {
    /// The attempt number within its call, 1-based.
    pub n: u32,
    /// What the attempt came to.
    pub outcome: Observed,
    /// `start(n)`: the call instant on the client's surface.
    pub start_ms: u64,
    /// `head(n)`: the response head reached the client; `None` when none did.
    pub head_ms: Option<u64>,
    /// `end(n)`: last body byte, response dropped, or transport error.
    pub end_ms: u64,
    /// The parsed `Retry-After` of the response, if it had one.
    pub retry_after: Option<RetryAfterValue>,
    /// The virtual wall clock (Unix milliseconds) at `head(n)`, or at `end(n)` when there was
    /// no head. HTTP-dates are compared with it.
    pub now_system_ms: i64,
    /// Response headers that pushback-aware policies read (`x-amz-retry-after`,
    /// `grpc-retry-pushback-ms`, ...), names lower-case, in arrival order, repeats kept.
    pub headers: Vec<(String, String)>,
    /// A service error code from the response, when the recorder extracted one (an AWS
    /// `ThrottlingException`, a broker's `530`), for policies that classify by code.
    pub error_code: Option<String>,
}

impl AttemptView {
    /// An attempt with no `Retry-After`, no extra headers and the virtual wall clock of the
    /// default epoch.
    ///
    /// ```
    /// use retrylab::policy::{AttemptView, Observed};
    ///
    /// let a = AttemptView::new(1, Observed::Status(503), 0, Some(10), 12);
    /// assert_eq!(a.now_system_ms, 1_767_225_600_010); // 2026-01-01T00:00:00.010Z
    /// ```
    pub fn new(
        n: u32,
        outcome: Observed,
        start_ms: u64,
        head_ms: Option<u64>,
        end_ms: u64,
    ) -> AttemptView {
        let at = head_ms.unwrap_or(end_ms);
        AttemptView {
            n,
            outcome,
            start_ms,
            head_ms,
            end_ms,
            retry_after: None,
            now_system_ms: i64::try_from(DEFAULT_EPOCH_UNIX_MS.saturating_add(at))
                .unwrap_or(i64::MAX),
            headers: Vec::new(),
            error_code: None,
        }
    }

    /// The same attempt with this `Retry-After`.
    pub fn with_retry_after(mut self, value: RetryAfterValue) -> AttemptView {
        self.retry_after = Some(value);
        self
    }

    /// The same attempt with the virtual wall clock at its head set to `unix_ms`.
    pub fn with_system_ms(mut self, unix_ms: i64) -> AttemptView {
        self.now_system_ms = unix_ms;
        self
    }

    /// The same attempt with one more response header (the name is stored lower-case).
    pub fn with_header(mut self, name: &str, value: &str) -> AttemptView {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// The same attempt with a service error code.
    pub fn with_error_code(mut self, code: &str) -> AttemptView {
        self.error_code = Some(code.to_string());
        self
    }

    /// Every value of the header `name` (any case), in arrival order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The virtual instant a delay measured `from` this attempt starts at. Without a head,
    /// `Anchor::Head` falls back to the end: nothing earlier was seen.
    pub fn anchor_ms(&self, from: Anchor) -> u64 {
        match from {
            Anchor::End => self.end_ms,
            Anchor::Head => self.head_ms.unwrap_or(self.end_ms),
            Anchor::Start => self.start_ms,
        }
    }

    /// The virtual wall clock (Unix ms) at the virtual instant `instant_ms`, derived from
    /// [`AttemptView::now_system_ms`] (the wall clock advances with virtual time).
    pub fn system_ms_at(&self, instant_ms: u64) -> i64 {
        let at_head = self.head_ms.unwrap_or(self.end_ms);
        let offset = i128::from(instant_ms) - i128::from(at_head);
        clamp_i64(i128::from(self.now_system_ms) + offset)
    }
}

/// Saturates an `i128` into `i64`: the wall-clock arithmetic above never overflows for real
/// values, and saturating keeps absurd ones ordered.
pub(crate) fn clamp_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// What a client has done before the current call: the per-client scope that quota policies
/// (AWS retry quota, gRPC retry throttling) live in.
///
/// The quota itself is state of the policy instance (one per client, replayed with
/// [`super::Policy::record`]); this struct only says where in the client's life a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientHistory {
    /// The client's index in a fleet (0 for a single client).
    pub client_index: u32,
    /// The 0-based index of the current call among the client's calls.
    pub call_index: u32,
    /// Attempts the client made in its earlier calls.
    pub attempts_before: u64,
}

impl ClientHistory {
    /// Moves past a call of `attempts` attempts: the next call is the client's next, with
    /// those attempts behind it.
    pub(crate) fn call_done(&mut self, attempts: usize) {
        self.call_index = self.call_index.saturating_add(1);
        self.attempts_before = self.attempts_before.saturating_add(attempts as u64);
    }
}

/// The empty client history of a first call, for callers without a fleet.
pub const NO_CLIENT_HISTORY: ClientHistory = ClientHistory {
    client_index: 0,
    call_index: 0,
    attempts_before: 0,
};

/// The attempts of the current call before the one being decided on, plus the client scope.
#[derive(Debug, Clone, Copy)]
pub struct CallHistory<'a> {
    /// Attempts 1..n-1 of this call, in order.
    pub previous: &'a [AttemptView],
    /// Where this call sits in its client's life.
    pub client: &'a ClientHistory,
}

impl<'a> CallHistory<'a> {
    /// The history of a call whose earlier attempts are `previous`.
    pub fn new(previous: &'a [AttemptView], client: &'a ClientHistory) -> CallHistory<'a> {
        CallHistory { previous, client }
    }

    /// The history before the first attempt of a first call.
    pub fn empty() -> CallHistory<'static> {
        CallHistory {
            previous: &[],
            client: &NO_CLIENT_HISTORY,
        }
    }

    /// The delay the client actually took before `ctx`, measured `from` the previous attempt
    /// (`None` for the first attempt). A negative gap (attempts overlapping) counts as 0.
    ///
    /// Stateful policies use this, not their own memory, so that the envelope follows what
    /// the client under test did rather than what the reference client would have done.
    pub fn observed_delay_ms(&self, ctx: &AttemptView, from: Anchor) -> Option<u64> {
        self.previous
            .last()
            .map(|prev| ctx.start_ms.saturating_sub(prev.anchor_ms(from)))
    }
}

/// The floor a valid `Retry-After` on `ctx` puts under the next start: delay-seconds from
/// `head(n)`; an HTTP-date converted to the virtual instant at which the virtual wall clock
/// reaches it (a date already past floors at `head(n)`, i.e. "no wait"). `None` without a
/// valid value.
pub fn retry_after_floor(ctx: &AttemptView) -> Option<NotBefore> {
    let head = ctx.head_ms.unwrap_or(ctx.end_ms);
    let at_ms = match ctx.retry_after.as_ref()? {
        RetryAfterValue::Seconds(s) => head.saturating_add(s.saturating_mul(1000)),
        RetryAfterValue::Date(unix_s) => {
            let wait = i128::from(*unix_s) * 1000 - i128::from(ctx.now_system_ms);
            let at = i128::from(head) + wait.max(0);
            u64::try_from(clamp_i64(at)).unwrap_or(u64::MAX)
        }
        RetryAfterValue::Invalid(_) => return None,
    };
    Some(NotBefore {
        header: "Retry-After",
        value: ctx
            .retry_after
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_default(),
        at_ms,
    })
}
