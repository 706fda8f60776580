//! The test runner: one named test per scenario file (and per seed of a `seeds:` sweep), for
//! a `harness = false` test target, built on libtest-mimic so that `cargo test -- --list`,
//! filters and `cargo nextest run --partition` work as for any test.
//!
//! ```no_run
//! // tests/scenarios.rs, with `[[test]] name = "scenarios" harness = false` in Cargo.toml
//! use retrylab::suite::Clients;
//!
//! retrylab::scenario_main!(dir = "scenarios", clients = Clients::new().register("orders", |env| async move {
//!     let response = env.http_client().request(env.operation().request()).await;
//!     response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
//! }));
//! ```

mod clients;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};

pub use self::clients::Clients;
pub use crate::scenario::yaml::walk::{Scan, ScenarioFile, Skipped, scan, scenario_files};
use crate::scenario::{ClientSpec, Scenario};

/// Builds the tests for every scenario under `dir` and runs them with libtest-mimic's
/// command line (what [`scenario_main!`](crate::scenario_main) expands to).
// Plumbing of the macro, public only because a macro expands in the user's crate: hidden
// from the docs, outside the stability promise.
#[doc(hidden)]
pub fn main(dir: &Path, clients: Clients) -> ! {
    // A Ctrl-C of `cargo test` must not orphan the command clients of the files running.
    crate::client::kill_commands_on_signal();
    let args = Arguments::from_args();
    let trials = trials(dir, clients);
    libtest_mimic::run(&args, trials).exit()
}

/// The tests for every scenario under `dir`: one per file, one per seed of a `seeds:` sweep.
///
/// ```
/// use retrylab::suite::{trials, Clients};
///
/// let tests = trials("../scenarios".as_ref(), Clients::new());
/// assert!(tests.iter().any(|t| t.name() == "http/5xx-burst-then-success"));
/// assert!(tests.iter().any(|t| t.name() == "policies/full-jitter-100-attempts@seed-3"));
/// ```
// What `main` runs, for a harness of one's own on libtest-mimic: hidden with it.
#[doc(hidden)]
pub fn trials(dir: &Path, clients: Clients) -> Vec<Trial> {
    let files = match scan(dir) {
        Ok(scan) => {
            for skipped in &scan.skipped {
                eprintln!("warning: {skipped}");
            }
            scan.files
        }
        Err(error) => {
            let message = format!(
                "cannot read the scenario directory {}: {error}",
                dir.display()
            );
            return vec![Trial::test("scenario_directory", move || {
                Err(message.into())
            })];
        }
    };
    let target = std::env::args()
        .next()
        .and_then(|exe| {
            let stem = Path::new(&exe).file_stem()?.to_string_lossy().into_owned();
            // Test binaries are named `<target>-<hash>`.
            Some(
                stem.rsplit_once('-')
                    .map_or(stem.clone(), |(t, _)| t.to_owned()),
            )
        })
        .unwrap_or_else(|| "scenarios".to_owned());
    let mut trials = Vec::new();
    // Scenarios of each unavailable client, to say once why they are ignored.
    let mut ignored: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    // Scenarios that need a feature of retrylab this build lacks, by feature.
    let mut lacking: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for file in files {
        let scenario = match Scenario::load_as(&file.path, &file.display) {
            Ok(scenario) => Arc::new(scenario),
            Err(errors) => {
                let message = errors.to_string();
                let trial = Trial::test(file.test_name.clone(), move || Err(message.into()));
                match errors.lacking_feature() {
                    // Sound, but not for this build: ignored, as a client that is not in it
                    // is. `--include-ignored` runs it, and it fails saying which feature it
                    // needs.
                    Some(feature) => {
                        lacking.entry(feature).or_default().push(file.test_name);
                        trials.push(trial.with_ignored_flag(true));
                    }
                    None => trials.push(trial),
                }
                continue;
            }
        };
        #[cfg(feature = "search")]
        if scenario.search.is_some() {
            trials.extend(search_trials(&file, &scenario, &clients, dir, &target));
            continue;
        }
        // Loading bounded the range (`MAX_SEEDS`): a test per seed is listed only for a
        // range that loads.
        let seeds = match &scenario.seeds {
            Some(range) => range.iter(),
            None => scenario.seed..=scenario.seed,
        };
        let many = seeds.start() != seeds.end();
        for seed in seeds {
            let name = if many {
                format!("{}@seed-{seed}", file.test_name)
            } else {
                file.test_name.clone()
            };
            let scenario = scenario.clone();
            let clients = clients.clone();
            let repro =
                format!("RETRYLAB_SEED={seed} cargo test --test {target} -- --exact {name}");
            let kind = match &scenario.client {
                ClientSpec::Custom(client) => format!("custom:{client}"),
                ClientSpec::Command(command) => format!("command:{}", command.program()),
                other => other.name().to_owned(),
            };
            let unavailable = clients.unavailable_here(&scenario);
            if let Some(reason) = &unavailable {
                ignored
                    .entry(kind.clone())
                    .or_default()
                    .push((name.clone(), reason.clone()));
            }
            let unavailable = unavailable.is_some();
            trials.push(
                Trial::test(name, move || run_one(&scenario, seed, &clients, &repro))
                    .with_kind(kind)
                    .with_ignored_flag(unavailable),
            );
        }
    }
    for (feature, names) in &lacking {
        eprintln!(
            "note: {} scenario test(s) ignored, they need retrylab's `{feature}` feature, which \
             this build lacks: run them with `cargo test --test {target} --features \
             retrylab/{feature}` ({})",
            names.len(),
            names.join(", ")
        );
    }
    for (client, tests) in &ignored {
        let reason = tests.first().map_or("", |(_, reason)| reason.as_str());
        let names: Vec<&str> = tests.iter().map(|(name, _)| name.as_str()).collect();
        eprintln!(
            "note: {} scenario test(s) ignored, their client `{client}` cannot run here: \
             {reason} ({})",
            names.len(),
            names.join(", ")
        );
    }
    trials
}

fn run_one(scenario: &Scenario, seed: u64, clients: &Clients, repro: &str) -> Result<(), Failed> {
    let seed = crate::overrides::seed()
        .map_err(|e| Failed::from(e.to_string()))?
        .unwrap_or(seed);
    let report = clients
        .run(scenario, seed)
        .map_err(|error| Failed::from(error.to_string()))?;
    // The failure is returned, not raised: a panic would print the report once from the
    // panic hook and once more as the test's failure message.
    if !report.passed() {
        return Err(format!(
            "{}seed {seed}; reproduce with:\n  {repro}",
            report.summary()
        )
        .into());
    }
    if let Some(why) = &report.snapshot_skipped {
        eprintln!("{}: {why}", report.name);
    }
    let Some(name) = &report.snapshot else {
        return Ok(());
    };
    // insta prints the diff itself and then panics with a one-line message.
    let asserted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::report::assert_snapshot(name, &report.snapshot_text());
    }));
    asserted.map_err(|_| {
        Failed::from(format!(
            "the snapshot `{name}` differs (the diff is above): review it with \
             `cargo insta review`, or reproduce with:\n  {repro}"
        ))
    })
}

/// The tests of a file with a `search:` block: one per shard of
/// [`SHARD_CASES`](crate::internals::SHARD_CASES) cases, or a
/// single one for a search that `must_fail` (a shard that finds nothing cannot know whether
/// another found the failure).
#[cfg(feature = "search")]
fn search_trials(
    file: &ScenarioFile,
    scenario: &Arc<Scenario>,
    clients: &Clients,
    dir: &Path,
    target: &str,
) -> Vec<Trial> {
    use crate::search::Shard;
    let cases = match crate::overrides::cases() {
        Ok(cases) => cases.unwrap_or_else(|| scenario.search.as_ref().map_or(1, |s| s.cases)),
        Err(e) => {
            let message = e.to_string();
            return vec![Trial::test(file.test_name.clone(), move || {
                Err(message.into())
            })];
        }
    };
    let shards = if scenario.must_fail.is_empty() {
        cases.div_ceil(crate::internals::SHARD_CASES).max(1)
    } else {
        1
    };
    let regressions = dir.join("regressions");
    (1..=shards)
        .filter_map(|k| Shard::new(k, shards))
        .map(|shard| {
            let name = if shards > 1 {
                format!(
                    "{}@shard-{}-of-{}",
                    file.test_name,
                    shard.index(),
                    shard.count()
                )
            } else {
                file.test_name.clone()
            };
            let repro = format!("cargo test --test {target} -- --exact {name}");
            let scenario = scenario.clone();
            let clients = clients.clone();
            let regressions = regressions.clone();
            Trial::test(name, move || {
                run_search(&scenario, shard, &clients, &regressions, &repro)
            })
            .with_kind("search")
        })
        .collect()
}

/// One shard of a file's search: passes when no case fails, or, for a file with
/// `must_fail`, when the smallest failing case fails exactly those checks. Any other failure
/// is written as a regression file under `regressions`, whose path the failure names.
#[cfg(feature = "search")]
fn run_search(
    scenario: &Scenario,
    shard: crate::search::Shard,
    clients: &Clients,
    regressions: &Path,
    repro: &str,
) -> Result<(), Failed> {
    use crate::search::{SearchConfig, search};
    let client = clients
        .search_client(scenario)
        .map_err(|e| Failed::from(e.to_string()))?;
    let Some((config, invariants)) = SearchConfig::from_block(scenario) else {
        return Err("the scenario has no `search:` block".into());
    };
    // libtest already runs the shards' tests side by side: a pool per test on top of that
    // would multiply the threads by the machine's parallelism.
    let config = config.shard(shard).regressions(regressions).threads(1);
    let outcome = search(config)
        .run(move |env| client(env), &invariants)
        .map_err(|e| Failed::from(e.to_string()))?;
    match outcome.judge(&scenario.must_fail, regressions) {
        Ok(_) => Ok(()),
        Err(why) => Err(format!("{why}\nreproduce with:\n  {repro}").into()),
    }
}

/// The `main` of a `harness = false` test target that runs every scenario under `dir`
/// (relative to the crate's `Cargo.toml`), one test per file and per seed.
///
/// `clients = ...` registers Rust clients for `client: { custom: <name> }`.
#[macro_export]
macro_rules! scenario_main {
    (dir = $dir:expr $(,)?) => {
        $crate::scenario_main!(dir = $dir, clients = $crate::suite::Clients::new());
    };
    (dir = $dir:expr, clients = $clients:expr $(,)?) => {
        fn main() {
            let dir = ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join($dir);
            $crate::suite::main(&dir, $clients)
        }
    };
}

#[cfg(test)]
mod tests;
