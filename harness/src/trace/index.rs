//! Lookups over a whole trace, built in one pass, so that what visits every attempt (the
//! timeline, the JSON document, the checks) stays linear in the attempts instead of
//! searching the trace once per attempt.

use std::collections::BTreeMap;

use super::{Attempt, DecisionRecord, Effect, Trace};

/// For every attempt (by its position in [`Trace::attempts`]): its gap and its decision;
/// and for every call, its attempts and effects.
pub(crate) struct TraceIndex<'t> {
    trace: &'t Trace,
    /// `gap(n)` of the attempt at each position ([`Trace::gap_before`]).
    gaps: Vec<Option<u64>>,
    /// The first decision recorded after each attempt, by position in `trace.decisions`.
    decisions: BTreeMap<u32, usize>,
    /// The attempts of each (client, call), ordered by their number, by position.
    calls: BTreeMap<(u32, u32), Vec<usize>>,
    /// The effects attributed to each call id, in trace order, by position.
    effects: BTreeMap<u32, Vec<usize>>,
    /// The position of each attempt by its id. A map, not a dense vector, so that no
    /// assumption about how ids are numbered can make a lookup miss.
    by_id: BTreeMap<u32, usize>,
}

impl<'t> TraceIndex<'t> {
    /// Indexes `trace`: O(n log n) in its attempts, decisions and effects.
    pub(crate) fn new(trace: &'t Trace) -> Self {
        // (client, call, n) -> the last attempt with that number, as `gap_before` picks it.
        let mut numbered: BTreeMap<(u32, u32, u32), usize> = BTreeMap::new();
        let mut calls: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        let mut by_id = BTreeMap::new();
        for (i, a) in trace.attempts.iter().enumerate() {
            numbered.insert((a.client_id, a.call_id, a.n), i);
            calls.entry((a.client_id, a.call_id)).or_default().push(i);
            by_id.insert(a.id, i);
        }
        for attempts in calls.values_mut() {
            // Stable: attempts with one number keep their trace order.
            attempts.sort_by_key(|&i| trace.attempts[i].n);
        }
        let gaps = trace
            .attempts
            .iter()
            .map(|a| {
                let n = a.n.checked_sub(1)?;
                let previous = &trace.attempts[*numbered.get(&(a.client_id, a.call_id, n))?];
                Some(a.start_ms.saturating_sub(previous.end_ms?))
            })
            .collect();
        let mut decisions = BTreeMap::new();
        for (i, d) in trace.decisions.iter().enumerate() {
            decisions.entry(d.attempt_id).or_insert(i);
        }
        let mut effects: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, e) in trace.effects.iter().enumerate() {
            if let Some(call) = e.call_id {
                effects.entry(call).or_default().push(i);
            }
        }
        TraceIndex {
            trace,
            gaps,
            decisions,
            calls,
            effects,
            by_id,
        }
    }

    /// The attempt with this id.
    pub(crate) fn attempt(&self, id: u32) -> Option<&'t Attempt> {
        self.trace.attempts.get(*self.by_id.get(&id)?)
    }

    /// The gap before the attempt at `position`.
    pub(crate) fn gap(&self, position: usize) -> Option<u64> {
        self.gaps.get(position).copied().flatten()
    }

    /// The reference client's decision after attempt `id`, if it made one.
    pub(crate) fn decision(&self, id: u32) -> Option<&'t DecisionRecord> {
        let i = *self.decisions.get(&id)?;
        self.trace.decisions.get(i)
    }

    /// The attempts of one call, ordered by their number.
    pub(crate) fn attempts_of(&self, client: u32, call: u32) -> Vec<&'t Attempt> {
        self.calls
            .get(&(client, call))
            .map(|positions| positions.iter().map(|&i| &self.trace.attempts[i]).collect())
            .unwrap_or_default()
    }

    /// The effects attributed to call `call`, in trace order.
    pub(crate) fn effects_of(&self, call: u32) -> impl Iterator<Item = &'t Effect> + '_ {
        self.effects
            .get(&call)
            .into_iter()
            .flatten()
            .map(|&i| &self.trace.effects[i])
    }
}
