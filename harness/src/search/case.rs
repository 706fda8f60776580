//! Cases: case `i` of a search, derived from the search seed and `i` alone, and its verdict.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::Env;
use crate::report::{Judgement, RunEnd, Verdict};
use crate::scenario::Scenario;

use super::invariant::Invariants;
use super::strategy::Drawn;

/// The names of the checks a case judged (passed or failed), as opposed to those it gave
/// nothing to judge.
pub(crate) type JudgedChecks = BTreeSet<String>;

/// What a case came to.
pub(crate) enum Judged {
    /// Every invariant held (or had nothing to judge); the checks it judged.
    Held(JudgedChecks),
    /// These verdicts failed; the checks it judged.
    Broken(Vec<Verdict>, JudgedChecks),
    /// The case is not a valid scenario (the space or the base is at fault, not the
    /// client): what loading it would say.
    Invalid(String),
}

/// The generator of case `index` of the search seeded `seed`: proptest's runner on a
/// `ChaCha` generator whose key is the two numbers, so that a case never depends on the cases
/// drawn before it (shards draw only their own).
///
/// The runner's `Config` is proptest's default (which reads the `PROPTEST_*` variables) with
/// its shrinking time and failure persistence off. The other variables are read there but
/// have no effect: a search never calls `TestRunner::run`, so its cases, fork and timeout
/// settings are never used, and the strategies use nothing else of it: every size is
/// explicit, and none filters or flat-maps, so the reject and regeneration limits never
/// apply. Only `PROPTEST_CASES` changes a search, through
/// [`overrides::cases`](crate::overrides::cases).
pub(crate) fn runner(seed: u64, index: u32) -> TestRunner {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..12].copy_from_slice(&index.to_le_bytes());
    // The rest says what the key is for, so that no other use of the same two numbers in
    // proptest's ChaCha draws the same stream.
    key[12..].copy_from_slice(b"retrylab/search/case");
    let config = Config {
        failure_persistence: None,
        max_shrink_time: 0,
        rng_algorithm: RngAlgorithm::ChaCha,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key))
}

/// Case `index` as a value tree, to read and shrink.
pub(crate) fn tree<S: Strategy<Value = Drawn>>(
    strategy: &S,
    seed: u64,
    index: u32,
) -> Result<S::Tree, String> {
    strategy
        .new_tree(&mut runner(seed, index))
        .map_err(|why| format!("case {index} could not be drawn: {why}"))
}

/// Runs `case` with `client` and judges it: its expectations (the invariants', set as its
/// `expect:`) by the run, then the invariants' closures. A check the case gave no evidence
/// to (not judged on a completed run) holds in this case, and is left out of the checks it
/// judged: the search fails an invariant that no case judged.
pub(crate) fn judge<F, Fut, T, E>(case: &Drawn, client: &F, invariants: &Invariants) -> Judged
where
    F: Fn(Env) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    let case = match case {
        Ok(case) => case,
        Err(why) => return Judged::Invalid(why.clone()),
    };
    let mut report = case.run_with_seed(case.seed, client.clone());
    if report.end == RunEnd::NotRunnable {
        let why: Vec<String> = report.failures().map(|v| v.message.clone()).collect();
        return Judged::Invalid(why.join("; "));
    }
    invariants.judge_closures(&mut report);
    // An invariant is a rule for every case, and a case may give a check nothing to judge (a
    // `retry_after` where no Retry-After was sent): on a completed run that holds. A run cut
    // short (a limit, a panic) fails, through its run-level verdict.
    let completed = report.end == RunEnd::Completed;
    let judged: JudgedChecks = report
        .verdicts
        .iter()
        .filter(|v| v.judgement != Judgement::NotJudged)
        .map(|v| v.check.clone())
        .collect();
    let failed: Vec<Verdict> = report
        .failures()
        .filter(|v| !(completed && v.judgement == Judgement::NotJudged))
        .cloned()
        .collect();
    if failed.is_empty() {
        Judged::Held(judged)
    } else {
        Judged::Broken(failed, judged)
    }
}

/// The smallest failing case a shrink reached: its scenario, its failed verdicts, the checks
/// it judged, and how many shrinking steps were tried.
pub(crate) struct Shrunk {
    pub(crate) scenario: Scenario,
    pub(crate) failed: Vec<Verdict>,
    pub(crate) judged: JudgedChecks,
    pub(crate) steps: u32,
}

/// The smallest failing case proptest's shrinking reaches from a failing `tree`, whose
/// verdicts were `failed` with the checks `judged`.
///
/// The loop is proptest's own (`TestRunner`'s `shrink`: simplify after a failure,
/// complicate after a pass, until neither moves) bounded by a count of steps, never by time,
/// so the same tree always shrinks to the same case. A candidate that is not a valid
/// scenario (a shrunk value the base's limits refuse) is what proptest calls a rejected
/// case: not a failure, so the tree complicates, as after a pass, and the failure already
/// found is kept. The last failing value is kept here rather than read back from the tree.
pub(crate) fn shrink<V, F, Fut, T, E>(
    tree: &mut V,
    failed: Vec<Verdict>,
    judged: JudgedChecks,
    max_steps: u32,
    client: &F,
    invariants: &Invariants,
) -> Result<Shrunk, String>
where
    V: ValueTree<Value = Drawn>,
    F: Fn(Env) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T, E>> + 'static,
    T: Debug,
    E: Debug,
{
    let scenario = tree
        .current()
        .map_err(|why| format!("a failing case has no scenario: {why}"))?;
    let mut smallest = Shrunk {
        scenario,
        failed,
        judged,
        steps: 0,
    };
    if !tree.simplify() {
        return Ok(smallest);
    }
    while smallest.steps < max_steps {
        smallest.steps += 1;
        let candidate = tree.current();
        match judge(&candidate, client, invariants) {
            Judged::Held(_) | Judged::Invalid(_) => {
                if !tree.complicate() {
                    break;
                }
            }
            Judged::Broken(failed, judged) => {
                if let Ok(scenario) = candidate {
                    smallest.scenario = scenario;
                    smallest.failed = failed;
                    smallest.judged = judged;
                }
                if !tree.simplify() {
                    break;
                }
            }
        }
    }
    Ok(smallest)
}
