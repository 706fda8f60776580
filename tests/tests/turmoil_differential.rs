//! The differential test: every library scenario that turmoil can play runs on the sim
//! network and in a turmoil simulation, with the same client, and the two runs must agree:
//! attempt counts, outcomes, effects and verdicts equal, and each gap within 2 ticks (2 ms).
//! A file that disagrees prints both timelines side by side.
//!
//! Files with backend-specific faults (those turmoil refuses when the scenario loads:
//! `network.faults` partitions and latency distributions under `network:`), files whose `custom:`
//! client is not in this build and files written for another backend are not compared; the
//! test prints each with its reason, and fails on any other failure to load or run a file.
//! The rest are compared, except the files `tests/turmoil_exclusions.txt` lists, each with
//! its reason. The files not played on turmoil, listed and refused together, may be at most
//! a fifth of the files turmoil could play: those of the library written for the sim backend
//! whose client is in this build. A listed file is rerun, unless its reason starts `not rerun:`,
//! and must still disagree.

use std::collections::BTreeMap;
use std::path::Path;

use retrylab::Report;
use retrylab::scenario::{BackendKind, ClientSpec, Scenario};
use retrylab::suite::{Clients, ScenarioFile, scenario_files};

/// The slack on every gap: turmoil delivers a message at a tick, and a tick is 1 ms.
const GAP_TICKS_MS: u64 = 2;

/// `tests/turmoil_exclusions.txt`: each listed file, with its reason.
fn exclusions() -> BTreeMap<String, String> {
    let list = concat!(env!("CARGO_MANIFEST_DIR"), "/turmoil_exclusions.txt");
    let text = std::fs::read_to_string(list).unwrap_or_else(|e| panic!("{list}: {e}"));
    let mut excluded = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (file, reason) = line
            .split_once(" # ")
            .unwrap_or_else(|| panic!("{list}: `{line}` gives no reason after ` # `"));
        let reason = reason.trim();
        assert!(!reason.is_empty(), "{list}: `{file}` gives no reason");
        assert!(
            excluded
                .insert(file.trim().to_owned(), reason.to_owned())
                .is_none(),
            "{list}: `{file}` is listed twice"
        );
    }
    excluded
}

/// What the two runs must agree on, one line per attempt and per effect, and the verdicts.
fn judged(report: &Report) -> Vec<String> {
    let trace = report.trace();
    let mut lines = vec![format!("end {:?}", report.end())];
    for a in &trace.attempts {
        lines.push(format!(
            "call {} attempt {}: {:?}",
            a.call_id, a.n, a.outcome
        ));
    }
    for e in &trace.effects {
        lines.push(format!(
            "effect on {} of call {:?} attempt {:?}",
            trace.name(e.endpoint),
            e.call_id,
            e.attempt_id
        ));
    }
    for v in report.verdicts() {
        lines.push(format!("verdict {}: {:?}", v.check, v.judgement));
    }
    lines
}

/// Where the gaps of the two runs differ by more than [`GAP_TICKS_MS`].
fn gap_differences(sim: &Report, turmoil: &Report) -> Vec<String> {
    let (s, t) = (sim.trace(), turmoil.trace());
    s.attempts
        .iter()
        .zip(&t.attempts)
        .filter_map(|(a, b)| {
            let (ga, gb) = (s.gap_before(a)?, t.gap_before(b)?);
            (ga.abs_diff(gb) > GAP_TICKS_MS).then(|| {
                format!(
                    "call {} attempt {}: gap {ga}ms on sim, {gb}ms on turmoil",
                    a.call_id, a.n
                )
            })
        })
        .collect()
}

/// Both timelines, one attempt a line, sim on the left.
fn side_by_side(sim: &Report, turmoil: &Report) -> String {
    let line = |report: &Report, i: usize| {
        let trace = report.trace();
        trace.attempts.get(i).map_or_else(String::new, |a| {
            let gap = trace
                .gap_before(a)
                .map_or_else(String::new, |g| format!(" gap {g}ms"));
            format!(
                "t={}ms c{} #{} {:?}{gap}",
                a.start_ms, a.call_id, a.n, a.outcome
            )
        })
    };
    let rows = sim
        .trace()
        .attempts
        .len()
        .max(turmoil.trace().attempts.len());
    let mut out = format!("    {:<48} | turmoil\n", "sim");
    for i in 0..rows {
        out += &format!("    {:<48} | {}\n", line(sim, i), line(turmoil, i));
    }
    for (side, report) in [("sim", sim), ("turmoil", turmoil)] {
        for v in report.failures() {
            out += &format!("    {side} failed {}: {}\n", v.check, v.message);
        }
    }
    out
}

/// Why a library file is not compared.
enum Skip {
    /// Written for another backend (its name).
    Backend(String),
    /// A `custom:` client registered as unavailable in this build (the reason).
    NotInThisBuild(String),
    /// Refused by the turmoil backend when the scenario loads (the refusal).
    Refused(String),
}

/// Both runs of a file, or why there are none. An `Err` is a failure no file should have
/// (it does not load, its seed or a run fails): the test fails on it.
fn both_runs(
    file: &ScenarioFile,
    clients: &Clients,
) -> Result<Result<(Report, Report), Skip>, String> {
    let relative = &file.display;
    let loaded = Scenario::load_as(&file.path, relative).map_err(|e| e.to_string())?;
    if !loaded.backend.is_sim() {
        return Ok(Err(Skip::Backend(loaded.backend.name().to_owned())));
    }
    if let ClientSpec::Custom(name) = &loaded.client {
        if let Some(reason) = clients.unavailable_reason(name) {
            return Ok(Err(Skip::NotInThisBuild(format!("`{name}`: {reason}"))));
        }
    }
    let on = |backend: BackendKind| -> Result<Report, String> {
        let mut scenario = loaded.clone();
        scenario.backend = backend;
        let seed = scenario.effective_seed().map_err(|e| e.to_string())?;
        clients
            .run(&scenario, seed)
            .map_err(|e| format!("the {} run failed: {e}", backend.name()))
    };
    let mut on_turmoil = loaded.clone();
    on_turmoil.backend = BackendKind::Turmoil;
    // Turmoil refuses what it cannot play, when the scenario loads.
    if let Err(errors) = on_turmoil.validate() {
        let first = errors.to_string();
        let first = first.lines().next().unwrap_or_default().to_owned();
        return Ok(Err(Skip::Refused(first)));
    }
    Ok(Ok((on(BackendKind::Sim)?, on(BackendKind::Turmoil)?)))
}

/// Why the two runs of a file disagree, or nothing when they agree.
fn disagreement(sim: &Report, turmoil: &Report) -> Vec<String> {
    let (js, jt) = (judged(sim), judged(turmoil));
    let mut why: Vec<String> = js
        .iter()
        .zip(&jt)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("sim `{a}`, turmoil `{b}`"))
        .take(4)
        .collect();
    if js.len() != jt.len() {
        why.push(format!(
            "{} records on sim, {} on turmoil",
            js.len(),
            jt.len()
        ));
    }
    why.extend(gap_differences(sim, turmoil));
    why
}

/// The reason of an exclusion the test does not rerun: it starts with this.
const NOT_RERUN: &str = "not rerun:";

#[test]
fn every_library_file_turmoil_can_play_judges_alike_on_sim_and_turmoil() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let clients: Clients = retrylab_tests::clients::registry();
    let excluded = exclusions();
    // Tests run in the tests crate's directory.
    let files = scenario_files("../scenarios".as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut compared = 0;
    let (mut backend, mut not_in_build, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    let mut differing = Vec::new();
    let mut unexpected = Vec::new();
    let mut stale = Vec::new();
    for file in &files {
        let relative = file.display.clone();
        if let Some(reason) = excluded.get(&relative) {
            // A listed file that now agrees no longer needs its place on the list.
            if !reason.starts_with(NOT_RERUN) {
                match both_runs(file, &clients) {
                    Ok(Ok((sim, turmoil))) if disagreement(&sim, &turmoil).is_empty() => {
                        stale.push(format!("{relative} is listed but now agrees"));
                    }
                    Ok(Ok(_)) => {}
                    Ok(Err(_)) => {
                        stale.push(format!("{relative} is listed but is not compared anyway"))
                    }
                    Err(error) => unexpected.push(format!("{relative}: {error}")),
                }
            }
            continue;
        }
        let (sim, turmoil) = match both_runs(file, &clients) {
            Ok(Ok(runs)) => runs,
            Ok(Err(Skip::Backend(name))) => {
                backend.push(format!("{relative} (backend: {name})"));
                continue;
            }
            Ok(Err(Skip::NotInThisBuild(why))) => {
                not_in_build.push(format!("{relative} ({why})"));
                continue;
            }
            Ok(Err(Skip::Refused(why))) => {
                refused.push(why);
                continue;
            }
            Err(error) => {
                unexpected.push(format!("{relative}: {error}"));
                continue;
            }
        };
        compared += 1;
        let why = disagreement(&sim, &turmoil);
        if !why.is_empty() {
            differing.push(format!(
                "{relative}:\n  {}\n{}",
                why.join("\n  "),
                side_by_side(&sim, &turmoil)
            ));
        }
    }
    // A listed file must still exist, so the list cannot rot.
    for file in excluded.keys() {
        if !Path::new(root).join(file).exists() {
            stale.push(format!("{file} is listed but does not exist"));
        }
    }
    println!(
        "{} library files: {compared} compared, {} excluded (tests/turmoil_exclusions.txt), \
         {} refused by the turmoil backend at load, {} with a client not in this build, {} \
         written for another backend",
        files.len(),
        excluded.len(),
        refused.len(),
        not_in_build.len(),
        backend.len()
    );
    for (what, list) in [
        ("refused", &refused),
        ("not in this build", &not_in_build),
        ("another backend", &backend),
    ] {
        for line in list {
            println!("  {what}: {line}");
        }
    }
    // Listed and refused alike are library files turmoil does not play: the cap counts both,
    // against the files it could have played. A file written for another backend, or whose
    // client this build lacks, is no candidate: counting it would loosen the cap as such
    // files are added. (A listed file is a candidate: the stale check above says so.)
    let not_played = excluded.len() + refused.len();
    let candidates = files.len() - backend.len() - not_in_build.len();
    let limit = candidates / 5;
    println!(
        "excluded and refused together: {not_played} of the {candidates} sim files with \
         their client in this build ({}%), at most a fifth: {limit}",
        not_played * 100 / candidates.max(1)
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
    assert!(
        not_played <= limit,
        "{} files are excluded and {} refused, {not_played} together: more than a fifth of \
         the {candidates} sim files with their client in this build",
        excluded.len(),
        refused.len(),
    );
    assert!(stale.is_empty(), "{}", stale.join("\n"));
    assert!(
        differing.is_empty(),
        "{} of {compared} compared files differ between sim and turmoil:\n{}",
        differing.len(),
        differing.join("\n")
    );
    assert!(compared > 0);
}
