//! The adversarial corpus: hostile scenario files (alias bombs, 50 MB files, 10,000 levels of
//! nesting, huge and negative numbers in every numeric field, broken encodings, tags, long
//! names, 100,000 steps, ...) under `tests/adversarial/`, each with a golden outcome. None may
//! panic, hang, abort or exhaust memory: each is rejected with a located error, or runs within
//! its limits, under 1 GiB of memory.
//!
//! Each case runs in a child process (this binary again, see `adversarial/child.rs`) capped
//! in address space and time, so a case that breaks down is reported by name while the others
//! go on. A case is `tests/adversarial/<name>.yaml`, or for an input too big to commit a
//! recipe `<name>.gen.yaml` that builds it (`adversarial/recipe.rs`). The outcome of every
//! case is one line of the insta snapshot `snapshots/adversarial__outcomes.snap`
//! (`adversarial/outcome.rs` says what a line holds).
//!
//! - `cargo test -p retrylab-tests --test adversarial`: every case but [`SLOW`] ones.
//! - `cargo test -p retrylab-tests --test adversarial -- --ignored`: the [`SLOW`] cases
//!   against `adversarial__outcomes_slow.snap`, and every case, [`KNOWN_BROKEN`] ones too,
//!   with its peak memory, in a table sorted by it (add `--nocapture` to see it).
//!
//! A changed outcome fails and leaves a `.snap.new`: review it with `cargo insta review`, or
//! accept every change with `INSTA_UPDATE=always` and review the diff. docs/architecture.md
//! ("The adversarial corpus") says how to add a case.

// The binary's root is this file, so its modules are named by path.
#[path = "adversarial/child.rs"]
mod child;
#[path = "adversarial/outcome.rs"]
mod outcome;
#[path = "adversarial/recipe.rs"]
mod recipe;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use retrylab::scenario::Millis;

use self::child::{Bounds, CHILD_FLAG, Measured, OUTCOME_MARK, PEAK_MARK};

/// Cases that crash, hang or exhaust memory today, with why. The corpus keeps them, the
/// outcome tests skip them (saying so), and the peak-memory test runs them in their capped
/// child and reports what they do. Remove a case from this list once what breaks it is
/// fixed, and accept its new line in the golden table.
const KNOWN_BROKEN: &[(&str, &str)] = &[];

/// Cases that take more than a second in a debug build on a loaded two-core machine (the
/// time with each), run only by the ignored tests (`-- --ignored`). Most are big inputs the
/// parser works through up to its budget; none is known to break.
const SLOW: &[(&str, &str)] = &[
    (
        "alias-bomb-in-merge-keys.yaml",
        "expands the bomb to the parser's node budget in several passes: 5-10 s",
    ),
    (
        "alias-bomb-in-description.yaml",
        "expands the bomb to the parser's node budget in several passes: 5-10 s",
    ),
    (
        "alias-bomb-in-search-one-of.yaml",
        "expands the bomb to the parser's node budget in several passes: 10 s",
    ),
    (
        "operation-calls-20000-no-retry.yaml",
        "10,000 attempts (the default attempt limit): 10-20 s",
    ),
    ("size-anchors-100k.gen.yaml", "100,000 anchors: 8 s"),
    (
        "size-connect-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    (
        "size-two-strings-near-scalar-budget.gen.yaml",
        "16 MB of text: 6 s",
    ),
    (
        "size-endpoints-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    (
        "size-endpoints-20k.gen.yaml",
        "20,000 endpoints set up and checked for dead steps: 20 s",
    ),
    (
        "size-errors-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    (
        "size-faults-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    ("size-gaps-100k.gen.yaml", "parses to the node budget: 17 s"),
    (
        "size-header-check-values-100k.gen.yaml",
        "100,000 values: 16 s",
    ),
    (
        "size-header-pairs-100k.gen.yaml",
        "parses to the node budget: 14 s",
    ),
    (
        "size-key-1mb-explicit.gen.yaml",
        "did-you-mean on a 1 MB key: 12 s",
    ),
    ("size-must-fail-150k.gen.yaml", "150,000 errors: 22 s"),
    (
        "size-must-fail-1mb-name.gen.yaml",
        "did-you-mean on a 1 MB name: 14 s",
    ),
    (
        "size-not-retried-on-100k.gen.yaml",
        "100,000 statuses: 10 s",
    ),
    ("size-outcomes-100k.gen.yaml", "100,000 outcomes: 18 s"),
    (
        "size-request-headers-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    ("size-request-headers-5k.gen.yaml", "5,000 headers: 4 s"),
    ("size-response-body-10mb.gen.yaml", "a 10 MB body: 2.5 s"),
    (
        "size-response-headers-100k.gen.yaml",
        "parses to the node budget: 20 s",
    ),
    ("size-response-headers-5k.gen.yaml", "5,000 headers: 5 s"),
    ("size-retry-on-100k.gen.yaml", "100,000 statuses: 10 s"),
    (
        "size-routes-100k.gen.yaml",
        "parses to the node budget: 12 s",
    ),
    (
        "size-routes-10k.gen.yaml",
        "10,000 routes set up and checked for dead steps: 7 s",
    ),
    (
        "size-script-aliased-into-1000-endpoints.gen.yaml",
        "expands aliases to the node budget: 7 s",
    ),
    (
        "size-steps-100k.gen.yaml",
        "parses to the node budget: 11 s",
    ),
    (
        "size-steps-30k.gen.yaml",
        "30,000 steps checked for dead steps: 8 s",
    ),
    ("size-unknown-keys-100k.gen.yaml", "100,000 keys: 10 s"),
];

/// Most memory a case may take: its child's peak resident set size.
const MAX_PEAK_RSS_KIB: u64 = 1024 * 1024;

/// Bounds of each child. A correct case takes well under a second; the timeout is for a
/// case that hangs, and the address-space cap for one that allocates without bound, so
/// that neither takes the machine down with it. A case without `limits.wall` gets 5 s
/// instead of 60 s: one that blocks must not hold the test for a minute.
const BOUNDS: Bounds = Bounds {
    address_space: 3 * 1024 * 1024 * 1024,
    timeout: Duration::from_secs(30),
    wall: Some(Duration::from_secs(5)),
};

/// The bounds of the ignored tests, which also run the slow and known broken cases: the
/// default `limits.wall`, so that a slow case ends the same way in a debug build as in a
/// release build.
const LONG_BOUNDS: Bounds = Bounds {
    address_space: 3 * 1024 * 1024 * 1024,
    timeout: Duration::from_secs(120),
    wall: None,
};

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == CHILD_FLAG) {
        child_main(&args[2..]);
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("every_case_has_its_golden_outcome", every_case),
        Trial::test("slow_cases_have_their_golden_outcome", slow_cases).with_ignored_flag(true),
        Trial::test("peak_memory_of_every_case", peak_memory).with_ignored_flag(true),
        Trial::test("every_listed_case_exists", every_listed_case_exists),
        Trial::test(
            "a_recipe_concatenates_its_parts",
            a_recipe_concatenates_its_parts,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// The child of one case: prints its outcome line and exits. A panic, an abort or a hang is
/// the parent's to see.
fn child_main(args: &[std::ffi::OsString]) -> ! {
    let [path, display, wall] = args else {
        eprintln!("usage: adversarial {CHILD_FLAG} <path> <display name> <wall ms | default>");
        std::process::exit(2);
    };
    let wall = wall.to_str().and_then(|w| w.parse().ok()).map(Millis);
    let line = outcome::outcome(Path::new(path), &display.to_string_lossy(), wall);
    println!("{OUTCOME_MARK}{line}");
    if let Some(peak) = child::peak_rss_kib("/proc/self/status") {
        println!("{PEAK_MARK}{peak}");
    }
    // An abandoned run thread (the wall limit) must not keep the process alive.
    std::process::exit(0);
}

/// One case of the corpus.
#[derive(Clone)]
struct Case {
    /// The file name in `tests/adversarial/`, as the golden table names it.
    file: String,
    /// The committed file: the case itself, or its recipe.
    path: PathBuf,
}

impl Case {
    fn is_recipe(&self) -> bool {
        self.file.ends_with(".gen.yaml")
    }

    /// The name errors give the file: its name, or for a generated input
    /// `generated/<name>.yaml` (its lines and columns are those of the generated text).
    fn display(&self) -> String {
        match self.file.strip_suffix(".gen.yaml") {
            Some(stem) => format!("generated/{stem}.yaml"),
            None => self.file.clone(),
        }
    }

    /// Why `list` names this case, when it does.
    fn listed_in(&self, list: &'static [(&'static str, &'static str)]) -> Option<&'static str> {
        list.iter()
            .find(|(name, _)| *name == self.file)
            .map(|(_, why)| *why)
    }

    /// Measures the case in a child: a generated input is written to a temporary file first
    /// and removed after.
    fn measure(&self, scratch: &Path, bounds: Bounds) -> Measured {
        if !self.is_recipe() {
            return child::measure(&self.path, &self.display(), bounds);
        }
        let generated = std::fs::read_to_string(&self.path)
            .map_err(|e| e.to_string())
            .and_then(|recipe| recipe::generate(&recipe));
        let bytes = match generated {
            Ok(bytes) => bytes,
            Err(e) => {
                return Measured {
                    result: Err(format!("the recipe does not build: {e}")),
                    peak_rss_kib: 0,
                    elapsed: Duration::ZERO,
                };
            }
        };
        let path = scratch.join(self.file.replace(".gen.yaml", ".yaml"));
        if let Err(e) = std::fs::write(&path, &bytes) {
            return Measured {
                result: Err(format!("cannot write {}: {e}", path.display())),
                peak_rss_kib: 0,
                elapsed: Duration::ZERO,
            };
        }
        drop(bytes);
        let measured = child::measure(&path, &self.display(), bounds);
        let _ = std::fs::remove_file(&path);
        measured
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("adversarial")
}

/// Every case, sorted by file name.
fn cases() -> Vec<Case> {
    let dir = corpus_dir();
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .map(|path| Case {
            file: path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned(),
            path,
        })
        .collect();
    cases.sort_by(|a, b| a.file.cmp(&b.file));
    cases
}

/// A fresh folder for generated inputs, under the target directory: one per call, since
/// trials run at once and each removes its own folder when it is done.
fn scratch_dir() -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "adversarial-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Measures `cases`, as many at once as there are cores. Generated inputs and alias bombs,
/// which take the longest, start first, so that no long case is left to run alone at the end.
fn measure_all(cases: &[Case], bounds: Bounds) -> Vec<Measured> {
    let scratch = scratch_dir();
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|&i| !(cases[i].is_recipe() || cases[i].file.starts_with("alias-bomb")));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Measured>>> =
        Mutex::new(std::iter::repeat_with(|| None).take(cases.len()).collect());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let measured = cases[i].measure(&scratch, bounds);
                    results.lock().expect("no worker panics holding it")[i] = Some(measured);
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|m| m.expect("every case measured"))
        .collect()
}

/// The golden table of `cases` (skipping those `skip` names), and what broke down.
fn outcome_table(
    cases: &[Case],
    skip: impl Fn(&Case) -> Option<&'static str>,
    bounds: Bounds,
) -> (String, Vec<String>) {
    let run: Vec<Case> = cases
        .iter()
        .filter(|c| skip(c).is_none())
        .cloned()
        .collect();
    let measured = measure_all(&run, bounds);
    let width = cases.iter().map(|c| c.file.len()).max().unwrap_or(0);
    let mut table = String::new();
    let mut problems = Vec::new();
    let mut timings = Vec::new();
    let mut results = run.iter().zip(&measured);
    for case in cases {
        if let Some(why) = skip(case) {
            println!("skipped {}: {why}", case.file);
            let _ = writeln!(table, "{:<width$}  skipped: known broken", case.file);
            continue;
        }
        let (_, m) = results.next().expect("one result per case run");
        timings.push((m.elapsed, case.file.as_str()));
        let line = match &m.result {
            Ok(line) => line.clone(),
            Err(broke) => {
                problems.push(format!("{}: {broke}", case.file));
                format!("BROKE DOWN: {broke}")
            }
        };
        if m.peak_rss_kib > MAX_PEAK_RSS_KIB {
            problems.push(format!(
                "{}: peak memory {} MiB, above the {} MiB allowed",
                case.file,
                m.peak_rss_kib / 1024,
                MAX_PEAK_RSS_KIB / 1024
            ));
        }
        if line.starts_with("rejected (no location)") && !line.contains("files are limited to") {
            problems.push(format!(
                "{}: an error without a location: {line}",
                case.file
            ));
        }
        let _ = writeln!(table, "{:<width$}  {line}", case.file);
    }
    timings.sort_by(|a, b| b.cmp(a));
    println!("slowest cases:");
    for (elapsed, file) in timings.iter().take(10) {
        println!("  {:>7.2} s  {file}", elapsed.as_secs_f64());
    }
    (table, problems)
}

fn fail_on(problems: &[String]) -> Result<(), Failed> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} cases broke down (add a case that breaks today to KNOWN_BROKEN with why):\n{}",
            problems.len(),
            problems.join("\n")
        )
        .into())
    }
}

fn every_case() -> Result<(), Failed> {
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.listed_in(SLOW).is_none())
        .collect();
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let (table, problems) = outcome_table(&cases, |c| c.listed_in(KNOWN_BROKEN), BOUNDS);
    insta::assert_snapshot!("outcomes", table);
    fail_on(&problems)
}

fn slow_cases() -> Result<(), Failed> {
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.listed_in(SLOW).is_some())
        .collect();
    let (table, problems) = outcome_table(&cases, |c| c.listed_in(KNOWN_BROKEN), LONG_BOUNDS);
    insta::assert_snapshot!("outcomes_slow", table);
    fail_on(&problems)
}

/// Every case, known broken ones too, with its peak memory: a table sorted by it, largest
/// first (`ADVERSARIAL_FILTER=<text>` for the cases whose file name contains it). Fails when a case that is not known to be broken breaks down or takes more than
/// [`MAX_PEAK_RSS_KIB`]; a known broken case that now runs clean is named, to be taken off
/// the list.
fn peak_memory() -> Result<(), Failed> {
    // `ADVERSARIAL_FILTER=<text>` measures only the cases whose file name contains it.
    let filter = std::env::var("ADVERSARIAL_FILTER").unwrap_or_default();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.file.contains(&filter))
        .collect();
    let measured = measure_all(&cases, LONG_BOUNDS);
    let mut rows: Vec<(&Case, &Measured)> = cases.iter().zip(&measured).collect();
    rows.sort_by(|a, b| {
        b.1.peak_rss_kib
            .cmp(&a.1.peak_rss_kib)
            .then_with(|| a.0.file.cmp(&b.0.file))
    });
    println!(
        "{:>9}  {:>7}  {:<50}  outcome",
        "peak MiB", "time s", "case"
    );
    let mut problems = Vec::new();
    for (case, m) in &rows {
        let outcome = match &m.result {
            Ok(line) => line.clone(),
            Err(broke) => format!("BROKE DOWN: {broke}"),
        };
        println!(
            "{:>9.1}  {:>7.2}  {:<50}  {}",
            m.peak_rss_kib as f64 / 1024.0,
            m.elapsed.as_secs_f64(),
            case.file,
            outcome::printable(&outcome, 160)
        );
        let broken = case.listed_in(KNOWN_BROKEN).is_some();
        let too_big = m.peak_rss_kib > MAX_PEAK_RSS_KIB;
        match (&m.result, broken) {
            (Err(broke), false) => problems.push(format!("{}: {broke}", case.file)),
            (Ok(_), true) if !too_big => {
                println!("  ^ known broken, but ran clean: take it off KNOWN_BROKEN");
            }
            _ => {}
        }
        if too_big && !broken {
            problems.push(format!(
                "{}: peak memory {} MiB",
                case.file,
                m.peak_rss_kib / 1024
            ));
        }
    }
    fail_on(&problems)
}

/// The lists name cases that exist, once each.
fn every_listed_case_exists() -> Result<(), Failed> {
    let files: Vec<String> = cases().into_iter().map(|c| c.file).collect();
    for (list, entries) in [("KNOWN_BROKEN", KNOWN_BROKEN), ("SLOW", SLOW)] {
        for (i, (name, why)) in entries.iter().enumerate() {
            if !files.iter().any(|f| f == name) {
                return Err(
                    format!("{list} names `{name}`, which is not in tests/adversarial/").into(),
                );
            }
            if why.is_empty() {
                return Err(format!("{list} gives no reason for `{name}`").into());
            }
            if entries[..i].iter().any(|(n, _)| n == name) {
                return Err(format!("{list} names `{name}` twice").into());
            }
            if list == "SLOW" && KNOWN_BROKEN.iter().any(|(n, _)| n == name) {
                return Err(format!("`{name}` is both SLOW and KNOWN_BROKEN").into());
            }
        }
    }
    Ok(())
}

fn a_recipe_concatenates_its_parts() -> Result<(), Failed> {
    let recipe = "parts:\n  - text: \"a\"\n  - repeat: \"<{i}{indent}>\"\n    times: 3\n  - hex: \"ff 0a\"\n";
    let bytes = recipe::generate(recipe)?;
    if bytes != b"a<0><1 ><2  >\xff\n" {
        return Err(format!("built {:?}", String::from_utf8_lossy(&bytes)).into());
    }
    for wrong in [
        "parts: 3",
        "parts:\n  - { text: a, hex: ff }",
        "other: 1\nparts: []",
    ] {
        if recipe::generate(wrong).is_ok() {
            return Err(format!("`{wrong}` is taken for a recipe").into());
        }
    }
    Ok(())
}
