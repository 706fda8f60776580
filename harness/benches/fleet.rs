//! A fleet under a rate limiter: N clients of the built-in client, exponential backoff with
//! full jitter and 5 attempts each, starting over the first second against one endpoint
//! whose token bucket admits 100 requests a second. `cargo bench -p retrylab --bench fleet`
//! prints, for 1,000, 10,000 and 100,000 clients, the attempts, the virtual time, the wall
//! time of the run and the process's peak resident memory (`VmHWM`). Each size runs in a
//! process of its own, so each peak is that size's alone.

use std::process::Command;
use std::time::Instant;

use retrylab::Scenario;

/// The sizes measured; the issue's figure is 10,000 (at most 10 s and 1 GiB in release).
const SIZES: [u32; 3] = [1_000, 10_000, 100_000];

/// The environment variable a child reads its fleet size from.
const CHILD: &str = "RETRYLAB_FLEET_BENCH_CLIENTS";

fn scenario(clients: u32) -> Scenario {
    let yaml = format!(
        r#"
version: 1
name: fleet of {clients} under a 100/s rate limiter
endpoints:
  api: {{ kind: rate_limiter, rate: 100, burst: 100, script: [ {{ status: 200 }} ] }}
operation: {{ endpoint: api, clients: {clients}, start: {{ uniform: [0s, 1s] }} }}
client: {{ exponential: {{ initial: 1s, multiplier: 2, max_delay: 20s, jitter: full, max_attempts: 5 }} }}
limits: {{ max_virtual_time: 1h, max_client_attempts: 1000000, wall: 600s }}
"#
    );
    match Scenario::from_yaml_str(&yaml, "fleet-bench.yaml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The peak resident memory of this process, from `/proc/self/status` (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The CPU time this process has used, user and system, in seconds, from
/// `/proc/self/stat` (Linux; in clock ticks of 1/100 s): on a machine busy with other work
/// it tells the run's cost apart from the time it waited for a CPU.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name, in parentheses, may hold spaces: count fields after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some((user + system) as f64 / 100.0)
}

fn child(clients: u32) {
    let scenario = scenario(clients);
    let started = Instant::now();
    let cpu_before = cpu_seconds();
    let report = scenario.run_builtin();
    let wall = started.elapsed();
    let cpu = cpu_seconds()
        .zip(cpu_before)
        .map_or("?".to_owned(), |(after, before)| {
            format!("{:.2}s", after - before)
        });
    let trace = report.trace();
    let succeeded = trace
        .calls
        .iter()
        .filter(|c| matches!(c.result, retrylab::trace::CallResult::Success(_)))
        .count();
    println!(
        "{clients:>7} clients: {:>7} attempts, {:>6} calls ok, {:>7.1}s virtual, {:>7.3}s wall \
         ({cpu} CPU; {:.1} us/attempt), peak RSS {} MiB, run end {:?}",
        trace.attempts.len(),
        succeeded,
        trace.end_ms as f64 / 1000.0,
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e6 / trace.attempts.len().max(1) as f64,
        peak_rss_kib().map_or("?".to_owned(), |k| (k / 1024).to_string()),
        report.end()
    );
}

fn main() {
    if let Some(clients) = std::env::var(CHILD).ok().and_then(|v| v.parse().ok()) {
        return child(clients);
    }
    // `cargo test --benches` runs this binary too; only `cargo bench` passes --bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Ok(me) = std::env::current_exe() else {
        panic!("the bench cannot find its own executable");
    };
    for clients in SIZES {
        let status = Command::new(&me).env(CHILD, clients.to_string()).status();
        if !status.as_ref().is_ok_and(|s| s.success()) {
            panic!("the run of {clients} clients failed: {status:?}");
        }
    }
}
