//! turmoil-native faults (`turmoil.loss`, `turmoil.hold`, `turmoil.partition`,
//! `turmoil.crash`): the files of `tests/turmoil/`, run with their built-in clients and
//! compared with their snapshots. They live outside the library because the library is also
//! run without feature `turmoil`.

use retrylab::Scenario;
use retrylab::suite::scenario_files;

#[test]
fn the_turmoil_fault_files_pass_and_match_their_snapshots() {
    // Tests run in the tests crate's directory.
    let files = scenario_files("turmoil".as_ref()).unwrap_or_else(|e| panic!("{e}"));
    assert!(files.len() >= 5, "{} files", files.len());
    for file in &files {
        let scenario =
            Scenario::load_as(&file.path, &file.display).unwrap_or_else(|e| panic!("{e}"));
        let report = scenario.run_builtin();
        println!("{}\n{}", file.display, report.summary());
        report.assert();
    }
}
