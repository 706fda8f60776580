//! The black-box clients (curl, urllib3) of `scenarios/real/`, run as the files' own command
//! clients (`client: { command: [...] }`), with what the files cannot say pinned from the
//! processes' output: curl's exit code and the waits it announced, the statuses urllib3
//! retried, and urllib3's delays against its own formula. The plain reqwest client's details
//! are in `tests/reqwest.rs` (feature `reqwest`).
//!
//! On a machine without curl, python3 or urllib3 these tests print why and pass without
//! running: the clients are the machine's, not retrylab's (the suite lists the same files as
//! ignored, with the reason).

use std::process::Command;

use retrylab::trace::ConnUse;
use retrylab::{ProcessExit, ProcessRun, Report};
use retrylab_tests::pinned::{gaps, real_scenario};

/// Whether `program args` runs here; if not, says why the test is skipped.
fn runs(program: &str, args: &[&str]) -> bool {
    let ran = Command::new(program).args(args).output();
    match ran {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            eprintln!(
                "skipped: `{program} {}` failed here: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            );
            false
        }
        Err(error) => {
            eprintln!("skipped: {program} cannot run on this machine: {error}");
            false
        }
    }
}

fn curl() -> bool {
    runs("curl", &["--version"])
}

fn urllib3() -> bool {
    runs("python3", &["-c", "import urllib3"])
}

fn passed(report: &Report) -> &Report {
    assert!(report.passed(), "{}", report.summary());
    report
}

/// The one process of a one-call run.
fn process(report: &Report) -> &ProcessRun {
    assert_eq!(report.processes().len(), 1, "{}", report.summary());
    &report.processes()[0]
}

/// The JSON line `urllib3_call.py` printed.
fn printed(report: &Report) -> serde_json::Value {
    let stdout = &process(report).stdout.text;
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The waits curl announced before its retries, in milliseconds: curl 7 writes "Will retry
/// in 2 seconds", curl 8 "Retrying in 2 seconds" (or "1.500 seconds").
fn announced_waits_ms(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|line| {
            let (_, after) = line
                .split_once("Will retry in ")
                .or_else(|| line.split_once("Retrying in "))?;
            let (number, unit) = after.split_once(' ')?;
            let seconds: f64 = number.parse().ok()?;
            unit.starts_with("second")
                .then(|| (seconds * 1000.0).round() as u64)
        })
        .collect()
}

#[test]
fn the_waits_are_read_from_curl_7_and_curl_8_warnings() {
    let stderr = "Warning: Problem : HTTP error. Will retry in 1 seconds. 3 retries left.\n\
                  Warning: Problem : HTTP error. Retrying in 1.500 seconds. 2 retries left.\n\
                  Warning: Problem : HTTP error. Retrying in 1 second. 1 retry left.\n\
                  curl: (22) The requested URL returned error: 503\n";
    assert_eq!(announced_waits_ms(stderr), [1000, 1500, 1000]);
}

// ---- curl -----------------------------------------------------------------------------------

#[test]
fn curl_waits_each_retry_after_and_says_so() {
    if !curl() {
        return;
    }
    let report = real_scenario("curl-retry-after.yaml").run_builtin();
    passed(&report);
    let curl = process(&report);
    assert_eq!(curl.exit, ProcessExit::Code(0));
    assert_eq!(curl.stdout.text, "200");
    assert_eq!(announced_waits_ms(&curl.stderr.text), [1000, 1000, 1000]);
    // Its own schedule would have waited 2s and 4s before the last two retries.
    assert!(gaps(&report).iter().all(|gap| (1000..1500).contains(gap)));
    // With --fail, curl stops reading a 503 at its head and closes the connection.
    let conns: Vec<ConnUse> = report.trace().attempts.iter().map(|a| a.conn).collect();
    assert_eq!(conns, [ConnUse::New; 4]);
}

#[test]
fn curl_waits_an_http_date_retry_after_dated_from_the_real_clock() {
    if !curl() {
        return;
    }
    let report = real_scenario("curl-retry-after-http-date.yaml").run_builtin();
    passed(&report);
    let curl = process(&report);
    assert_eq!(curl.exit, ProcessExit::Code(0));
    assert_eq!(curl.stdout.text, "200");
    // curl reads the date against its own clock in whole seconds: from its current second
    // to the date, 2s on and rounded up, is 2s or 3s. A date from the default epoch, long
    // past, would have been a wait of 0.
    let waits = announced_waits_ms(&curl.stderr.text);
    assert!(waits == [2000] || waits == [3000], "{waits:?}");
}

#[test]
fn curl_gives_up_on_a_retry_after_past_its_max_time() {
    if !curl() {
        return;
    }
    let report = real_scenario("curl-retry-after-past-max-time.yaml").run_builtin();
    passed(&report);
    // Exit code 22 is --fail's: the last answer was the 503, and no wait was announced.
    let curl = process(&report);
    assert_eq!(curl.exit, ProcessExit::Code(22));
    assert_eq!(curl.stdout.text, "503");
    assert_eq!(announced_waits_ms(&curl.stderr.text), Vec::<u64>::new());
}

// ---- urllib3 --------------------------------------------------------------------------------

/// urllib3's `get_backoff_time()`: 0 until two errors in a row, then `backoff_factor * 2 **
/// (consecutive_errors - 1)` (the files' factor is 0.2 s), capped at 120 s.
fn urllib3_backoff_ms(consecutive_errors: u32) -> u64 {
    if consecutive_errors <= 1 {
        return 0;
    }
    (200u64 << (consecutive_errors - 1).min(20)).min(120_000)
}

#[test]
fn urllib3_sleeps_as_its_backoff_formula_says() {
    if !urllib3() {
        return;
    }
    let report = real_scenario("urllib3-backoff.yaml").run_builtin();
    passed(&report);
    let printed = printed(&report);
    assert_eq!(printed["status"], 200);
    assert_eq!(printed["retried"], serde_json::json!([503, 503, 503]));
    // Gap n follows n consecutive 503s: get_backoff_time() then, plus at most 50ms of
    // urllib3's own work and the scheduler's.
    let gaps = gaps(&report);
    assert_eq!(gaps.len(), 3);
    for (n, gap) in (1..).zip(&gaps) {
        let formula = urllib3_backoff_ms(n);
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
    if !urllib3() {
        return;
    }
    let report = real_scenario("urllib3-retry-after.yaml").run_builtin();
    passed(&report);
    let printed = printed(&report);
    assert_eq!(printed["status"], 200);
    assert_eq!(printed["retried"], serde_json::json!([429, 429]));
    // The backoff would have been 0 and then 400ms.
    assert!(gaps(&report).iter().all(|gap| (1000..=1050).contains(gap)));
}

#[test]
fn urllib3_returns_a_post_s_503_without_retrying_it() {
    if !urllib3() {
        return;
    }
    let report = real_scenario("urllib3-post-not-retried.yaml").run_builtin();
    passed(&report);
    // Returned, not raised: urllib3 raises MaxRetryError only when it retried and ran out.
    assert_eq!(process(&report).exit, ProcessExit::Code(1));
    let printed = printed(&report);
    assert_eq!(printed["status"], 503);
    assert_eq!(printed["retried"], serde_json::json!([]));
    let trace = report.trace();
    assert_eq!(trace.name(trace.attempts[0].method), "POST");
}

#[test]
fn urllib3_raises_max_retry_error_when_its_retries_run_out() {
    if !urllib3() {
        return;
    }
    // Only 503s: the fourth attempt, the last `total=3` allows, gets a 503 too. Read from
    // text, the command's `cwd` is relative to where the test runs (the tests crate).
    let scenario = retrylab::Scenario::from_yaml_str(
        "version: 1\nname: out of retries\n\
         endpoints: { api: { script: [ { status: 503 } ] } }\n\
         operation: { endpoint: api }\nexpect: { attempts: 4, outcome: failure }\n\
         client:\n  command: [python3, tests/clients/python/urllib3_call.py, --total, '3', \
         --status-forcelist, '503', '{url}']\n  cwd: ..\n\
         limits: { wall: 20s }\n",
        "out-of-retries.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = scenario.run_builtin();
    passed(&report);
    let printed = printed(&report);
    assert_eq!(printed["exception"], "MaxRetryError");
    assert_eq!(printed["reason"], "ResponseError");
}
