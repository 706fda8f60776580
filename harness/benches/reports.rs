//! What a run costs after its attempts: judging, the summary, the snapshot and the JSON of
//! long runs, and many short calls against one long one.
//!
//! `cargo bench -p retrylab --bench reports` prints one line per case. The wall clock is read
//! here, in the benchmark, never on the simulated path. `REPORTS_ONLY=render` (or `calls`)
//! runs one group; any other value stops the bench.
//!
//! - render: one call of 100,000 attempts (the built-in fixed client against an endpoint that
//!   always answers 503), then `summary()`, `snapshot_text()` and `to_json()` of its report,
//!   each against the run's own time.
//! - calls: 100,000 calls of 10 attempts against one call of 1,000,000 attempts (the most a
//!   run may make, `MAX_ATTEMPTS`): the same attempts, split into calls that every per-call
//!   check visits; and the peak resident memory of the process after the long run
//!   (`VmHWM`, Linux), per attempt. This group runs first: the peak covers everything the
//!   process did, and a peak that an earlier group had raised would hide part of the long
//!   run's memory (after the render group it read 808 bytes per attempt where the long run
//!   alone takes 936).

use std::time::{Duration, Instant};

use retrylab::Report;
use retrylab::scenario::Scenario;

fn scenario(calls: u32, attempts_per_call: u32) -> Scenario {
    let total = u64::from(calls) * u64::from(attempts_per_call);
    let yaml = format!(
        "version: 1\nname: bench\nendpoints:\n  api:\n    script: [ {{ status: 503 }} ]\n\
         network: {{ latency: 1ms }}\noperation: {{ endpoint: api, method: POST, path: /orders, calls: {calls} }}\n\
         client: {{ fixed: {{ delay: 20s, max_attempts: {attempts_per_call} }} }}\n\
         expect: {{ outcome: failure, attempts: {attempts_per_call}, stop_reason: max_attempts_exceeded, \
         gaps_each: {{ within: [20s, 20s] }}, conforms_to: {{ fixed: {{ delay: 20s, max_attempts: {attempts_per_call} }} }} }}\n\
         limits: {{ max_virtual_time: 3650d, max_client_attempts: {}, wall: 1h }}\n",
        total
    );
    match Scenario::from_yaml_str(&yaml, "bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// Runs `scenario` with its built-in client and checks that every verdict passed (a bench
/// of a failing run would measure the wrong thing).
fn run(scenario: &Scenario) -> (Duration, Report) {
    let started = Instant::now();
    let report = scenario.run_builtin();
    let elapsed = started.elapsed();
    assert!(report.passed(), "{}", report.summary());
    (elapsed, report)
}

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let out = f();
    (started.elapsed(), out)
}

fn render() {
    let (ran, report) = run(&scenario(1, 100_000));
    let attempts = report.trace().attempts.len();
    let (summary, text) = timed(|| report.summary());
    let (snapshot, snap) = timed(|| report.snapshot_text());
    let (json, doc) = timed(|| report.trace().to_json());
    println!(
        "render: {attempts} attempts in one call, run {:.3}s; summary() {:.3}s ({} bytes), \
         snapshot_text() {:.3}s ({} bytes), to_json() {:.3}s ({} bytes); \
         summary + snapshot = {:.2}x the run",
        ran.as_secs_f64(),
        summary.as_secs_f64(),
        text.len(),
        snapshot.as_secs_f64(),
        snap.len(),
        json.as_secs_f64(),
        doc.len(),
        (summary + snapshot).as_secs_f64() / ran.as_secs_f64()
    );
}

/// The process's peak resident set size in bytes, where Linux reports it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `n` as a count of calls or attempts in a scenario, which the format holds in a `u32`.
fn attempts_u32(n: u64) -> u32 {
    match u32::try_from(n) {
        Ok(n) => n,
        Err(e) => panic!("{n}: {e}"),
    }
}

fn calls() {
    let most = retrylab::internals::MAX_ATTEMPTS;
    let before = peak_rss();
    let (one, long) = run(&scenario(1, attempts_u32(most)));
    let attempts = long.trace().attempts.len() as u64;
    match (before, peak_rss()) {
        (Some(before), Some(after)) => println!(
            "memory: peak RSS {} MiB before, {} MiB after 1 call x {attempts} attempts: \
             {} bytes per attempt",
            before / (1 << 20),
            after / (1 << 20),
            after.saturating_sub(before) / attempts.max(1)
        ),
        _ => println!("memory: no peak RSS on this system (/proc/self/status)"),
    }
    // The long run's report is freed first, so the short calls start on the same heap.
    drop(long);
    let (many, short) = run(&scenario(attempts_u32(most / 10), 10));
    println!(
        "calls: 1 call x {attempts} attempts in {:.3}s; {} calls x 10 attempts ({} attempts) in \
         {:.3}s = {:.2}x",
        one.as_secs_f64(),
        short.trace().calls.len(),
        short.trace().attempts.len(),
        many.as_secs_f64(),
        many.as_secs_f64() / one.as_secs_f64()
    );
}

fn main() {
    let only = std::env::var("REPORTS_ONLY").unwrap_or_default();
    if !["", "render", "calls"].contains(&only.as_str()) {
        eprintln!("REPORTS_ONLY={only}: expected `render` or `calls` (unset runs both)");
        std::process::exit(2);
    }
    // The calls group reads the process's peak memory: it runs before anything else raises it.
    if only.is_empty() || only == "calls" {
        calls();
    }
    if only.is_empty() || only == "render" {
        render();
    }
}
