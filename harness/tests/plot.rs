//! `retrylab::plot` and `retrylab plot` (feature `plot`): a golden SVG of a fixed scenario,
//! read back by counting its marks, and the PNG and fleet forms.
#![cfg(feature = "plot")]

use std::path::{Path, PathBuf};

use retrylab::scenario::Scenario;
use retrylab::suite::Clients;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The golden plot, also the guide's (docs/guide/command-line.md).
const GOLDEN: &str = "docs/assets/timeline-429-retry-after.svg";

fn run(file: &str) -> (Scenario, retrylab::Report) {
    let scenario = Scenario::load(root().join(file)).expect("a library scenario");
    let report = Clients::new()
        .run(&scenario, scenario.seed)
        .expect("a built-in client");
    (scenario, report)
}

/// How many `element`s of the SVG have `attribute="#colour"`.
fn count(svg: &str, element: &str, attribute: &str, colour: &str) -> usize {
    let needle = format!("{attribute}=\"#{colour}\"");
    svg.split('<')
        .filter(|e| e.starts_with(&format!("{element} ")) && e.contains(&needle))
        .count()
}

/// The golden SVG of `scenarios/http/429-retry-after.yaml`: a 429 with Retry-After 2, two
/// 503s and a 200, under `conforms_to` an exponential policy with full jitter. Rewrite it
/// with `RETRYLAB_WRITE_PLOT=1` after a deliberate change, and look at it.
#[test]
fn the_golden_plot_has_every_mark_of_its_run() {
    let (scenario, report) = run("scenarios/http/429-retry-after.yaml");
    assert!(report.passed(), "{}", report.summary());
    let svg = retrylab::plot::svg(&scenario, &report).expect("drawn");
    // One rectangle per attempt, in its outcome's colour: the 429, two 503s, the 200.
    assert_eq!(count(&svg, "rect", "fill", "EF6C00"), 1, "4xx attempts");
    assert_eq!(count(&svg, "rect", "fill", "C62828"), 2, "5xx attempts");
    assert_eq!(count(&svg, "rect", "fill", "2E7D32"), 1, "2xx attempts");
    // One allowed window per retry, and one Retry-After instant, at 2s after the 429's head.
    assert_eq!(count(&svg, "rect", "fill", "90CAF9"), 3, "envelope bands");
    assert_eq!(
        count(&svg, "polyline", "stroke", "1565C0"),
        1,
        "Retry-After marks"
    );
    // A gap before each retry, and the one effect the 200 committed.
    assert_eq!(count(&svg, "polyline", "stroke", "9E9E9E"), 3, "gaps");
    assert_eq!(
        count(&svg, "circle", "fill", "F9A825"),
        2,
        "the effect and its swatch"
    );
    assert!(
        svg.contains("429 with Retry-After, then a 5xx burst"),
        "the title"
    );
    let golden = root().join(GOLDEN);
    if std::env::var_os("RETRYLAB_WRITE_PLOT").is_some() {
        std::fs::write(&golden, &svg).expect("the golden written");
    }
    let expected = std::fs::read_to_string(&golden).expect("the golden plot");
    assert!(
        svg == expected,
        "{GOLDEN} differs from the plot drawn now: rewrite it with RETRYLAB_WRITE_PLOT=1 \
         cargo test -p retrylab --features plot --test plot, and look at it"
    );
    // The same run draws the same bytes.
    assert_eq!(retrylab::plot::svg(&scenario, &report).expect("drawn"), svg);
}

/// A fleet gets its attempts per bucket under the rows; rows stop at 40 calls.
#[test]
fn a_fleet_is_drawn_with_its_attempts_per_bucket() {
    let (scenario, report) = run("scenarios/fleets/thundering-herd-full-jitter.yaml");
    let view = report.trace().fleet().expect("a fleet");
    let svg = retrylab::plot::svg(&scenario, &report).expect("drawn");
    assert_eq!(count(&svg, "rect", "fill", "78909C"), view.buckets.len());
    assert_eq!(count(&svg, "rect", "fill", "D84315"), view.buckets.len());
    let attempts = ["2E7D32", "EF6C00", "C62828", "6A1B9A", "424242", "BDBDBD"]
        .iter()
        .map(|c| count(&svg, "rect", "fill", c))
        .sum::<usize>();
    assert_eq!(attempts, report.trace().attempts.len());
}

/// A crash is a fault window across the rows.
#[test]
fn a_fault_window_is_shaded() {
    let (scenario, report) = run("scenarios/faults/crash-after-commit-deduplicated.yaml");
    let svg = retrylab::plot::svg(&scenario, &report).expect("drawn");
    assert_eq!(count(&svg, "rect", "fill", "EF9A9A"), 1, "one crash window");
    assert!(svg.contains("orders crashed"), "the window named");
}

/// `retrylab plot`: SVG or PNG by extension, anything else refused with exit 2.
#[cfg(feature = "cli")]
#[test]
fn the_cli_writes_svg_and_png_by_extension() {
    let dir = std::env::temp_dir().join(format!("retrylab-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = root().join("scenarios/http/429-retry-after.yaml");
    let plot = |output: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .arg("plot")
            .arg(&file)
            .arg("-o")
            .arg(output)
            .output()
            .expect("retrylab runs")
    };
    let svg = dir.join("timeline.svg");
    let output = plot(&svg);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}: 4 attempts, 1 calls, passed (seed 7)\n", svg.display())
    );
    let golden = std::fs::read(root().join(GOLDEN)).expect("the golden plot");
    assert_eq!(std::fs::read(&svg).expect("the SVG"), golden);
    let png = dir.join("timeline.png");
    assert!(plot(&png).status.success());
    let bytes = std::fs::read(&png).expect("the PNG");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    // The header's width and height: the plot's 1000 px by its rows.
    assert_eq!(&bytes[16..20], &1000u32.to_be_bytes());
    let gif = plot(&dir.join("timeline.gif"));
    assert_eq!(gif.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&gif.stderr).contains("written as .svg or .png"));
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["plot", "no-such.yaml", "-o"])
        .arg(&svg)
        .output()
        .expect("retrylab runs");
    assert_eq!(missing.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
