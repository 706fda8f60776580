//! The reproduce command a failure prints, `RETRYLAB_SEED=N cargo test -- --exact NAME`,
//! reproduces: with the scenario's own seed it compares the usual snapshot, and with another
//! seed it judges the verdicts and leaves the snapshot alone. Before the fix it looked for a
//! snapshot `NAME@seed-N` that never exists, so it failed even for a passing scenario and
//! left a `.snap.new` file behind.
//!
//! One test in its own binary: it sets `RETRYLAB_SEED`, which every run of the process reads.

use std::path::Path;

use libtest_mimic::Arguments;

fn snapshot_files() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn run_exact(name: &str, seed: u64) -> u64 {
    // SAFETY: this binary's only test runs alone, and nothing else reads the environment
    // while it is set.
    unsafe { std::env::set_var("RETRYLAB_SEED", seed.to_string()) };
    let args = Arguments {
        filter: Some(name.to_owned()),
        exact: true,
        test_threads: Some(1),
        quiet: true,
        ..Arguments::default()
    };
    let trials = retrylab::suite::trials(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .as_path(),
        retrylab_tests::clients::registry(),
    );
    let conclusion = libtest_mimic::run(&args, trials);
    unsafe { std::env::remove_var("RETRYLAB_SEED") };
    assert_eq!(
        conclusion.num_passed, 1,
        "{name} with seed {seed} did not run alone"
    );
    conclusion.num_failed
}

#[test]
fn the_reproduce_command_reproduces() {
    let before = snapshot_files();
    // The scenario's own seed: the usual snapshot is compared.
    assert_eq!(run_exact("http/429-retry-after", 7), 0);
    // The snapshot seed of a sweep, and another seed of it.
    assert_eq!(run_exact("policies/full-jitter-100-attempts@seed-3", 3), 0);
    assert_eq!(run_exact("policies/full-jitter-100-attempts@seed-2", 2), 0);
    // A seed the scenario never names: verdicts only.
    assert_eq!(run_exact("http/5xx-burst-then-success", 12345), 0);
    assert_eq!(snapshot_files(), before, "a snapshot file was written");
}
