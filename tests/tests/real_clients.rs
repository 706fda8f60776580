//! The black-box clients (curl, urllib3) against `scenarios/real/`, with what the files
//! cannot say pinned: curl's exit code and the waits it announced, the statuses urllib3
//! retried, and urllib3's delays against its own formula. The plain reqwest client's
//! details are in `tests/reqwest.rs` (feature `reqwest`).
//!
//! On a machine without curl, python3 or urllib3 these tests print why and pass without
//! running: the clients are the machine's, not retrylab's (the suite lists the same files
//! as ignored, with the same reason).

use std::process::Command;
use std::time::Duration;

use retrylab::Report;
use retrylab::trace::{CallResult, ConnUse};
use retrylab_tests::clients::black_box::{self, RunError};
use retrylab_tests::clients::{curl, urllib3};
use retrylab_tests::pinned::{gaps, real_scenario};

/// Whether `client` can run here; if not, says why the test is skipped.
fn runs(client: &str, available: Result<&str, &str>) -> bool {
    match available {
        Ok(_) => true,
        Err(reason) => {
            eprintln!("skipped: {client} cannot run on this machine: {reason}");
            false
        }
    }
}

fn passed(report: &Report) -> &Report {
    assert!(report.passed(), "{}", report.summary());
    report
}

fn result(report: &Report) -> &CallResult {
    &report.trace().calls[0].result
}

// ---- curl -----------------------------------------------------------------------------------

#[test]
fn curl_waits_each_retry_after_and_says_so() {
    if !runs("curl", curl::available()) {
        return;
    }
    let report = real_scenario("curl-retry-after.yaml").run(curl::retry_3);
    passed(&report);
    assert_eq!(
        result(&report),
        &CallResult::Success(
            "Transfer { exit_code: 0, http_code: 200, announced_waits_ms: [1000, 1000, 1000] }"
                .into()
        )
    );
    // Its own schedule would have waited 2s and 4s before the last two retries.
    assert!(gaps(&report).iter().all(|gap| (1000..1500).contains(gap)));
    // With --fail, curl stops reading a 503 at its head and closes the connection.
    let conns: Vec<ConnUse> = report.trace().attempts.iter().map(|a| a.conn).collect();
    assert_eq!(conns, [ConnUse::New; 4]);
}

#[test]
fn curl_waits_an_http_date_retry_after_dated_from_the_real_clock() {
    if !runs("curl", curl::available()) {
        return;
    }
    let report = real_scenario("curl-retry-after-http-date.yaml").run(curl::retry_3);
    passed(&report);
    // curl reads the date against its own clock in whole seconds: from its current second
    // to the date, 2s on and rounded up, is 2s or 3s. A date from the default epoch, long
    // past, would have been a wait of 0.
    let CallResult::Success(transfer) = result(&report) else {
        panic!("{}", report.summary());
    };
    assert!(
        transfer.ends_with("announced_waits_ms: [2000] }")
            || transfer.ends_with("announced_waits_ms: [3000] }"),
        "{transfer}"
    );
    assert!(
        transfer.starts_with("Transfer { exit_code: 0, http_code: 200"),
        "{transfer}"
    );
}

#[test]
fn curl_gives_up_on_a_retry_after_past_its_max_time() {
    if !runs("curl", curl::available()) {
        return;
    }
    let report = real_scenario("curl-retry-after-past-max-time.yaml").run(curl::retry_3_max_time_2);
    passed(&report);
    // Exit code 22 is --fail's: the last answer was the 503, and no wait was announced.
    assert_eq!(
        result(&report),
        &CallResult::Failure(
            "Exit(Transfer { exit_code: 22, http_code: 503, announced_waits_ms: [] })".into()
        )
    );
}

// ---- urllib3 --------------------------------------------------------------------------------

#[test]
fn urllib3_sleeps_as_its_backoff_formula_says() {
    if !runs("urllib3", urllib3::available()) {
        return;
    }
    let report = real_scenario("urllib3-backoff.yaml").run(urllib3::retry);
    passed(&report);
    assert_eq!(
        result(&report),
        &CallResult::Success("Answer { status: 200, retried: [503, 503, 503] }".into())
    );
    // Gap n follows n consecutive 503s: get_backoff_time() then, plus at most 50ms of
    // urllib3's own work and the scheduler's.
    let retry = urllib3::retry_config();
    let gaps = gaps(&report);
    assert_eq!(gaps.len(), 3);
    for (n, gap) in (1..).zip(&gaps) {
        let formula = retry.backoff_ms(n);
        assert!(
            (formula..=formula + 50).contains(gap),
            "gap {n} was {gap}ms, urllib3's formula says {formula}ms: {gaps:?}"
        );
    }
    // One pooled connection throughout: a 503 is read whole before the retry.
    let conns: Vec<ConnUse> = report.trace().attempts.iter().map(|a| a.conn).collect();
    assert_eq!(
        conns,
        [
            ConnUse::New,
            ConnUse::Reused,
            ConnUse::Reused,
            ConnUse::Reused
        ]
    );
}

#[test]
fn urllib3_sleeps_a_429_s_retry_after_instead_of_its_backoff() {
    if !runs("urllib3", urllib3::available()) {
        return;
    }
    let report = real_scenario("urllib3-retry-after.yaml").run(urllib3::retry);
    passed(&report);
    assert_eq!(
        result(&report),
        &CallResult::Success("Answer { status: 200, retried: [429, 429] }".into())
    );
    // The backoff would have been 0 and then 400ms.
    assert!(gaps(&report).iter().all(|gap| (1000..=1050).contains(gap)));
}

#[test]
fn urllib3_returns_a_post_s_503_without_retrying_it() {
    if !runs("urllib3", urllib3::available()) {
        return;
    }
    let report = real_scenario("urllib3-post-not-retried.yaml").run(urllib3::retry);
    passed(&report);
    // Returned, not raised: urllib3 raises MaxRetryError only when it retried and ran out.
    assert_eq!(
        result(&report),
        &CallResult::Failure("Status(Answer { status: 503, retried: [] })".into())
    );
    let trace = report.trace();
    assert_eq!(trace.name(trace.attempts[0].method), "POST");
}

#[test]
fn urllib3_raises_max_retry_error_when_its_retries_run_out() {
    if !runs("urllib3", urllib3::available()) {
        return;
    }
    // Only 503s: the fourth attempt, the last `total=3` allows, gets a 503 too.
    let scenario = retrylab::Scenario::from_yaml_str(
        "version: 1\nname: out of retries\nbackend: real\n\
         endpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nexpect: { attempts: 4, outcome: failure }\n\
         limits: { wall: 20s }\n",
        "out-of-retries.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(urllib3::retry);
    passed(&report);
    assert_eq!(
        result(&report),
        &CallResult::Failure(
            "Raised { exception: \"MaxRetryError\", reason: \"ResponseError\" }".into()
        )
    );
}

// ---- what every black-box client shares -----------------------------------------------------

#[test]
fn on_the_sim_network_a_black_box_client_says_it_needs_the_real_backend() {
    if !runs("curl", curl::available()) {
        return;
    }
    let scenario = retrylab::Scenario::from_yaml_str(
        "version: 1\nname: sim\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
         operation: { endpoint: api, path: /orders }\nexpect: { attempts: 0 }\n",
        "sim.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run(curl::retry_3);
    passed(&report);
    assert_eq!(
        result(&report),
        &CallResult::Failure("Run(NotRealBackend { url: \"http://api/orders\" })".into())
    );
    let error = RunError::NotRealBackend {
        url: "http://api/orders".into(),
    };
    assert!(
        error.to_string().contains("needs `backend: real`"),
        "{error}"
    );
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
        .block_on(future)
}

#[test]
fn a_program_gets_its_input_and_its_output_is_kept() {
    let mut command = Command::new("sh");
    command.args(["-c", "cat; echo oops >&2; exit 3"]);
    let exited = block_on(black_box::run(command, b"body", Duration::from_secs(10)));
    let exited = exited.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exited.code, Some(3));
    assert_eq!(exited.stdout, "body");
    assert_eq!(exited.stderr, "oops\n");
}

#[test]
fn a_program_that_hangs_is_killed_at_the_limit() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let error = block_on(black_box::run(command, &[], Duration::from_millis(200)));
    assert_eq!(
        error,
        Err(RunError::TimedOut {
            program: "sleep".into(),
            limit_ms: 200
        })
    );
}

#[test]
fn a_program_whose_call_is_dropped_is_killed() {
    let pid_file = std::env::temp_dir().join(format!("retrylab-dropped-{}", std::process::id()));
    let mut command = Command::new("sh");
    command
        .args(["-c", "echo $$ > \"$0\"; exec sleep 30"])
        .arg(&pid_file);
    // The run stopping a call (its wall limit) drops the call's future the same way.
    let cut = block_on(async {
        let call = black_box::run(command, &[], Duration::from_secs(60));
        tokio::time::timeout(Duration::from_secs(2), call).await
    });
    assert!(cut.is_err(), "the program ended on its own: {cut:?}");
    let pid = std::fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&pid_file);
    // Killed and reaped: not even a zombie is left.
    let proc_entry = format!("/proc/{}", pid.trim());
    assert!(
        !std::path::Path::new(&proc_entry).exists(),
        "{proc_entry} is still there"
    );
}

#[test]
fn a_missing_program_is_a_reason_not_a_failure() {
    let reason = black_box::probe("retrylab-no-such-program", &["--version"]).unwrap_err();
    assert!(
        reason.starts_with("`retrylab-no-such-program --version` failed: cannot start"),
        "{reason}"
    );
    let failing = black_box::probe("sh", &["-c", "echo broken >&2; exit 1"]).unwrap_err();
    assert_eq!(
        failing,
        "`sh -c echo broken >&2; exit 1` exited with code 1: broken"
    );
}
