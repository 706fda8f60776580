//! `retry_waves: { k, window, at_most }`: at most `at_most` waves, a wave being a window
//! `[t, t + window)` starting at a retry in which `k` or more distinct clients retried.
//!
//! After a failure every client sees at once (an outage that ends, a connection reset), a
//! fleet whose clients wait the same delays retries in step: every client's retry lands in
//! the same few milliseconds, again and again, and each wave meets the service as one
//! spike. Jitter spreads the retries out, so a window holds a share of the clients
//! proportional to its length. Waves are counted without overlap: once a window holds `k`
//! clients, the search goes on from its end.
//!
//! A pass needs evidence that there was something to be caught: some client retried, and
//! the fleet saw a shared failure, a window of the same length in which failures of `k` or
//! more distinct clients ended (a failure being an attempt its call retried after). Without
//! one, no fleet however synchronised could have made a wave of `k`, so the verdict is not
//! judged and says which was missing. Waves found fail the check either way.
//!
//! Windows start at every retry, not at the shared failure instants: a fleet without jitter
//! retries a whole backoff delay after the failure it shared (1 s later, then 2 s after
//! that), so a window anchored at the failure would hold none of those retries unless the
//! delay were shorter than the window. Sliding over the retries finds the spike wherever the
//! delay put it; the shared failure is what the verdict requires before a pass means
//! anything.
//!
//! Under a tolerance the window is narrowed by it, to 1 ms at least, as `max_rate`'s is:
//! only retries closer than that surely shared a window.

use super::{Ctx, verdict_on};
use crate::report::Verdict;
use crate::scenario::RetryWavesSpec;
use crate::trace::seconds;

/// Waves a verdict lists before it counts the rest.
const LISTED_WAVES: usize = 5;

pub(super) fn check(ctx: &Ctx<'_>, spec: RetryWavesSpec) -> Verdict {
    let written = spec.window.as_ms();
    let window = written.saturating_sub(ctx.tolerance.ms()).max(1);
    // Retries, by start: (start, client).
    let mut retries: Vec<(u64, u32)> = ctx
        .trace
        .attempts
        .iter()
        .filter(|a| a.n > 1)
        .map(|a| (a.start_ms, a.client_id))
        .collect();
    retries.sort_unstable();
    // Failures a retry followed, by the instant each ended: (end, client).
    let mut failures: Vec<(u64, u32)> = Vec::new();
    for (client, call) in ctx.calls() {
        let attempts = ctx.attempts_of(client, call);
        for pair in attempts.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            if after.n == before.n + 1 {
                // An attempt its call retried after ended before the retry started; one the
                // run cut short has no end, and shows no instant it was seen to fail.
                if let Some(end) = before.end_ms {
                    failures.push((end, client));
                }
            }
        }
    }
    failures.sort_unstable();
    let shared = waves(&failures, window, spec.k);
    let waves = waves(&retries, window, spec.k);
    let clients = ctx.scenario.operation.clients.max(1);
    let described: Vec<String> = waves
        .iter()
        .take(LISTED_WAVES)
        .map(|w| {
            format!(
                "{} clients retried from {} to {}",
                w.clients,
                seconds(w.from_ms),
                seconds(w.to_ms)
            )
        })
        .collect();
    let narrowed = if ctx.tolerance.is_zero() {
        String::new()
    } else {
        format!(
            " (the {} window less the {}ms tolerance)",
            seconds(written),
            ctx.tolerance.ms()
        )
    };
    let mut problems = Vec::new();
    if waves.len() as u64 > spec.at_most {
        let more = waves.len().saturating_sub(LISTED_WAVES);
        problems.push(format!(
            "{} waves of {} or more of the {clients} clients retrying within {}{narrowed}, \
             at most {} allowed: {}{}",
            waves.len(),
            spec.k,
            seconds(window),
            spec.at_most,
            described.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let shared_text = match shared.first() {
        Some(first) => format!(
            "; {} shared failure{}, the first of {} clients from {} to {}",
            shared.len(),
            if shared.len() == 1 { "" } else { "s" },
            first.clients,
            seconds(first.from_ms),
            seconds(first.to_ms)
        ),
        None => String::new(),
    };
    if problems.is_empty() && shared.is_empty() {
        let why = if retries.is_empty() {
            "no client retried, so there was no wave to look for".to_owned()
        } else {
            format!(
                "{} retries, but no {} window{narrowed} held the failures of {} or more of the \
                 {clients} clients: the fleet never saw a shared failure for a wave to follow \
                 ({} failures a retry followed)",
                retries.len(),
                seconds(window),
                spec.k,
                failures.len()
            )
        };
        return Verdict::not_judged("retry_waves", why);
    }
    verdict_on(
        "retry_waves",
        retries.len(),
        || "no client retried, so there was no wave to look for".to_owned(),
        problems,
        || {
            let found = if waves.is_empty() {
                "no window".to_owned()
            } else {
                format!("{} windows ({})", waves.len(), described.join("; "))
            };
            format!(
                "{found} of {} held retries of {} or more of the {clients} clients{narrowed} \
                 ({} retries; at most {} waves allowed{shared_text})",
                seconds(window),
                spec.k,
                retries.len(),
                spec.at_most
            )
        },
    )
}

/// One wave: the distinct clients that retried in its window, and its first and last retry.
#[derive(Debug, PartialEq, Eq)]
struct Wave {
    clients: u32,
    from_ms: u64,
    to_ms: u64,
}

/// The waves in `retries` (instants and clients, sorted): windows of `window` ms, each
/// starting at an instant of the list, that hold instants of `k` or more distinct clients,
/// taken without overlap from the earliest. Run on the retries' starts it finds waves, on
/// the failures' ends shared failures.
fn waves(retries: &[(u64, u32)], window: u64, k: u32) -> Vec<Wave> {
    let clients = retries.iter().map(|r| r.1 as usize + 1).max().unwrap_or(0);
    // Retries in the window, per client, and how many clients have any: a two-pointer
    // sweep, linear in the retries.
    let mut in_window = vec![0u32; clients];
    let mut distinct = 0u32;
    let mut out = Vec::new();
    let (mut first, mut last) = (0, 0);
    while first < retries.len() {
        let end = retries[first].0.saturating_add(window);
        while last < retries.len() && retries[last].0 < end {
            let count = &mut in_window[retries[last].1 as usize];
            if *count == 0 {
                distinct += 1;
            }
            *count += 1;
            last += 1;
        }
        if distinct >= k {
            out.push(Wave {
                clients: distinct,
                from_ms: retries[first].0,
                to_ms: retries[last - 1].0,
            });
            // The next wave starts after this one's window.
            for r in &retries[first..last] {
                in_window[r.1 as usize] = 0;
            }
            distinct = 0;
            first = last;
            continue;
        }
        let count = &mut in_window[retries[first].1 as usize];
        *count -= 1;
        if *count == 0 {
            distinct -= 1;
        }
        first += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Wave, waves};

    #[test]
    fn lockstep_retries_are_waves_and_spread_ones_are_not() {
        // Ten clients retrying at 100 ms and again at 300 ms, within 2 ms of each other.
        let mut lockstep: Vec<(u64, u32)> = (0..10)
            .flat_map(|c| [(100 + u64::from(c % 3), c), (300 + u64::from(c % 2), c)])
            .collect();
        lockstep.sort_unstable();
        assert_eq!(
            waves(&lockstep, 10, 8),
            [
                Wave {
                    clients: 10,
                    from_ms: 100,
                    to_ms: 102
                },
                Wave {
                    clients: 10,
                    from_ms: 300,
                    to_ms: 301
                },
            ]
        );
        // The same retries 10 ms apart: no 10 ms window holds two clients.
        let spread: Vec<(u64, u32)> = (0..10).map(|c| (100 + 10 * u64::from(c), c)).collect();
        assert!(waves(&spread, 10, 2).is_empty());
        assert_eq!(waves(&spread, 11, 2).len(), 5);
    }

    #[test]
    fn one_client_retrying_often_is_no_wave() {
        let one: Vec<(u64, u32)> = (0..50).map(|i| (i, 3)).collect();
        assert!(waves(&one, 100, 2).is_empty());
        assert_eq!(waves(&one, 100, 1).len(), 1);
    }

    /// Why windows start at retries rather than at shared failure instants: ten clients
    /// fail together at 0-2 ms and all retry 1 s later. A window anchored at the shared
    /// failure, `[0, 100 ms)`, holds none of the retries; the windows sliding over the
    /// retries find the one wave.
    #[test]
    fn a_lockstep_retry_a_delay_after_the_shared_failure_is_a_wave() {
        let failures: Vec<(u64, u32)> = (0..10).map(|c| (u64::from(c % 3), c)).collect();
        let mut failures = failures;
        failures.sort_unstable();
        let mut retries: Vec<(u64, u32)> = failures.iter().map(|&(t, c)| (t + 1000, c)).collect();
        retries.sort_unstable();
        let shared = waves(&failures, 100, 8);
        assert_eq!(
            shared,
            [Wave {
                clients: 10,
                from_ms: 0,
                to_ms: 2
            }]
        );
        let anchored = retries
            .iter()
            .filter(|r| r.0 < shared[0].from_ms + 100)
            .count();
        assert_eq!(anchored, 0);
        assert_eq!(
            waves(&retries, 100, 8),
            [Wave {
                clients: 10,
                from_ms: 1000,
                to_ms: 1002
            }]
        );
    }
}
