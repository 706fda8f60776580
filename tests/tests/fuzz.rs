//! Mutation fuzzing of the scenario parser.
//!
//! Starting from the valid scenarios in `scenarios/`, each case deletes, duplicates, retypes
//! and renames nodes of the YAML tree, then damages the text (duplicated or deleted lines,
//! stray characters, truncation). Whatever comes out, parsing must not panic, and it must
//! return either a scenario (which then serializes and re-parses to an equal value) or
//! located errors.
//!
//! `cargo test -p retrylab-tests --test fuzz` runs 20,000 cases in four quarters; the long run
//! is `cargo test --release -p retrylab-tests --test fuzz -- --ignored --nocapture`
//! (1,000,000 cases, or `RETRYLAB_FUZZ_CASES`). Both draw from `RETRYLAB_FUZZ_SEED` (a fixed
//! default when unset) and print the seed each run used, so `RETRYLAB_FUZZ_SEED=<seed>`
//! replays a failure exactly.

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use retrylab::scenario::Scenario;
use serde_json::{Map, Value};

/// The valid scenarios, as text.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the tests crate sits in the workspace")
            .join("scenarios");
        let texts: Vec<String> = retrylab::suite::scenario_files(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .iter()
            .map(|file| {
                std::fs::read_to_string(&file.path)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display))
            })
            .collect();
        assert!(!texts.is_empty(), "no scenarios to mutate");
        texts
    })
}

/// Keys of the format, so renames and copies produce plausible mistakes as well as noise.
const KEYS: &[&str] = &[
    "version",
    "name",
    "seed",
    "seeds",
    "endpoints",
    "network",
    "operation",
    "client",
    "expect",
    "must_fail",
    "limits",
    "drain",
    "epoch",
    "backend",
    "script",
    "routes",
    "timeline",
    "status",
    "times",
    "fail",
    "retry_after",
    "latency",
    "headers",
    "body",
    "p",
    "then",
    "else",
    "commit",
    "connect",
    "action",
    "scope",
    "kind",
    "dedupe",
    "keep_alive",
    "endpoint",
    "method",
    "path",
    "calls",
    "exponential",
    "fixed",
    "linear",
    "no_retry",
    "custom",
    "sns_delivery",
    "grpc_retry",
    "initial",
    "max_delay",
    "jitter",
    "max_attempts",
    "attempts",
    "gaps",
    "within",
    "at_least",
    "effects",
    "outcome",
    "conforms_to",
    "faults",
    "partition",
    "crash",
    "uniform",
    "http_date",
    "raw",
    "min",
    "max",
    "during",
    "trickle",
    "error_code",
    "idempotency_key",
    "header",
];

/// Values of every YAML type, including near misses of valid values.
fn replacement(k: u8) -> Value {
    match k % 24 {
        0 => Value::String("x".into()),
        1 => Value::from(0),
        2 => Value::from(-1),
        3 => Value::from(1.5),
        4 => Value::Bool(true),
        5 => Value::Null,
        6 => Value::Object(Map::new()),
        7 => Value::Array(Vec::new()),
        8 => Value::from(u64::MAX),
        9 => Value::String("1.5ms".into()),
        10 => Value::String("99999999999999999999d".into()),
        11 => Value::String("250ms".into()),
        12 => Value::from(700),
        13 => Value::from(503),
        14 => Value::Array(vec![Value::from(1), Value::from(2), Value::from(3)]),
        15 => serde_json::json!({ "exponential": { "initial": "1s" } }),
        16 => serde_json::json!([{ "status": 200 }]),
        17 => Value::String("".into()),
        18 => Value::String("none".into()),
        19 => serde_json::json!({ "min": 5, "max": 2 }),
        20 => serde_json::json!({ "uniform": ["2s", "1s"] }),
        21 => Value::String("1..0".into()),
        22 => Value::from(i64::MIN),
        _ => Value::String("\u{1F600}\n\t\"'".into()),
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Remove a node (a mapping entry or a list item).
    Delete(usize),
    /// Copy a node over another one, or into a list beside itself.
    Duplicate(usize, usize),
    /// Replace a node by a value of some type.
    Retype(usize, u8),
    /// Change a key: a typo, another key of the format, or case.
    Rename(usize, u8, usize),
}

#[derive(Clone, Debug)]
enum TextMutation {
    DuplicateLine(usize),
    DeleteLine(usize),
    Insert(usize, char),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, k)| Mutation::Retype(a, k)),
        (any::<usize>(), any::<u8>(), any::<usize>())
            .prop_map(|(a, k, i)| Mutation::Rename(a, k, i)),
    ]
}

fn text_mutation() -> impl Strategy<Value = TextMutation> {
    prop_oneof![
        any::<usize>().prop_map(TextMutation::DuplicateLine),
        any::<usize>().prop_map(TextMutation::DeleteLine),
        (
            any::<usize>(),
            prop::sample::select(vec![
                ':', '-', '[', ']', '{', '}', '"', '\'', '\t', '#', '&', '*', '!', '%', '@', '`',
                '|', '>', ' ', '\n', ',', '?', '\u{0}', '\u{FEFF}', 'é',
            ])
        )
            .prop_map(|(at, c)| TextMutation::Insert(at, c)),
        any::<usize>().prop_map(TextMutation::Truncate),
    ]
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every node's path, root first, in document order.
fn paths(v: &Value, here: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                here.push(Seg::Key(k.clone()));
                paths(child, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                here.push(Seg::Index(i));
                paths(child, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn get<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn typo(key: &str, k: u8) -> String {
    let mut chars: Vec<char> = key.chars().collect();
    match k % 5 {
        0 if !chars.is_empty() => {
            chars.remove(chars.len() / 2);
        }
        1 if chars.len() > 1 => chars.swap(0, 1),
        2 => chars.push('s'),
        3 => return key.to_uppercase(),
        _ => return key.replace('_', "-"),
    }
    chars.into_iter().collect()
}

fn apply(doc: &mut Value, m: &Mutation) {
    let mut all = Vec::new();
    paths(doc, &mut Vec::new(), &mut all);
    let pick = |i: usize| all[i % all.len()].clone();
    match m {
        Mutation::Delete(i) => {
            let path = pick(*i);
            let Some((last, parent)) = path.split_last() else {
                *doc = Value::Null;
                return;
            };
            match (last, get_mut(doc, parent)) {
                (Seg::Key(k), Some(Value::Object(m))) => {
                    m.remove(k);
                }
                (Seg::Index(i), Some(Value::Array(a))) => {
                    a.remove(*i);
                }
                _ => {}
            }
        }
        Mutation::Duplicate(from, to) => {
            let source = pick(*from);
            let Some(value) = get(doc, &source).cloned() else {
                return;
            };
            let target = pick(*to);
            match source.split_last() {
                // Beside itself in its list: a repeated step, gap or fault.
                Some((Seg::Index(i), parent)) if from % 2 == 0 => {
                    if let Some(Value::Array(a)) = get_mut(doc, parent) {
                        a.insert(*i, value);
                    }
                }
                _ => {
                    if let Some(slot) = get_mut(doc, &target) {
                        *slot = value;
                    }
                }
            }
        }
        Mutation::Retype(i, k) => {
            let path = pick(*i);
            if let Some(slot) = get_mut(doc, &path) {
                *slot = replacement(*k);
            }
        }
        Mutation::Rename(i, k, key_index) => {
            let path = pick(*i);
            let Some((Seg::Key(old), parent)) = path.split_last() else {
                return;
            };
            let new = if k % 3 == 0 {
                KEYS[key_index % KEYS.len()].to_string()
            } else {
                typo(old, *k)
            };
            if let Some(Value::Object(m)) = get_mut(doc, parent) {
                if let Some(v) = m.remove(old) {
                    m.insert(new, v);
                }
            }
        }
    }
}

fn apply_text(text: &mut String, m: &TextMutation) {
    let floor = |t: &str, at: usize| {
        let mut at = at % (t.len() + 1);
        while !t.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match m {
        TextMutation::DuplicateLine(i) | TextMutation::DeleteLine(i) => {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            if lines.is_empty() {
                return;
            }
            let i = i % lines.len();
            if matches!(m, TextMutation::DuplicateLine(_)) {
                lines.insert(i, lines[i]);
            } else {
                lines.remove(i);
            }
            *text = lines.concat();
        }
        TextMutation::Insert(at, c) => {
            let at = floor(text, *at);
            text.insert(at, *c);
        }
        TextMutation::Truncate(at) => {
            let at = floor(text, *at);
            text.truncate(at);
        }
    }
}

/// Cases that parsed to a scenario, and cases that gave errors (reported by the long run).
static PARSED: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);

/// The property: no panic, and a value that round-trips or located errors.
fn check(text: &str) -> Result<(), TestCaseError> {
    match Scenario::from_yaml_str(text, "fuzz.yaml") {
        Ok(scenario) => {
            PARSED.fetch_add(1, Ordering::Relaxed);
            let _ = scenario.unsupported();
            let yaml = scenario.to_yaml();
            let again = Scenario::from_yaml_str(&yaml, "fuzz-again.yaml").map_err(|e| {
                TestCaseError::fail(format!("{e}\n--- serialized:\n{yaml}\n--- from:\n{text}"))
            })?;
            prop_assert_eq!(
                again,
                scenario,
                "round trip changed the scenario:\n{}",
                yaml
            );
        }
        Err(errors) => {
            REJECTED.fetch_add(1, Ordering::Relaxed);
            prop_assert!(!errors.is_empty());
            for e in &errors {
                prop_assert!(
                    e.line > 0 && e.column > 0,
                    "unlocated error `{}` for:\n{}",
                    e,
                    text
                );
                prop_assert!(!e.message.is_empty(), "empty message for:\n{}", text);
                prop_assert_eq!(&e.file, "fuzz.yaml");
            }
        }
    }
    Ok(())
}

fn case() -> impl Strategy<Value = (usize, Vec<Mutation>, Vec<TextMutation>)> {
    (
        any::<usize>(),
        prop::collection::vec(mutation(), 0..4),
        prop::collection::vec(text_mutation(), 0..3),
    )
}

/// The seed of the mutation runs: `RETRYLAB_FUZZ_SEED`, else a fixed default, so a failure
/// reproduces with the seed the run printed.
fn fuzz_seed() -> u64 {
    const DEFAULT: u64 = 20_251_202;
    match std::env::var("RETRYLAB_FUZZ_SEED") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("RETRYLAB_FUZZ_SEED=`{text}` is not a whole number")),
        Err(_) => DEFAULT,
    }
}

fn run(cases: u32, seed: u64) {
    println!("fuzz: {cases} cases with seed {seed} (reproduce with RETRYLAB_FUZZ_SEED={seed})");
    let config = Config {
        cases,
        // Failures print their minimal input; no regression files are written beside the test.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    };
    proptest!(config, |((seed, mutations, text_mutations) in case())| {
        let source = &seeds()[seed % seeds().len()];
        let mut doc: Value = serde_saphyr::from_str(source).expect("valid scenarios parse as YAML");
        for m in &mutations {
            apply(&mut doc, m);
        }
        let mut text = serde_saphyr::to_string(&doc).expect("a JSON value serializes");
        for m in &text_mutations {
            apply_text(&mut text, m);
        }
        check(&text)?;
    });
}

/// Cases of one quarter of the slice CI runs on every change: 20,000 cases in four tests of
/// 5,000, so the test harness spreads them over the cores (a debug build runs about 290 cases
/// a second on one core). Quarter `k` draws from the fuzz seed plus `k`, and prints the seed
/// that replays it: `RETRYLAB_FUZZ_SEED=<printed seed>` with the same quarter's test.
const QUARTER: u32 = 5_000;

/// The seed of quarter `k` of the slice.
fn quarter_seed(k: u64) -> u64 {
    // With `RETRYLAB_FUZZ_SEED` set, every quarter replays that seed exactly, so the seed a
    // failing quarter printed reproduces it whichever quarter's test is run.
    match std::env::var_os("RETRYLAB_FUZZ_SEED") {
        Some(_) => fuzz_seed(),
        None => fuzz_seed().wrapping_add(k),
    }
}

#[test]
fn mutated_scenarios_never_panic_quarter_0() {
    run(QUARTER, quarter_seed(0));
}

#[test]
fn mutated_scenarios_never_panic_quarter_1() {
    run(QUARTER, quarter_seed(1));
}

#[test]
fn mutated_scenarios_never_panic_quarter_2() {
    run(QUARTER, quarter_seed(2));
}

#[test]
fn mutated_scenarios_never_panic_quarter_3() {
    run(QUARTER, quarter_seed(3));
}

/// The long run: `RETRYLAB_FUZZ_CASES` cases (1,000,000 when unset) in release.
#[test]
#[ignore = "long run: cargo test --release -p retrylab-tests --test fuzz -- --ignored --nocapture"]
fn mutated_scenarios_never_panic_long() {
    let cases = match std::env::var("RETRYLAB_FUZZ_CASES") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("RETRYLAB_FUZZ_CASES=`{text}` is not a whole number")),
        Err(_) => 1_000_000,
    };
    let start = std::time::Instant::now();
    run(cases, fuzz_seed());
    let elapsed = start.elapsed();
    println!(
        "{cases} cases in {elapsed:.1?} ({:.0} cases/s): {} parsed to a scenario, {} rejected \
         with located errors",
        f64::from(cases) / elapsed.as_secs_f64(),
        PARSED.load(Ordering::Relaxed),
        REJECTED.load(Ordering::Relaxed)
    );
}

#[test]
fn unmutated_scenarios_pass_the_property() {
    for text in seeds() {
        check(text).expect("valid scenarios satisfy the property");
        let doc: Value = serde_saphyr::from_str(text).expect("valid YAML");
        let again = serde_saphyr::to_string(&doc).expect("serializes");
        check(&again).expect("re-serialized scenarios satisfy the property");
    }
}

#[test]
fn raw_byte_soup_never_panics() {
    let config = Config {
        cases: 2_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    };
    proptest!(config, |(text in "(?s).{0,200}")| {
        check(&text)?;
    });
}
