//! Each client's calls by start instant: which call of a client was running at an instant,
//! and whether every call of that client had returned by then.
//!
//! Requests without a call tag (a client that only uses `env.connector()`, a task a call
//! left behind) and effects without a key or tag are attributed to a call this way. A fleet
//! has up to 100,000 clients and as many calls, and every such request asks, so each
//! question is a binary search over its own client's calls, never a scan of the run's.

use super::Call;

/// The calls of every client, by client index.
pub(super) struct CallWindows {
    clients: Vec<ClientCalls>,
}

/// One client's calls, ascending by start instant (calls of one instant in the order they
/// were filed).
#[derive(Default)]
struct ClientCalls {
    starts: Vec<u64>,
    call_ids: Vec<u32>,
    /// `call_ids`, sorted: which calls the client made, looked up.
    known: Vec<u32>,
    /// For each prefix of `starts`, the latest end among its calls (`u64::MAX`: one of them
    /// never returned).
    latest_end: Vec<u64>,
}

impl CallWindows {
    /// Indexes `calls`: O(n log n) in the calls, O(n) when they were filed in start order.
    pub(super) fn new(calls: &[Call]) -> CallWindows {
        let width = calls
            .iter()
            .map(|c| c.client_id as usize + 1)
            .max()
            .unwrap_or(0);
        let mut spans: Vec<Vec<(u64, u64, u32)>> = vec![Vec::new(); width];
        for c in calls {
            spans[c.client_id as usize].push((c.start_ms, c.end_ms.unwrap_or(u64::MAX), c.call_id));
        }
        let clients = spans
            .into_iter()
            .map(|mut spans| {
                // Stable, by start only: calls of one instant keep their filing order.
                if !spans.is_sorted_by_key(|s| s.0) {
                    spans.sort_by_key(|s| s.0);
                }
                let latest_end = spans
                    .iter()
                    .scan(0, |latest, &(_, end, _)| {
                        *latest = (*latest).max(end);
                        Some(*latest)
                    })
                    .collect();
                let call_ids: Vec<u32> = spans.iter().map(|s| s.2).collect();
                let mut known = call_ids.clone();
                known.sort_unstable();
                ClientCalls {
                    starts: spans.iter().map(|s| s.0).collect(),
                    call_ids,
                    known,
                    latest_end,
                }
            })
            .collect();
        CallWindows { clients }
    }

    /// How many of `client`'s calls had started by `at_ms`.
    fn started(&self, client: u32, at_ms: u64) -> Option<(&ClientCalls, usize)> {
        let calls = self.clients.get(client as usize)?;
        let started = calls.starts.partition_point(|&start| start <= at_ms);
        Some((calls, started))
    }

    /// The call of `client` that started last at or before `at_ms` (of several that started
    /// at that instant, the one filed last); `None` when none of its calls had started.
    pub(super) fn call_at(&self, client: u32, at_ms: u64) -> Option<u32> {
        let (calls, started) = self.started(client, at_ms)?;
        calls.call_ids.get(started.checked_sub(1)?).copied()
    }

    /// Whether `client` made call `call_id`.
    pub(super) fn has_call(&self, client: u32, call_id: u32) -> bool {
        self.clients
            .get(client as usize)
            .is_some_and(|calls| calls.known.binary_search(&call_id).is_ok())
    }

    /// When every call of `client` that had started by `at_ms` had returned before it (and
    /// one had started), the call that started last: a request then came from a call that
    /// had returned. As for tagged requests, a request in the very millisecond its call
    /// returned is not late.
    pub(super) fn returned_before(&self, client: u32, at_ms: u64) -> Option<u32> {
        let (calls, started) = self.started(client, at_ms)?;
        let last = started.checked_sub(1)?;
        (calls.latest_end[last] < at_ms).then(|| calls.call_ids[last])
    }
}

#[cfg(test)]
mod tests {
    use super::CallWindows;
    use crate::trace::{Call, CallResult};

    fn call(client_id: u32, call_id: u32, start_ms: u64, end_ms: Option<u64>) -> Call {
        Call {
            client_id,
            call_id,
            start_ms,
            end_ms,
            result: CallResult::Success(String::new()),
        }
    }

    #[test]
    fn each_client_is_asked_about_its_own_calls() {
        let windows = CallWindows::new(&[
            call(0, 0, 0, Some(100)),
            call(1, 0, 50, Some(300)),
            call(0, 1, 200, Some(250)),
            call(1, 1, 400, None),
        ]);
        assert_eq!(windows.call_at(0, 0), Some(0));
        assert_eq!(windows.call_at(0, 199), Some(0));
        assert_eq!(windows.call_at(0, 5000), Some(1));
        assert_eq!(windows.call_at(1, 49), None);
        assert_eq!(windows.call_at(1, 399), Some(0));
        assert_eq!(windows.call_at(2, 1000), None);
        // Client 0 is idle at 150 though client 1 runs; client 1 is not.
        assert_eq!(windows.returned_before(0, 150), Some(0));
        assert_eq!(windows.returned_before(1, 150), None);
        assert_eq!(windows.returned_before(0, 100), None);
        assert_eq!(windows.returned_before(1, 350), Some(0));
        // Client 1's last call never returned.
        assert_eq!(windows.returned_before(1, 9000), None);
    }

    #[test]
    fn calls_filed_out_of_start_order_are_found_by_start() {
        let windows = CallWindows::new(&[call(0, 1, 500, Some(600)), call(0, 0, 0, Some(900))]);
        assert_eq!(windows.call_at(0, 550), Some(1));
        // Call 0 ran until 900: the client was not idle at 700.
        assert_eq!(windows.returned_before(0, 700), None);
        assert_eq!(windows.returned_before(0, 901), Some(1));
    }
}
