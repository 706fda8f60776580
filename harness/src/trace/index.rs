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
    decisions: ById,
    /// The attempts of each (client, call), ordered by their number, by position.
    calls: BTreeMap<(u32, u32), Vec<usize>>,
    /// The effects attributed to each call id, in trace order, by position.
    effects: BTreeMap<(u32, u32), Vec<usize>>,
    /// The position of each attempt by its id. Looked up by id, not by index into a dense
    /// vector, so that no assumption about how ids are numbered can make a lookup miss.
    by_id: ById,
}

/// Positions keyed by an id, with several positions per id kept in trace order: a vector
/// sorted by id, not a tree. Ids usually come in order (attempts are numbered as they start,
/// and a decision follows its attempt), and then building is one pass and a sort that finds
/// the order already there, where a tree paid an insert per attempt; any order still works.
struct ById(Vec<(u32, usize)>);

impl ById {
    /// `(id, position)` pairs in trace order.
    fn new(mut pairs: Vec<(u32, usize)>) -> ById {
        // Stable: positions under one id stay in trace order.
        pairs.sort_by_key(|&(id, _)| id);
        ById(pairs)
    }

    /// The positions filed under `id`, in trace order.
    fn all(&self, id: u32) -> &[(u32, usize)] {
        let from = self.0.partition_point(|&(k, _)| k < id);
        let to = from + self.0[from..].partition_point(|&(k, _)| k == id);
        &self.0[from..to]
    }

    fn first(&self, id: u32) -> Option<usize> {
        self.all(id).first().map(|&(_, i)| i)
    }

    fn last(&self, id: u32) -> Option<usize> {
        self.all(id).last().map(|&(_, i)| i)
    }
}

impl<'t> TraceIndex<'t> {
    /// Indexes `trace`: O(n log n) in its attempts, decisions and effects, O(n) when its
    /// ids come in order.
    pub(crate) fn new(trace: &'t Trace) -> Self {
        let mut calls: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        let mut by_id = Vec::with_capacity(trace.attempts.len());
        for (i, a) in trace.attempts.iter().enumerate() {
            // An attempt no call could be named for is no call's, call 0's least of all.
            if !trace.is_unattributed(a.id) {
                calls.entry((a.client_id, a.call_id)).or_default().push(i);
            }
            by_id.push((a.id, i));
        }
        let by_id = ById::new(by_id);
        let mut gaps = vec![None; trace.attempts.len()];
        for attempts in calls.values_mut() {
            // Stable: attempts with one number keep their trace order.
            attempts.sort_by_key(|&i| trace.attempts[i].n);
            // Walked in that order, the attempt `gap_before` measures from (the last one in
            // trace order numbered one less) is the last of the run of numbers just passed:
            // no map from numbers to attempts, which cost a tree insert per attempt.
            let mut last: Option<(u32, usize)> = None;
            let mut before: Option<(u32, usize)> = None;
            for &i in attempts.iter() {
                let a = &trace.attempts[i];
                if last.is_some_and(|(n, _)| n != a.n) {
                    before = last;
                }
                last = Some((a.n, i));
                gaps[i] = before
                    .filter(|&(n, _)| n.checked_add(1) == Some(a.n))
                    .and_then(|(_, p)| Some(a.start_ms.saturating_sub(trace.attempts[p].end_ms?)));
            }
        }
        let decisions = ById::new(
            trace
                .decisions
                .iter()
                .enumerate()
                .map(|(i, d)| (d.attempt_id, i))
                .collect(),
        );
        let mut effects: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for (i, e) in trace.effects.iter().enumerate() {
            if let Some(call) = e.call_id {
                effects.entry((e.client_id, call)).or_default().push(i);
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
        // An id filed twice is the later attempt's, as a map's insert would keep.
        self.trace.attempts.get(self.by_id.last(id)?)
    }

    /// The gap before the attempt at `position`.
    pub(crate) fn gap(&self, position: usize) -> Option<u64> {
        self.gaps.get(position).copied().flatten()
    }

    /// The reference client's decision after attempt `id`, if it made one.
    pub(crate) fn decision(&self, id: u32) -> Option<&'t DecisionRecord> {
        let i = self.decisions.first(id)?;
        self.trace.decisions.get(i)
    }

    /// The attempts of one call, ordered by their number.
    pub(crate) fn attempts_of(&self, client: u32, call: u32) -> Vec<&'t Attempt> {
        self.calls
            .get(&(client, call))
            .map(|positions| positions.iter().map(|&i| &self.trace.attempts[i]).collect())
            .unwrap_or_default()
    }

    /// The effects attributed to call `call` of client `client`, in trace order.
    pub(crate) fn effects_of(
        &self,
        client: u32,
        call: u32,
    ) -> impl Iterator<Item = &'t Effect> + '_ {
        self.effects
            .get(&(client, call))
            .into_iter()
            .flatten()
            .map(|&i| &self.trace.effects[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{AttemptOutcome, ConnUse, EndKind, Name};

    fn attempt(
        client_id: u32,
        call_id: u32,
        n: u32,
        start_ms: u64,
        end_ms: Option<u64>,
    ) -> Attempt {
        Attempt {
            id: 0,
            client_id,
            call_id,
            n,
            conn_id: None,
            conn: ConnUse::Unknown,
            stream_id: None,
            method: Name(0),
            path: Name(0),
            start_ms,
            head_ms: end_ms,
            end_ms,
            outcome: AttemptOutcome::Status(503),
            end: EndKind::Body,
            body_error: None,
            retry_after: None,
            amz_retry_after: None,
            resent: false,
            reconstructed: false,
            answered_by: None,
            grpc: None,
        }
    }

    /// Ids out of order, repeated and missing: the first and last position filed under each.
    #[test]
    fn by_id_finds_the_first_and_last_position_of_an_id() {
        let index = ById::new(vec![(7, 0), (3, 1), (7, 2), (5, 3), (7, 4)]);
        assert_eq!((index.first(7), index.last(7)), (Some(0), Some(4)));
        assert_eq!((index.first(3), index.last(3)), (Some(1), Some(1)));
        assert_eq!((index.first(5), index.last(5)), (Some(3), Some(3)));
        assert_eq!((index.first(4), index.last(4)), (None, None));
        assert_eq!(index.first(9), None);
        assert_eq!(ById::new(Vec::new()).last(0), None);
    }

    /// The index's gaps are `gap_before`'s, attempt by attempt: calls interleaved, two
    /// clients with the same call id, a number seen twice (the later one counts), a number
    /// skipped, attempts out of number order, and an attempt that never ended.
    #[test]
    fn gaps_are_those_of_gap_before() {
        let attempts = vec![
            attempt(0, 1, 1, 0, Some(10)),
            attempt(0, 2, 1, 5, Some(20)),
            attempt(1, 1, 1, 7, Some(8)),
            attempt(0, 1, 2, 30, Some(40)),
            attempt(0, 1, 2, 45, Some(50)),
            attempt(0, 2, 3, 60, Some(70)),
            attempt(1, 1, 2, 80, None),
            attempt(0, 1, 3, 90, Some(95)),
            attempt(1, 1, 3, 100, Some(110)),
            attempt(0, 2, 2, 120, Some(130)),
            attempt(0, 1, 1, 140, Some(150)),
        ];
        let trace = Trace {
            attempts,
            ..Trace::default()
        };
        let index = TraceIndex::new(&trace);
        let gaps: Vec<_> = (0..trace.attempts.len()).map(|i| index.gap(i)).collect();
        let expected: Vec<_> = trace.attempts.iter().map(|a| trace.gap_before(a)).collect();
        assert_eq!(gaps, expected);
        // Spelled out: call 1's #1 seen again last in the trace is the #1 its #2s follow
        // (ending after they start, so 0); client 1's #3 follows a #2 that never ended.
        assert_eq!(
            gaps,
            vec![
                None,
                None,
                None,
                Some(0),
                Some(0),
                Some(0),
                Some(72),
                Some(40),
                None,
                Some(100),
                None
            ]
        );
    }

    /// An attempt no call could be named for is in no call's attempts, though its
    /// `call_id` reads 0, and can still be looked up by id.
    #[test]
    fn unattributed_attempts_are_no_calls() {
        let mut stray = attempt(0, 0, 0, 0, Some(1));
        stray.id = 9;
        let mut first = attempt(0, 0, 1, 5, Some(6));
        first.id = 1;
        let trace = Trace {
            attempts: vec![stray, first],
            unattributed: vec![9],
            ..Trace::default()
        };
        let index = TraceIndex::new(&trace);
        let of_call_0: Vec<u32> = index.attempts_of(0, 0).iter().map(|a| a.id).collect();
        assert_eq!(of_call_0, [1]);
        assert_eq!(index.attempt(9).map(|a| a.start_ms), Some(0));
    }

    /// The trace's own `call_attempts` and `gap_before` leave an unattributed attempt out as
    /// the index does: numbered 0 and ended before call 0's #1 started, it would otherwise
    /// be the attempt that #1 follows, with a made-up gap. The lines say `unattributed`,
    /// never `call 0`, and have no gap, whether rendered alone or through the index.
    #[test]
    fn unattributed_attempts_have_no_gap_and_no_call() {
        let mut stray = attempt(0, 0, 0, 0, Some(1));
        stray.id = 9;
        let mut first = attempt(0, 0, 1, 5, Some(6));
        first.id = 1;
        let mut second = attempt(0, 0, 2, 10, Some(12));
        second.id = 2;
        let trace = Trace {
            names: vec!["GET".to_owned()],
            attempts: vec![stray, first, second],
            unattributed: vec![9],
            ..Trace::default()
        };
        let of_call_0: Vec<u32> = trace.call_attempts(0).map(|a| a.id).collect();
        assert_eq!(of_call_0, [1, 2]);
        let index = TraceIndex::new(&trace);
        let gaps: Vec<_> = (0..trace.attempts.len()).map(|i| index.gap(i)).collect();
        let expected: Vec<_> = trace.attempts.iter().map(|a| trace.gap_before(a)).collect();
        assert_eq!(gaps, expected);
        assert_eq!(gaps, [None, None, Some(4)]);
        let stray_line = trace.attempt_line(&trace.attempts[0]);
        assert!(stray_line.contains("  unattributed"), "{stray_line}");
        assert!(!stray_line.contains("call 0"), "{stray_line}");
        let first_line = trace.attempt_line(&trace.attempts[1]);
        assert!(!first_line.contains("gap"), "{first_line}");
    }
}
