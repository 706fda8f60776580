//! The differential test: every library scenario that turmoil can play runs on the sim
//! network and in a turmoil simulation, with the same client, and the two runs must agree:
//! attempt counts, outcomes, effects and verdicts equal, and each gap within 2 ticks (2 ms).
//! A file that disagrees prints both timelines side by side.
//!
//! Files with backend-specific faults (those turmoil refuses when the scenario loads:
//! `network.faults`, latency distributions, connect steps that refuse or black-hole, steps
//! that reset) and files written for another backend are not compared. The rest are, except
//! the files `tests/turmoil_exclusions.txt` lists, each with its reason; at most a fifth of
//! the library may be listed.

use std::collections::BTreeMap;
use std::path::Path;

use retrylab::Report;
use retrylab::scenario::{BackendKind, Scenario};
use retrylab::suite::{Clients, scenario_files};

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

#[test]
fn every_library_file_turmoil_can_play_judges_alike_on_sim_and_turmoil() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let clients: Clients = retrylab_tests::clients::registry();
    let excluded = exclusions();
    // Tests run in the tests crate's directory.
    let files = scenario_files("../scenarios".as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut compared = 0;
    let mut backend_specific = 0;
    let mut differing = Vec::new();
    let mut listed_but_alike = Vec::new();
    for file in &files {
        let relative = file.display.clone();
        let on = |backend: BackendKind| -> Option<Report> {
            let mut scenario = Scenario::load_as(&file.path, &relative).ok()?;
            if !scenario.backend.is_sim() {
                return None;
            }
            scenario.backend = backend;
            // Turmoil refuses what it cannot play, when the scenario loads.
            scenario.validate().ok()?;
            let seed = scenario.effective_seed().ok()?;
            clients.run(&scenario, seed).ok()
        };
        if excluded.contains_key(&relative) {
            continue;
        }
        let Some(turmoil) = on(BackendKind::Turmoil) else {
            backend_specific += 1;
            continue;
        };
        let Some(sim) = on(BackendKind::Sim) else {
            backend_specific += 1;
            continue;
        };
        compared += 1;
        let (js, jt) = (judged(&sim), judged(&turmoil));
        let gaps = gap_differences(&sim, &turmoil);
        if js != jt || !gaps.is_empty() {
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
            why.extend(gaps);
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
            listed_but_alike.push(format!("{file} is listed but does not exist"));
        }
    }
    let limit = files.len() / 5;
    assert!(
        excluded.len() <= limit,
        "{} files are excluded, more than a fifth of the library's {}",
        excluded.len(),
        files.len()
    );
    assert!(
        listed_but_alike.is_empty(),
        "{}",
        listed_but_alike.join("\n")
    );
    assert!(
        differing.is_empty(),
        "{} of {compared} compared files differ between sim and turmoil ({backend_specific} \
         backend-specific, {} excluded):\n{}",
        differing.len(),
        excluded.len(),
        differing.join("\n")
    );
    assert!(compared > 0);
}
