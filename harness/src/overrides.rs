//! Environment overrides, read in one place so that every reader agrees on their meaning.
//!
//! | variable | effect |
//! |---|---|
//! | `RETRYLAB_SEED` | the seed of every run, instead of the scenario's `seed:`; a run with the scenario's snapshot seed compares its usual snapshot, a run with another seed judges the verdicts only and says the snapshot was not compared |
//!
//! insta's own variables (`INSTA_UPDATE`, ...) apply to snapshots as insta documents them.

/// The name of the seed override.
pub(crate) const SEED_VAR: &str = "RETRYLAB_SEED";

/// The seed `RETRYLAB_SEED` sets, when it is set to a number (surrounding space allowed).
///
/// A value that is not a number is not silently ignored: it panics with the variable and
/// the value, since a run with a seed other than the one asked for would reproduce nothing.
pub(crate) fn seed() -> Option<u64> {
    let value = std::env::var(SEED_VAR).ok()?;
    match value.trim().parse() {
        Ok(seed) => Some(seed),
        Err(_) => panic!(
            "{SEED_VAR}={value:?} is not a seed: set it to a whole number, e.g. {SEED_VAR}=7"
        ),
    }
}
