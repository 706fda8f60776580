//! A run drawn on its virtual time axis (feature `plot`): `retrylab plot <scenario> -o
//! timeline.svg` (or `.png`).
//!
//! One row per call: its attempts coloured by how they ended, the gaps between them, the
//! window the `conforms_to` policy allows each retry in (shaded under the attempts), the
//! instant each `Retry-After` names, committed effects, and fault windows (partitions,
//! crashes, holds) behind every row; a fleet also gets its attempts per time bucket.
//!
//! Each kind of mark has a colour nothing else has, so that an SVG can be read back by
//! colour (the legend's swatches are circles, never rectangles or lines):
//!
//! | mark | SVG element | colour |
//! | --- | --- | --- |
//! | attempt: 2xx (1xx-3xx), 4xx, 5xx | `rect` | `#2E7D32`, `#EF6C00`, `#C62828` |
//! | attempt: transport error, timed out, unfinished | `rect` | `#6A1B9A`, `#424242`, `#BDBDBD` |
//! | window `conforms_to` allows a retry in | `rect` | `#90CAF9` |
//! | instant a `Retry-After` names | `polyline` | stroke `#1565C0` |
//! | gap between two attempts | `polyline` | stroke `#9E9E9E` |
//! | committed effect | `circle` | `#F9A825` |
//! | fault window (partition, crash, hold) | `rect` | `#EF9A9A` |
//! | fleet: attempts, retries per bucket | `rect` | `#78909C`, `#D84315` |
//!
//! Text is drawn with `DejaVu Sans Mono`, built into the crate (`harness/assets/fonts/`, with
//! its license): no system font or fontconfig is needed, and the same run gives the same
//! bytes on every machine.
//!
//! ```
//! use retrylab::prelude::*;
//!
//! let scenario = Scenario::builder("two 503s, then 200")
//!     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
//!     .operation(get("api", "/"))
//!     .client(exponential().initial(ms(100)).max_attempts(3))
//!     .build()
//!     .unwrap();
//! let report = scenario.run_builtin();
//! let svg = retrylab::plot::svg(&scenario, &report).unwrap();
//! assert!(svg.starts_with("<svg"));
//! // Two 5xx attempts, and the legend's swatch for them.
//! assert_eq!(svg.matches("fill=\"#C62828\"").count(), 3);
//! ```

mod draw;
mod timeline;

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};

use crate::report::Report;
use crate::scenario::Scenario;
use timeline::Timeline;

/// The embedded font (`DejaVu Sans Mono`; license in `assets/fonts/DejaVu-LICENSE`).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");

/// Why a plot was not drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

/// Registers the embedded font once; every later call gets the first one's outcome.
fn font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(draw::FAMILY, plotters::style::FontStyle::Normal, FONT)
                .map_err(|_| "the embedded font does not load".to_owned())
        })
        .clone()
        .map_err(PlotError)
}

/// `report`, a run of `scenario`, drawn as an SVG document.
///
/// ```
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("one 503, then 200")
///     .endpoint("api", endpoint().script([status(503), status(200)]))
///     .operation(get("api", "/"))
///     .client(exponential().initial(ms(100)).max_attempts(2))
///     .build()
///     .unwrap();
/// let report = scenario.run_builtin();
/// let svg = retrylab::plot::svg(&scenario, &report).unwrap();
/// assert!(svg.starts_with("<svg"), "{svg}");
/// ```
pub fn svg(scenario: &Scenario, report: &Report) -> Result<String, PlotError> {
    font()?;
    let timeline = Timeline::of(scenario, report).map_err(PlotError)?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, draw::size(&timeline)).into_drawing_area();
        draw::draw(&root, &timeline).map_err(PlotError)?;
    }
    Ok(out)
}

/// `report`, a run of `scenario`, drawn as a PNG image at `path`.
///
/// ```
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("always 200")
///     .endpoint("api", endpoint().script([status(200)]))
///     .operation(get("api", "/"))
///     .build()
///     .unwrap();
/// let report = scenario.run_builtin();
/// let path = std::env::temp_dir().join(format!("retrylab-png-doc-{}.png", std::process::id()));
/// retrylab::plot::png(&scenario, &report, &path).unwrap();
/// assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn png(scenario: &Scenario, report: &Report, path: &Path) -> Result<(), PlotError> {
    font()?;
    let timeline = Timeline::of(scenario, report).map_err(PlotError)?;
    let root = BitMapBackend::new(path, draw::size(&timeline)).into_drawing_area();
    draw::draw(&root, &timeline).map_err(|e| PlotError(format!("{}: {e}", path.display())))
}

/// Draws `report` to `path`: SVG for a `.svg` path, PNG for `.png`; any other extension is
/// refused.
///
/// ```
/// use retrylab::prelude::*;
///
/// let scenario = Scenario::builder("one 503, then 200")
///     .endpoint("api", endpoint().script([status(503), status(200)]))
///     .operation(get("api", "/"))
///     .client(exponential().initial(ms(100)).max_attempts(2))
///     .build()
///     .unwrap();
/// let report = scenario.run_builtin();
/// let dir = std::env::temp_dir().join(format!("retrylab-plot-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// retrylab::plot::write(&scenario, &report, &dir.join("run.png")).unwrap();
/// assert!(std::fs::read(dir.join("run.png")).unwrap().starts_with(b"\x89PNG"));
/// let refused = retrylab::plot::write(&scenario, &report, &dir.join("run.gif")).unwrap_err();
/// assert!(refused.to_string().contains("as .svg or .png"), "{refused}");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write(scenario: &Scenario, report: &Report, path: &Path) -> Result<(), PlotError> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match extension.as_deref() {
        Some("svg") => std::fs::write(path, svg(scenario, report)?)
            .map_err(|e| PlotError(format!("{}: {e}", path.display()))),
        Some("png") => png(scenario, report, path),
        _ => Err(PlotError(format!(
            "{}: a plot is written as .svg or .png (by the file's extension)",
            path.display()
        ))),
    }
}

/// `retrylab plot`: loads the scenario at `path`, runs it with its built-in client on its
/// seed, and draws the run to `output`. A `custom:` client is refused (it runs from Rust:
/// draw its report with [`write()`]). Says what was drawn: the file, the attempts and calls, and whether the
/// run passed (a failed run is drawn too: it is what one would most like to look at).
pub fn file(path: &Path, output: &Path) -> Result<String, PlotError> {
    let scenario = Scenario::load(path).map_err(|e| PlotError(e.to_string()))?;
    let seed = scenario
        .effective_seed()
        .map_err(|e| PlotError(e.to_string()))?;
    let report = crate::suite::Clients::new()
        .run(&scenario, seed)
        .map_err(|e| PlotError(e.to_string()))?;
    write(&scenario, &report, output)?;
    let trace = report.trace();
    Ok(format!(
        "{}: {} attempts, {} calls, {} (seed {seed})",
        output.display(),
        trace.attempts.len(),
        trace.calls.len(),
        if report.passed() { "passed" } else { "failed" }
    ))
}
