//! The recorder: the one place where harness surfaces write what they see during a run.
//!
//! Surfaces (`env.http_client()`, the connector) call into a shared [`Recorder`]; at the end
//! of the run it is joined with the network log and the endpoints' ledgers into a
//! [`Trace`](crate::trace::Trace). Recording is allocation-light: names are interned and
//! records are small `Copy` structs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use retrylab_endpoints::VirtualClock;
use tokio::sync::Notify;

use crate::trace::{
    Attempt, AttemptOutcome, ConnUse, DecisionKind, DecisionRecord, EndKind, Interner, Name,
};

/// Shared, cloneable handle on a run's records.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Mutex<State>>,
    clock: VirtualClock,
    stop: Arc<Notify>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    interner: Interner,
    attempts: Vec<Attempt>,
    decisions: Vec<DecisionRecord>,
    /// Next attempt number within each (client, call).
    next_n: BTreeMap<(u32, u32), u32>,
    /// The attempt whose request future is being polled: a connect started now is its.
    current: Option<u32>,
    /// Connections opened on behalf of an attempt: conn id -> attempt id.
    opened_by: BTreeMap<u64, u32>,
    /// Attempts with a connect in progress.
    connecting: BTreeMap<u32, ()>,
    /// Attempts seen per connection, to tell new from reused.
    used: BTreeMap<u64, u32>,
    max_attempts: Option<u64>,
    limit_hit: bool,
}

/// Why a run was stopped from inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// `limits.max_client_attempts` was reached.
    AttemptLimit,
}

impl Recorder {
    /// A recorder on `clock`, stopping the run after `max_attempts` attempts.
    pub fn new(clock: VirtualClock, max_attempts: Option<u64>) -> Recorder {
        Recorder {
            inner: Arc::new(Mutex::new(State {
                max_attempts,
                ..State::default()
            })),
            clock,
            stop: Arc::new(Notify::new()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock only ever comes from a bug in the harness; the data
        // is append-only, so it stays usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The virtual clock of the run.
    pub fn clock(&self) -> &VirtualClock {
        &self.clock
    }

    /// Resolves when the run must stop (a limit was hit).
    pub async fn stopped(&self) -> StopCause {
        loop {
            if self.state().limit_hit {
                return StopCause::AttemptLimit;
            }
            self.stop.notified().await;
        }
    }

    /// Interns a name.
    pub fn intern(&self, text: &str) -> Name {
        self.state().interner.intern(text)
    }

    /// Starts an attempt of `call_id` by `client_id` now; returns its id.
    pub fn begin(&self, client_id: u32, call_id: u32, method: &str, path: &str) -> u32 {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let method = state.interner.intern(method);
        let path = state.interner.intern(path);
        let id = state.attempts.len() as u32 + 1;
        let n = {
            let next = state.next_n.entry((client_id, call_id)).or_insert(1);
            let n = *next;
            *next += 1;
            n
        };
        state.attempts.push(Attempt {
            id,
            client_id,
            call_id,
            n,
            conn_id: None,
            conn: ConnUse::Unknown,
            method,
            path,
            start_ms: now,
            head_ms: None,
            end_ms: None,
            outcome: AttemptOutcome::Unfinished,
            end: EndKind::Unfinished,
            body_error: None,
            retry_after: None,
            resent: false,
            reconstructed: false,
        });
        if let Some(max) = state.max_attempts {
            if u64::from(id) >= max && !state.limit_hit {
                state.limit_hit = true;
                drop(state);
                self.stop.notify_waiters();
            }
        }
        id
    }

    /// Marks `attempt` as the one being polled (or none), so a connect it triggers is its.
    pub fn set_current(&self, attempt: Option<u32>) {
        self.state().current = attempt;
    }

    /// A connect started; returns the attempt it is for, if any.
    pub fn connect_started(&self) -> Option<u32> {
        let mut state = self.state();
        let current = state.current;
        if let Some(id) = current {
            state.connecting.insert(id, ());
        }
        current
    }

    /// A connect started for `attempt` finished, opening `conn_id` on success.
    pub fn connect_finished(&self, attempt: Option<u32>, conn_id: Option<u64>) {
        let mut state = self.state();
        if let Some(id) = attempt {
            state.connecting.remove(&id);
            if let Some(conn) = conn_id {
                state.opened_by.insert(conn, id);
            }
        }
    }

    /// `attempt` failed on `conn_id` before a head arrived: new if the connection was opened
    /// for it, reused otherwise.
    pub fn failed_on(&self, attempt: u32, conn_id: u64) {
        let mut state = self.state();
        let opened_here = state.opened_by.get(&conn_id) == Some(&attempt);
        let seen = state.used.entry(conn_id).or_insert(0);
        *seen += 1;
        let conn = if opened_here || *seen == 1 {
            ConnUse::New
        } else {
            ConnUse::Reused
        };
        if let Some(a) = attempt_mut(&mut state, attempt) {
            a.conn_id = Some(conn_id);
            a.conn = conn;
        }
    }

    /// The response head of `attempt` arrived now, on `conn_id`.
    pub fn head(&self, attempt: u32, status: u16, conn_id: Option<u64>, retry_after: Option<&str>) {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let retry_after = retry_after.map(|text| state.interner.intern(text));
        let conn_use = conn_id.map(|conn| {
            let seen = state.used.entry(conn).or_insert(0);
            *seen += 1;
            if *seen == 1 {
                ConnUse::New
            } else {
                ConnUse::Reused
            }
        });
        if let Some(a) = attempt_mut(&mut state, attempt) {
            a.head_ms = Some(now);
            a.outcome = AttemptOutcome::Status(status);
            a.conn_id = conn_id;
            a.conn = conn_use.unwrap_or(ConnUse::Unknown);
            a.retry_after = retry_after;
        }
    }

    /// The attempt ended now, with `end`; `failure` replaces the outcome when the attempt
    /// failed before a head arrived (or broke while its body was read).
    pub fn end(&self, attempt: u32, end: EndKind, failure: Option<AttemptOutcome>) {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let connecting = state.connecting.contains_key(&attempt);
        if let Some(a) = attempt_mut(&mut state, attempt) {
            if a.end_ms.is_some() {
                return;
            }
            a.end_ms = Some(now);
            a.end = end;
            match failure {
                Some(AttemptOutcome::Abandoned) if connecting => {
                    a.outcome = AttemptOutcome::ConnectAbandoned
                }
                Some(outcome) if a.head_ms.is_none() => a.outcome = outcome,
                // A failure after the head keeps the status: the body broke.
                Some(outcome) => a.body_error = Some(outcome),
                None => {}
            }
        }
    }

    /// Records the reference client's decision after `attempt_id`.
    pub fn decision(&self, attempt_id: u32, kind: DecisionKind, state: Option<&str>) {
        let at_ms = self.clock.now_ms();
        let mut state_guard = self.state();
        let state = state.map(|text| state_guard.interner.intern(text));
        state_guard.decisions.push(DecisionRecord {
            attempt_id,
            at_ms,
            kind,
            state,
        });
    }

    /// How many attempts have started.
    pub fn attempt_count(&self) -> u32 {
        self.state().attempts.len() as u32
    }

    /// A copy of attempt `id` as recorded so far.
    pub fn attempt(&self, id: u32) -> Option<Attempt> {
        let mut state = self.state();
        attempt_mut(&mut state, id).copied()
    }

    /// Takes the decisions recorded so far.
    pub fn take_decisions(&self) -> Vec<DecisionRecord> {
        std::mem::take(&mut self.state().decisions)
    }

    /// Takes the recorded attempts and names, filling in connections known only from
    /// connects (attempts that failed before a response named its connection).
    pub fn finish(&self) -> (Vec<Attempt>, Vec<String>) {
        let mut state = self.state();
        let state = &mut *state;
        // Only attempts that failed before a response named their connection need this.
        let mut by_attempt: BTreeMap<u32, u64> = BTreeMap::new();
        if state.attempts.iter().any(|a| a.conn_id.is_none()) {
            for (conn, attempt) in &state.opened_by {
                by_attempt.entry(*attempt).or_insert(*conn);
            }
        }
        for a in &mut state.attempts {
            if a.conn_id.is_none() {
                if let Some(conn) = by_attempt.get(&a.id) {
                    a.conn_id = Some(*conn);
                    a.conn = ConnUse::New;
                }
            }
            if a.end_ms.is_none() {
                a.end = EndKind::Unfinished;
            }
        }
        (
            std::mem::take(&mut state.attempts),
            std::mem::take(&mut state.interner).into_names(),
        )
    }
}

fn attempt_mut(state: &mut State, id: u32) -> Option<&mut Attempt> {
    state.attempts.get_mut((id as usize).checked_sub(1)?)
}
