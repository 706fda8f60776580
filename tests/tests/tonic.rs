//! tonic on `env.tonic_channel()` (feature `tonic`): the clients of
//! `retrylab_tests::clients::tonic` against `scenarios/clients/tonic-*.yaml` (their verdicts
//! and snapshots are the scenario suite's too), and the determinism of the hand-written
//! loop's run: the same file and seed give byte-identical snapshot text and JSON report in
//! this process, twice, and in a child process of this test binary.

use std::process::Command;

use retrylab::scenario::Scenario;

const FILE: &str = "../scenarios/clients/tonic-retry-loop-pushback.yaml";

/// Set in the child process: it prints the run's snapshot and JSON report, and nothing else
/// runs.
const CHILD: &str = "RETRYLAB_TONIC_CHILD";

/// The snapshot text and the JSON report of one run of `file` at its seed.
fn run(file: &str) -> (String, String) {
    let scenario = Scenario::load(file).expect("a valid scenario");
    let clients = retrylab_tests::clients::registry();
    let report = clients.run(&scenario, scenario.seed).expect("it runs");
    assert!(report.passed(), "{}", report.summary());
    (report.snapshot_text(), report.trace().to_json())
}

#[test]
fn the_three_clients_pass_their_files() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    for file in [
        FILE,
        "../scenarios/clients/tonic-tower-retry-pushback-ignored.yaml",
        "../scenarios/clients/tonic-backon-pushback.yaml",
    ] {
        let (snapshot, _) = run(file);
        // Every file's attempts are streams of one connection, with the status and its
        // message as the endpoint sent them.
        assert!(
            snapshot.contains("-> 200 grpc UNAVAILABLE \"overloaded\"  conn 1 new  stream 1"),
            "{snapshot}"
        );
        assert!(
            snapshot.contains("grpc OK  conn 1 reused  stream 5"),
            "{snapshot}"
        );
    }
}

#[test]
fn the_loop_waits_the_pushback_and_sends_its_deadline() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let (snapshot, json) = run(FILE);
    assert!(snapshot.contains("pushback 500ms"), "{snapshot}");
    assert!(json.contains(r#""grpc_status":"UNAVAILABLE""#), "{json}");
    assert!(json.contains(r#""grpc_pushback":"500""#), "{json}");
    assert!(json.contains(r#""grpc_message":"overloaded""#), "{json}");
}

#[test]
fn a_run_is_byte_identical_in_this_process_and_in_another() {
    if std::env::var_os(CHILD).is_some() {
        // The child: one run, printed between markers (the test harness prints its own
        // lines around them).
        let (snapshot, json) = run(FILE);
        println!("<<<{snapshot}\n{json}>>>");
        return;
    }
    let (snapshot, json) = run(FILE);
    let again = run(FILE);
    assert_eq!((&snapshot, &json), (&again.0, &again.1));
    let exe = std::env::current_exe().expect("the test binary");
    let output = Command::new(exe)
        .args([
            "a_run_is_byte_identical_in_this_process_and_in_another",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let start = stdout.find("<<<").expect("the child's run") + 3;
    let end = stdout.rfind(">>>").expect("the end of the child's run");
    assert_eq!(&stdout[start..end], format!("{snapshot}\n{json}"));
}
