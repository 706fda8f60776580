//! The drawing: a [`Timeline`] on any plotters backend (SVG, bitmap).
//!
//! Each kind of mark has a colour of its own that nothing else uses, so that a test can
//! count the marks in an SVG by colour: attempts are rectangles in [`outcome_colour`]s,
//! allowed windows rectangles in [`ENVELOPE`], Retry-After instants lines in
//! [`RETRY_AFTER`]; the legend's swatches are circles.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::timeline::{Kind, Timeline};
use crate::trace::{Bucket, FleetView};

/// The windows `conforms_to` allows (drawn translucent, under the attempts).
pub(crate) const ENVELOPE: RGBColor = RGBColor(0x90, 0xCA, 0xF9);
/// A Retry-After's instant.
pub(crate) const RETRY_AFTER: RGBColor = RGBColor(0x15, 0x65, 0xC0);
/// A committed effect.
const EFFECT: RGBColor = RGBColor(0xF9, 0xA8, 0x25);
/// A fault window (partition, crash, hold), across every row.
const FAULT: RGBColor = RGBColor(0xEF, 0x9A, 0x9A);
/// The wait between two attempts of a call.
const GAP: RGBColor = RGBColor(0x9E, 0x9E, 0x9E);
/// A fleet's attempts per bucket, and of them the retries.
const FLEET_ATTEMPTS: RGBColor = RGBColor(0x78, 0x90, 0x9C);
const FLEET_RETRIES: RGBColor = RGBColor(0xD8, 0x43, 0x15);

/// The colour of an attempt that ended so.
pub(crate) fn outcome_colour(kind: Kind) -> RGBColor {
    match kind {
        Kind::Success => RGBColor(0x2E, 0x7D, 0x32),
        Kind::ClientError => RGBColor(0xEF, 0x6C, 0x00),
        Kind::ServerError => RGBColor(0xC6, 0x28, 0x28),
        Kind::Transport => RGBColor(0x6A, 0x1B, 0x9A),
        Kind::Timeout => RGBColor(0x42, 0x42, 0x42),
        Kind::Unfinished => RGBColor(0xBD, 0xBD, 0xBD),
    }
}

/// The font family every text is drawn in: the embedded font is registered under it, and an
/// SVG viewer draws the text in its own monospace font, of about the same widths.
pub(super) const FAMILY: &str = "monospace";

/// Pixels a row takes, and the fixed parts around the rows.
const ROW_PX: u32 = 26;
const CHROME_PX: u32 = 150;
const FLEET_PX: u32 = 220;
pub(super) const WIDTH_PX: u32 = 1000;

/// The size a timeline is drawn at.
pub(super) fn size(t: &Timeline) -> (u32, u32) {
    let rows = u32::try_from(t.rows.len().max(1)).unwrap_or(u32::MAX);
    let fleet = if t.fleet.is_some() { FLEET_PX } else { 0 };
    (WIDTH_PX, CHROME_PX + rows.saturating_mul(ROW_PX) + fleet)
}

type Failed = String;

fn failed<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> Failed {
    e.to_string()
}

/// Draws `t` on `root`.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &Timeline,
) -> Result<(), Failed> {
    root.fill(&WHITE).map_err(failed)?;
    let (_, height) = root.dim_in_pixel();
    let (top, rest) = root.split_vertically(44);
    let (rows_area, fleet_area) = match t.fleet {
        Some(_) => {
            let (a, b) = rest.split_vertically(height.saturating_sub(44 + FLEET_PX));
            (a, Some(b))
        }
        None => (rest, None),
    };
    top.draw(&Text::new(
        t.title.clone(),
        (10, 6),
        (FAMILY, 18).into_font(),
    ))
    .map_err(failed)?;
    legend(&top, t)?;
    rows(&rows_area, t)?;
    if let (Some(area), Some(fleet)) = (fleet_area, &t.fleet) {
        buckets(&area, t, fleet)?;
    }
    root.present().map_err(failed)
}

/// A swatch and a word for each kind of mark drawn.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, t: &Timeline) -> Result<(), Failed> {
    let mut kinds: Vec<Kind> = t.bars.iter().map(|b| b.kind).collect();
    kinds.sort();
    kinds.dedup();
    let mut entries: Vec<(RGBColor, &str)> = kinds
        .iter()
        .map(|&k| (outcome_colour(k), k.label()))
        .collect();
    if !t.envelope.is_empty() {
        entries.push((ENVELOPE, "allowed window (conforms_to)"));
    }
    if !t.retry_after.is_empty() {
        entries.push((RETRY_AFTER, "Retry-After"));
    }
    if !t.effects.is_empty() {
        entries.push((EFFECT, "effect"));
    }
    if !t.faults.is_empty() {
        entries.push((FAULT, "fault"));
    }
    if t.fleet.is_some() {
        entries.push((FLEET_ATTEMPTS, "attempts per bucket"));
        entries.push((FLEET_RETRIES, "retries per bucket"));
    }
    let font = (FAMILY, 13).into_font();
    let mut x = 12;
    for (colour, label) in entries {
        area.draw(&Circle::new((x, 33), 5, colour.filled()))
            .map_err(failed)?;
        area.draw(&Text::new(label, (x + 9, 26), font.clone()))
            .map_err(failed)?;
        let width = font
            .box_size(label)
            .map(|(w, _)| i32::try_from(w).unwrap_or(100))
            .unwrap_or(100);
        x += width + 30;
    }
    Ok(())
}

/// One row per call: attempts, gaps, allowed windows, Retry-After instants, effects; the
/// fault windows behind them all.
fn rows<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, t: &Timeline) -> Result<(), Failed> {
    let n = t.rows.len().max(1);
    let end_s = t.end_ms as f64 / 1000.0 * 1.04;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(130)
        .build_cartesian_2d(0.0..end_s, -0.5..(n as f64 - 0.5))
        .map_err(failed)?;
    // Row 0 at the top.
    let y = |row: usize| (n - 1 - row) as f64;
    let s = |ms: u64| ms as f64 / 1000.0;
    let label = |v: &f64| {
        let nearest = v.round();
        if (v - nearest).abs() > 0.01 || nearest < 0.0 {
            return String::new();
        }
        let row = n.checked_sub(1 + nearest as usize);
        row.and_then(|r| t.rows.get(r)).cloned().unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n.min(40) + 1)
        .y_label_formatter(&label)
        .x_desc("virtual time (s)")
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 13))
        .draw()
        .map_err(failed)?;
    let top = n as f64 - 0.5;
    chart
        .draw_series(t.faults.iter().map(|f| {
            Rectangle::new(
                [(s(f.from_ms), -0.5), (s(f.to_ms), top)],
                FAULT.mix(0.35).filled(),
            )
        }))
        .map_err(failed)?;
    chart
        .draw_series(t.faults.iter().map(|f| {
            Text::new(
                f.what.clone(),
                (s(f.from_ms), top),
                (FAMILY, 11).into_font(),
            )
        }))
        .map_err(failed)?;
    chart
        .draw_series(t.envelope.iter().map(|w| {
            Rectangle::new(
                [(s(w.from_ms), y(w.row) - 0.4), (s(w.to_ms), y(w.row) + 0.4)],
                ENVELOPE.mix(0.6).filled(),
            )
        }))
        .map_err(failed)?;
    chart
        .draw_series(t.gaps.iter().map(|g| {
            PathElement::new(
                vec![(s(g.from_ms), y(g.row)), (s(g.to_ms), y(g.row))],
                GAP.stroke_width(1),
            )
        }))
        .map_err(failed)?;
    chart
        .draw_series(t.retry_after.iter().map(|m| {
            PathElement::new(
                vec![(s(m.at_ms), y(m.row) - 0.46), (s(m.at_ms), y(m.row) + 0.46)],
                RETRY_AFTER.stroke_width(2),
            )
        }))
        .map_err(failed)?;
    // An attempt of no duration is still drawn, this wide.
    let least = end_s / 250.0;
    chart
        .draw_series(t.bars.iter().map(|b| {
            let from = s(b.from_ms);
            let to = s(b.to_ms).max(from + least);
            Rectangle::new(
                [(from, y(b.row) - 0.22), (to, y(b.row) + 0.22)],
                outcome_colour(b.kind).filled(),
            )
        }))
        .map_err(failed)?;
    chart
        .draw_series(
            t.effects
                .iter()
                .map(|m| Circle::new((s(m.at_ms), y(m.row) + 0.32), 4, EFFECT.filled())),
        )
        .map_err(failed)?;
    Ok(())
}

/// A fleet's attempts per time bucket, the retries among them over them.
/// What a bar of the fleet view shows of its bucket.
type Height = fn(&Bucket) -> u64;

fn buckets<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    t: &Timeline,
    fleet: &FleetView,
) -> Result<(), Failed> {
    let (bucket_ms, buckets) = (&fleet.bucket_ms, &fleet.buckets);
    let most = buckets.iter().map(|b| b.attempts).max().unwrap_or(0).max(1) as f64;
    let end_s = t.end_ms as f64 / 1000.0 * 1.04;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .caption(
            format!(
                "attempts per {} bucket (retries over them)",
                crate::trace::seconds(*bucket_ms)
            ),
            (FAMILY, 13),
        )
        .x_label_area_size(30)
        .y_label_area_size(130)
        .build_cartesian_2d(0.0..end_s, 0.0..most * 1.1)
        .map_err(failed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .label_style((FAMILY, 12))
        .draw()
        .map_err(failed)?;
    let width = *bucket_ms as f64 / 1000.0;
    // Attempts first, their retries over them: the retries are a part of the attempts.
    let series: [(Height, RGBColor); 2] = [
        (|b| b.attempts, FLEET_ATTEMPTS),
        (|b| b.retries, FLEET_RETRIES),
    ];
    for (height, colour) in series {
        chart
            .draw_series(buckets.iter().map(|b| {
                let x = b.from_ms as f64 / 1000.0;
                Rectangle::new(
                    [(x, 0.0), (x + width * 0.9, height(b) as f64)],
                    colour.filled(),
                )
            }))
            .map_err(failed)?;
    }
    Ok(())
}
