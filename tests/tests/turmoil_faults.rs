//! turmoil-native faults (`turmoil.loss`, `turmoil.latency`, `turmoil.hold`,
//! `turmoil.partition`, `turmoil.crash`): the files of `scenarios/turmoil/`, run with their
//! built-in clients and compared with their snapshots. The scenario suite lists them as
//! ignored in a build without feature `turmoil`; this test runs them in the build with it.

use retrylab::Scenario;
use retrylab::suite::scenario_files;

#[test]
fn the_turmoil_fault_files_pass_and_match_their_snapshots() {
    // Tests run in the tests crate's directory. Found from the library's root, so each is
    // named `scenarios/turmoil/<file>`, as the scenario suite names it, and so is its
    // snapshot.
    let files: Vec<_> = scenario_files("../scenarios".as_ref())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|file| file.display.starts_with("scenarios/turmoil/"))
        .collect();
    assert!(files.len() >= 5, "{} files", files.len());
    for file in &files {
        let scenario =
            Scenario::load_as(&file.path, &file.display).unwrap_or_else(|e| panic!("{e}"));
        let report = scenario.run_builtin();
        println!("{}\n{}", file.display, report.summary());
        report.assert();
    }
}
