//! Which run of a scenario compares a snapshot, and under which name.

use crate::report::{Report, RunEnd};
use crate::scenario::Scenario;

/// Names the snapshot `report` compares, when the scenario takes one and the run was not
/// abandoned at `limits.wall` (its trace would be whatever the guard caught): for the seed
/// snapshots are taken with, only. A run of another seed asked for with `RETRYLAB_SEED` says
/// why it compared none.
pub(super) fn name(scenario: &Scenario, report: &mut Report, seed: u64) {
    if !scenario.snapshot || report.end == RunEnd::WallLimit {
        return;
    }
    let snapshot_seed = snapshot_seed(scenario);
    if seed == snapshot_seed {
        report.snapshot = Some(crate::report::snapshot_name(
            &scenario.source.file,
            &scenario.name,
        ));
    } else if matches!(crate::overrides::seed(), Ok(Some(_))) {
        // Reproducing another seed: its verdicts are judged, but no snapshot exists for it,
        // and writing one would leave a stray file.
        report.snapshot_skipped = Some(format!(
            "the snapshot was not compared: it is taken with seed {snapshot_seed}, and \
             RETRYLAB_SEED asks for seed {seed}; to compare it, run again with \
             RETRYLAB_SEED={snapshot_seed} or without RETRYLAB_SEED"
        ));
    }
}

/// Snapshots are taken for one seed: the scenario's `seed`, or the first of its `seeds:`
/// sweep when the sweep leaves `seed` out (so a sweep is never left without one). The other
/// seeds of a sweep, and other seeds asked for with `RETRYLAB_SEED`, are judged without one.
fn snapshot_seed(scenario: &Scenario) -> u64 {
    match &scenario.seeds {
        Some(range) if !range.iter().any(|s| s == scenario.seed) => range.start,
        _ => scenario.seed,
    }
}
