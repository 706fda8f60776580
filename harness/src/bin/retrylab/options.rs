//! What `retrylab run` does with each file besides running it, resolved once from the
//! command line: the seeds, the output format, overrides and snapshots.

use clap::ValueEnum;
use retrylab::scenario::{BackendKind, ClientSpec, SeedRange};

use crate::snapshots::Snapshots;

/// How `retrylab run` prints its runs.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A table, and the timeline of every failure.
    Human,
    /// One JSON document: `runs`, an object per run with the snapshot text (stable across
    /// runs and machines), and `totals`.
    Json,
    /// `JUnit` XML: a test suite per folder, a test case per file and seed; failures carry
    /// the failed verdicts, skipped files why, invalid files their errors.
    Junit,
}

/// Which seeds each file runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seeds {
    /// The scenario's `seed` (or `RETRYLAB_SEED`).
    Scenario,
    /// Every seed of the file's `seeds:` sweep.
    Sweep,
    /// These, for every file.
    Range(SeedRange),
}

/// What a run of a file is asked to do besides running it, resolved from the command line.
pub(crate) struct RunOptions {
    pub(crate) seeds: Seeds,
    pub(crate) format: Format,
    pub(crate) backend: Option<BackendKind>,
    pub(crate) client: Option<ClientSpec>,
    /// A client profile applied to every file (`--profile`): its client, and its documented
    /// policy as `conforms_to` for the promises it makes.
    pub(crate) profile: Option<retrylab::conformance::ClientProfile>,
    pub(crate) snapshots: Option<Snapshots>,
}
