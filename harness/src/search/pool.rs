//! The pool: cases judged on several threads at once, their verdicts taken in index order,
//! so that the first failing case is the one a single thread would have found.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

use proptest::strategy::{Strategy, ValueTree};

use crate::Env;
use crate::report::Verdict;

use super::SearchError;
use super::case::{self, Judged, JudgedChecks};
use super::invariant::Invariants;
use super::invariant::panic_message;
use super::strategy::Drawn;

/// What judging cases in order came to.
pub(crate) struct Scan<V> {
    /// How many cases were judged: up to the first failing one, or all of them.
    pub(crate) tried: u32,
    /// The checks judged (passed or failed) in at least one of those cases.
    pub(crate) judged: JudgedChecks,
    /// The first failing case, in the order given, if any.
    pub(crate) failure: Option<Found<V>>,
}

/// A failing case: its index, its value tree (to shrink), its failed verdicts and the checks
/// it judged.
pub(crate) struct Found<V> {
    pub(crate) index: u32,
    pub(crate) tree: V,
    pub(crate) failed: Vec<Verdict>,
    pub(crate) judged: JudgedChecks,
}

/// Judges the cases `indices` of the search seeded `seed` on `threads` threads, calling
/// `progress(judged)` as each verdict is taken in order. A case is drawn on this thread (a
/// strategy is not `Send`) and run on a worker; each run is deterministic, so the verdicts, and
/// the first failing case, do not depend on how the work was spread.
pub(crate) fn first_failure<S, F, Fut, T, E>(
    strategy: &S,
    seed: u64,
    indices: &[u32],
    threads: usize,
    client: &F,
    invariants: &Invariants,
    progress: &mut dyn FnMut(u32),
) -> Result<Scan<S::Tree>, SearchError>
where
    S: Strategy<Value = Drawn>,
    F: Fn(Env) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    let stop = AtomicBool::new(false);
    let (jobs, queue) = mpsc::channel::<(u32, Drawn)>();
    let queue = Mutex::new(queue);
    let (done, verdicts) = mpsc::channel::<(u32, Judged)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (queue, done, stop, client) = (&queue, done.clone(), &stop, client.clone());
            scope.spawn(move || {
                loop {
                    // A poisoned lock still holds the receiver intact.
                    let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((i, drawn)) = job else { break };
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // The verdict is always sent: a case whose judging panics (past the run's
                    // and the closures' own catching) fails, rather than leave the verdict
                    // awaited forever while the other workers keep the channel open.
                    let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        case::judge(&drawn, &client, invariants)
                    }))
                    .unwrap_or_else(|panic| {
                        let why = format!(
                            "judging the case panicked: {}",
                            panic_message(panic.as_ref())
                        );
                        Judged::Broken(vec![Verdict::fail("panic", why)], JudgedChecks::new())
                    });
                    if done.send((i, judged)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        let result = in_order(strategy, seed, indices, threads, &jobs, &verdicts, progress);
        // Whatever is still queued is not needed: the workers end after their current case.
        stop.store(true, Ordering::Relaxed);
        drop(jobs);
        result
    })
}

/// Draws and sends the cases, at most two per thread ahead of the verdict awaited, and takes
/// the verdicts in index order.
fn in_order<S: Strategy<Value = Drawn>>(
    strategy: &S,
    seed: u64,
    indices: &[u32],
    threads: usize,
    jobs: &mpsc::Sender<(u32, Drawn)>,
    verdicts: &mpsc::Receiver<(u32, Judged)>,
    progress: &mut dyn FnMut(u32),
) -> Result<Scan<S::Tree>, SearchError> {
    let mut trees: BTreeMap<u32, S::Tree> = BTreeMap::new();
    let mut arrived: BTreeMap<u32, Judged> = BTreeMap::new();
    let mut all_judged = JudgedChecks::new();
    let (mut sent, mut taken) = (0usize, 0usize);
    while taken < indices.len() {
        while sent < indices.len() && sent < taken + 2 * threads {
            let i = indices[sent];
            let tree = case::tree(strategy, seed, i).map_err(SearchError::InvalidCase)?;
            jobs.send((i, tree.current()))
                .map_err(|_| SearchError::Lost)?;
            trees.insert(i, tree);
            sent += 1;
        }
        let i = indices[taken];
        let judged = loop {
            if let Some(judged) = arrived.remove(&i) {
                break judged;
            }
            let (j, judged) = verdicts.recv().map_err(|_| SearchError::Lost)?;
            arrived.insert(j, judged);
        };
        taken += 1;
        progress(taken as u32);
        match judged {
            Judged::Held(judged) => all_judged.extend(judged),
            Judged::Invalid(why) => return Err(SearchError::InvalidCase(why)),
            Judged::Broken(failed, judged) => {
                let tree = trees.remove(&i).ok_or(SearchError::Lost)?;
                all_judged.extend(judged.iter().cloned());
                return Ok(Scan {
                    tried: taken as u32,
                    judged: all_judged,
                    failure: Some(Found {
                        index: i,
                        tree,
                        failed,
                        judged,
                    }),
                });
            }
        }
        trees.remove(&i);
    }
    Ok(Scan {
        tried: taken as u32,
        judged: all_judged,
        failure: None,
    })
}
