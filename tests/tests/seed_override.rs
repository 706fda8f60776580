//! A `RETRYLAB_SEED` that is not a seed panicked inside `Scenario::run` and inside every test
//! of `scenario_main!`; now a run returns a failed report and a suite test fails, each with
//! an error naming the variable and its value.
//!
//! One test in its own binary: it sets `RETRYLAB_SEED`, which every run of the process reads.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use libtest_mimic::Arguments;
use retrylab::RunEnd;
use retrylab::scenario::Scenario;

const EXPECTED: &str = "RETRYLAB_SEED=\"0x10\": not a seed, expected a whole number from 0 to \
                        18446744073709551615 in decimal digits, such as RETRYLAB_SEED=7";

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn a_garbage_seed_override_fails_runs_without_a_panic() {
    // Counts every panic of the process, a suite test's too (libtest-mimic would report a
    // panicking test as failed, just like one that returns its error).
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
    // SAFETY: this binary's only test runs alone, and nothing else reads the environment
    // while it is set.
    unsafe { std::env::set_var("RETRYLAB_SEED", "0x10") };
    let scenario = Scenario::from_yaml_str(
        "version: 1\nname: ok\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { attempts: 1 }\n",
        "ok.yaml",
    )
    .expect("a valid scenario");
    let ran = std::panic::catch_unwind(|| {
        let with_client = scenario.run(|env| async move {
            let response = env.http_client().request(env.operation().request()).await;
            response
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string())
        });
        (with_client, scenario.run_builtin())
    });
    let trials = retrylab::suite::trials(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .as_path(),
        retrylab_tests::clients::registry(),
    );
    let args = Arguments {
        filter: Some("http/429-retry-after".to_owned()),
        exact: true,
        test_threads: Some(1),
        quiet: true,
        ..Arguments::default()
    };
    eprintln!("the suite's test below is meant to fail, with the error:");
    let conclusion = libtest_mimic::run(&args, trials);
    unsafe { std::env::remove_var("RETRYLAB_SEED") };

    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a run panicked");
    let (with_client, builtin) = ran.expect("no panic");
    for report in [&with_client, &builtin] {
        assert!(!report.passed());
        assert_eq!(*report.end(), RunEnd::NotRunnable);
        assert_eq!(report.verdicts().len(), 1);
        assert_eq!(report.verdicts()[0].message, EXPECTED);
    }
    assert_eq!(
        (conclusion.num_passed, conclusion.num_failed),
        (0, 1),
        "the suite's test must fail"
    );
}
