//! The recorder: the one place where harness surfaces write what they see during a run.
//!
//! Surfaces (`env.http_client()`, the connector) call into a shared [`Recorder`]; at the end
//! of the run it is joined with the network log and the endpoints' ledgers into a
//! [`Trace`](crate::trace::Trace). Recording is allocation-light: names are interned and
//! records are small `Copy` structs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use retrylab_endpoints::VirtualClock;

use crate::backend::AttemptLimit;
use crate::trace::{
    Attempt, AttemptOutcome, ConnUse, DecisionKind, DecisionRecord, EndKind, Interner, Name,
};

/// Shared, cloneable handle on a run's records.
#[derive(Clone)]
pub(crate) struct Recorder {
    /// One allocation for all of it: an attempt clones the handle a few times (its request
    /// future, its guard, its body), and each clone is one reference count.
    shared: Arc<Shared>,
}

/// What every handle of one run shares.
struct Shared {
    state: Mutex<State>,
    /// The attempt whose request future is being polled, plus one (0: none): a connect
    /// started now is its. Set and cleared around every poll, so kept out of the lock.
    current: AtomicU64,
    /// Attempts recorded so far, kept out of the lock: the watchdog reads it on every poll
    /// of a call.
    started: AtomicU32,
    clock: VirtualClock,
    /// The run's attempt budget, shared with the endpoints.
    limit: AttemptLimit,
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
    /// Connections opened on behalf of an attempt: conn id -> attempt id.
    opened_by: DenseMap<u32>,
    /// Whether each attempt (by id) has a connect in progress: by id rather than in a tree,
    /// which allocated a node and freed it again for every connection.
    connecting: DenseMap<bool>,
    /// Attempts seen per connection, to tell new from reused.
    used: DenseMap<u32>,
    /// The connection hyper-util last put each attempt's request on (by attempt id).
    placed_on: DenseMap<u64>,
    /// The client of a fleet each connection was opened by, for the clients other than the
    /// first (conn id -> client index); a rebuilt attempt on none of them is client 0's.
    client_of_conn: BTreeMap<u64, u32>,
    /// The virtual instant read last and its milliseconds: an attempt's head, its end and
    /// the decision after it often come at one instant, whose milliseconds are then not
    /// worked out again.
    last_read: Option<(tokio::time::Instant, u64)>,
}

impl State {
    /// Virtual milliseconds now on `clock`.
    fn now_ms(&mut self, clock: &VirtualClock) -> u64 {
        let at = tokio::time::Instant::now();
        match self.last_read {
            Some((last, ms)) if last == at => ms,
            _ => {
                let ms = clock.ms_at(at);
                self.last_read = Some((at, ms));
                ms
            }
        }
    }
}

/// Why a run was stopped from inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopCause {
    /// `limits.max_client_attempts` was reached.
    AttemptLimit,
}

impl Recorder {
    /// A recorder on `clock`, whose attempts count against `limit`.
    pub(crate) fn new(clock: VirtualClock, limit: AttemptLimit) -> Recorder {
        Recorder {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                current: AtomicU64::new(0),
                started: AtomicU32::new(0),
                clock,
                limit,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock only ever comes from a bug in the harness; the data
        // is append-only, so it stays usable.
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The virtual clock of the run.
    pub(crate) fn clock(&self) -> &VirtualClock {
        &self.shared.clock
    }

    /// Resolves when the run must stop (a limit was hit).
    pub(crate) async fn stopped(&self) -> StopCause {
        self.shared.limit.reached().await;
        StopCause::AttemptLimit
    }

    /// Interns a name.
    pub(crate) fn intern(&self, text: &str) -> Name {
        self.state().interner.intern(text)
    }

    /// Starts an attempt of `call_id` by `client_id` now; returns its id, or `None` when the
    /// attempt is past `limits.max_client_attempts`: then it is not recorded, must not be
    /// sent, and the run stops.
    pub(crate) fn begin(
        &self,
        client_id: u32,
        call_id: u32,
        method: &str,
        path: &str,
    ) -> Option<u32> {
        if !self.shared.limit.take() {
            return None;
        }
        let mut state = self.state();
        let now = state.now_ms(&self.shared.clock);
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
            stream_id: None,
            method,
            path,
            start_ms: now,
            head_ms: None,
            end_ms: None,
            outcome: AttemptOutcome::Unfinished,
            end: EndKind::Unfinished,
            body_error: None,
            retry_after: None,
            amz_retry_after: None,
            resent: false,
            reconstructed: false,
            answered_by: None,
            grpc: None,
        });
        // Under the lock, so the count never runs ahead of the attempts recorded.
        self.shared.started.store(id, Ordering::Relaxed);
        Some(id)
    }

    /// Marks `attempt` as the one being polled (or none), so a connect it triggers is its.
    pub(crate) fn set_current(&self, attempt: Option<u32>) {
        let stored = attempt.map_or(0, |id| u64::from(id) + 1);
        self.shared.current.store(stored, Ordering::Relaxed);
    }

    /// A connect of `conn_id` started; returns the attempt it is for, if any.
    pub(crate) fn connect_started(&self, conn_id: Option<u64>) -> Option<u32> {
        let current = self.shared.current.load(Ordering::Relaxed).checked_sub(1);
        if let Some(id) = current {
            // The id came from a u32.
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            let mut state = self.state();
            state.connecting.insert(u64::from(id), true);
            // Recorded now, so an abandoned connect still names its connection.
            if let Some(conn) = conn_id {
                state.opened_by.insert(conn, id);
            }
            return Some(id);
        }
        None
    }

    /// Connection `conn_id` was opened by client `client_id` of the run.
    pub(crate) fn conn_of_client(&self, conn_id: u64, client_id: u32) {
        if client_id != 0 {
            self.state().client_of_conn.insert(conn_id, client_id);
        }
    }

    /// The clients other than the first that opened connections, by connection id.
    pub(crate) fn take_clients_of_conns(&self) -> BTreeMap<u64, u32> {
        std::mem::take(&mut self.state().client_of_conn)
    }

    /// A connect started for `attempt` finished, opening `conn_id` on success.
    pub(crate) fn connect_finished(&self, attempt: Option<u32>, conn_id: Option<u64>) {
        let mut state = self.state();
        if let Some(id) = attempt {
            state.connecting.insert(u64::from(id), false);
            if let Some(conn) = conn_id {
                state.opened_by.insert(conn, id);
            }
        }
    }

    /// The request of `attempt` was put on `conn_id` (again, on another connection, when
    /// `resent`). Names the connection of an attempt abandoned before its head.
    pub(crate) fn on_conn(&self, attempt: u32, conn_id: u64, resent: bool) {
        let mut state = self.state();
        state.placed_on.insert(u64::from(attempt), conn_id);
        if let Some(a) = attempt_mut(&mut state, attempt) {
            a.resent |= resent;
        }
    }

    /// Whether hyper-util has put `attempt`'s request on a connection yet (an open one: a
    /// connect timeout runs only until then).
    #[cfg(feature = "aws")]
    pub(crate) fn is_placed(&self, attempt: u32) -> bool {
        self.state().placed_on.get(u64::from(attempt)).is_some()
    }

    /// `attempt` failed on `conn_id` before a head arrived: new if the connection was opened
    /// for it, reused otherwise.
    pub(crate) fn failed_on(&self, attempt: u32, conn_id: u64) {
        assign_conn(&mut self.state(), attempt, conn_id);
    }

    /// The response head of `attempt` arrived now, on `conn_id`.
    pub(crate) fn head(
        &self,
        attempt: u32,
        status: u16,
        conn_id: Option<u64>,
        retry_after: Option<&str>,
        amz_retry_after: Option<&str>,
    ) {
        let mut state = self.state();
        let now = state.now_ms(&self.shared.clock);
        let retry_after = retry_after.map(|text| state.interner.intern(text));
        let amz_retry_after = amz_retry_after.map(|text| state.interner.intern(text));
        let conn_use = conn_id.map(|conn| {
            let seen = state.used.get_or_insert(conn, 0);
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
            a.amz_retry_after = amz_retry_after;
        }
    }

    /// The attempt ended now, with `end`; `failure` replaces the outcome when the attempt
    /// failed before a head arrived (or broke while its body was read).
    pub(crate) fn end(&self, attempt: u32, end: EndKind, failure: Option<AttemptOutcome>) {
        let mut state = self.state();
        let now = state.now_ms(&self.shared.clock);
        let connecting = state.connecting.get(u64::from(attempt)) == Some(true);
        let unnamed = attempt_mut(&mut state, attempt).is_some_and(|a| a.conn_id.is_none());
        if let (true, Some(conn)) = (unnamed, state.placed_on.get(u64::from(attempt))) {
            assign_conn(&mut state, attempt, conn);
        }
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
    pub(crate) fn decision(&self, attempt_id: u32, kind: DecisionKind, state: Option<&str>) {
        let mut state_guard = self.state();
        let at_ms = state_guard.now_ms(&self.shared.clock);
        let state = state.map(|text| state_guard.interner.intern(text));
        state_guard.decisions.push(DecisionRecord {
            attempt_id,
            at_ms,
            kind,
            state,
        });
    }

    /// How many attempts have started.
    pub(crate) fn attempt_count(&self) -> u32 {
        self.shared.started.load(Ordering::Relaxed)
    }

    /// A copy of attempt `id` as recorded so far.
    pub(crate) fn attempt(&self, id: u32) -> Option<Attempt> {
        let mut state = self.state();
        attempt_mut(&mut state, id).copied()
    }

    /// Takes the decisions recorded so far.
    pub(crate) fn take_decisions(&self) -> Vec<DecisionRecord> {
        std::mem::take(&mut self.state().decisions)
    }

    /// Takes the recorded attempts and names, filling in connections known only from
    /// connects (attempts that failed before a response named its connection).
    pub(crate) fn finish(&self) -> (Vec<Attempt>, Vec<String>) {
        let mut state = self.state();
        let state = &mut *state;
        // Only attempts that failed before a response named their connection need this.
        let mut by_attempt: BTreeMap<u32, u64> = BTreeMap::new();
        if state.attempts.iter().any(|a| a.conn_id.is_none()) {
            for (conn, attempt) in state.opened_by.sorted() {
                by_attempt.entry(attempt).or_insert(conn);
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

/// Names the connection of an attempt that got no head on it: new if it was opened for the
/// attempt (or carries its first request), reused otherwise.
fn assign_conn(state: &mut State, attempt: u32, conn_id: u64) {
    let opened_here = state.opened_by.get(conn_id) == Some(attempt);
    let seen = state.used.get_or_insert(conn_id, 0);
    *seen += 1;
    let conn = if opened_here || *seen == 1 {
        ConnUse::New
    } else {
        ConnUse::Reused
    };
    if let Some(a) = attempt_mut(state, attempt) {
        a.conn_id = Some(conn_id);
        a.conn = conn;
    }
}

/// A map keyed by connection or attempt id. Both count up from 1, so a vector indexed by id
/// holds them (a `BTreeMap` costs a search per access and a node per few entries, which adds
/// up over a run of 100,000 attempts); an id far past the others goes to a sparse map.
#[derive(Debug)]
struct DenseMap<V> {
    slots: Vec<Option<V>>,
    sparse: BTreeMap<u64, V>,
}

impl<V> Default for DenseMap<V> {
    fn default() -> Self {
        DenseMap {
            slots: Vec::new(),
            sparse: BTreeMap::new(),
        }
    }
}

impl<V: Copy> DenseMap<V> {
    /// How far past the end of `slots` an id may be and still grow them.
    const MAX_GAP: usize = 1 << 16;

    /// The slot of `id`, growing the slots for it if it is dense enough; `None` if `id`
    /// lives in the sparse map (once there, always there).
    fn slot(&mut self, id: u64) -> Option<&mut Option<V>> {
        if !self.sparse.is_empty() && self.sparse.contains_key(&id) {
            return None;
        }
        let index = usize::try_from(id).ok()?;
        if index >= self.slots.len() {
            if index - self.slots.len() > Self::MAX_GAP {
                return None;
            }
            self.slots.resize_with(index + 1, || None);
        }
        self.slots.get_mut(index)
    }

    fn insert(&mut self, id: u64, value: V) {
        match self.slot(id) {
            Some(slot) => *slot = Some(value),
            None => {
                self.sparse.insert(id, value);
            }
        }
    }

    fn get(&self, id: u64) -> Option<V> {
        let dense = usize::try_from(id).ok().and_then(|i| *self.slots.get(i)?);
        dense.or_else(|| self.sparse.get(&id).copied())
    }

    fn get_or_insert(&mut self, id: u64, default: V) -> &mut V {
        if self.slot(id).is_some() {
            // `slot` succeeded just above, so it does again.
            let index = usize::try_from(id).unwrap_or(usize::MAX);
            return self.slots[index].get_or_insert(default);
        }
        self.sparse.entry(id).or_insert(default)
    }

    /// Every entry, by ascending id.
    fn sorted(&self) -> Vec<(u64, V)> {
        let mut entries: Vec<(u64, V)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i as u64, (*v)?)))
            .chain(self.sparse.iter().map(|(k, v)| (*k, *v)))
            .collect();
        if !self.sparse.is_empty() {
            entries.sort_by_key(|(id, _)| *id);
        }
        entries
    }
}

fn attempt_mut(state: &mut State, id: u32) -> Option<&mut Attempt> {
    state.attempts.get_mut((id as usize).checked_sub(1)?)
}

#[cfg(test)]
mod tests {
    use super::DenseMap;

    #[test]
    fn dense_map_keeps_every_id_and_sorts_them() {
        let mut map: DenseMap<u32> = DenseMap::default();
        map.insert(3, 30);
        map.insert(1, 10);
        *map.get_or_insert(2, 0) += 20;
        *map.get_or_insert(2, 0) += 1;
        // Far past the others: kept aside, and stays there when the dense part grows past it.
        let far = (DenseMap::<u32>::MAX_GAP as u64) * 4;
        map.insert(far, 7);
        for id in 4..far + 3 {
            if id % 1000 == 0 {
                map.insert(id, 1);
            }
        }
        map.insert(far, 8);
        assert_eq!(map.get(1), Some(10));
        assert_eq!(map.get(2), Some(21));
        assert_eq!(map.get(4), None);
        assert_eq!(map.get(far), Some(8));
        assert_eq!(map.get(u64::MAX), None);
        let sorted = map.sorted();
        assert!(sorted.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(&sorted[..3], &[(1, 10), (2, 21), (3, 30)]);
        assert!(sorted.contains(&(far, 8)));
    }
}
