//! The chart: µs per step (left) and tokens per second (right) by batch size, one line per way,
//! PyTorch's dashed; both axes logarithmic. Text needs a TrueType font, read at run time from
//! `GENERATION_LOOP_FONT` or the system's font folders (nothing is embedded).

use std::path::Path;

use plotters::prelude::*;

use crate::results::{is_torch, Row};

/// The chart's file name in a results folder.
pub const FILE_NAME: &str = "generation_loop.png";

/// One line of a panel: a way's values by batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The way's key.
    pub way: String,
    /// Its legend text.
    pub label: String,
    /// (batch size, value) in batch order.
    pub points: Vec<(f64, f64)>,
}

/// One line per way (in the order the rows first name them) of `value` by batch size.
///
/// ```
/// use generation_loop::{chart::lines, results::Row};
/// let row = |batch, way: &str, us| Row { batch, way: way.into(), label: way.into(), steps: 1, tokens: 1,
///     us_per_step: us, tokens_per_s: 1.0, runs: 1, us_runs: vec![us] };
/// let rows = [row(1, "a", 3.0), row(1, "b", 5.0), row(4, "a", 4.0)];
/// let lines = lines(&rows, |r| r.us_per_step);
/// assert_eq!(lines[0].points, [(1.0, 3.0), (4.0, 4.0)]);
/// assert_eq!(lines[1].way, "b");
/// ```
pub fn lines(rows: &[Row], value: impl Fn(&Row) -> f64) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for row in rows {
        let point = (f64::from(row.batch), value(row));
        match out.iter_mut().find(|line| line.way == row.way) {
            Some(line) => line.points.push(point),
            None => out.push(Line { way: row.way.clone(), label: row.label.clone(), points: vec![point] }),
        }
    }
    for line in &mut out {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// A colour per way: ours by their letter, PyTorch's after them.
fn color(way: &str) -> RGBColor {
    match way {
        "host_launches" => RGBColor(0xff, 0x7f, 0x0e),
        "graph_per_step" => RGBColor(0x1f, 0x77, 0xb4),
        "graph_per_step_mapped" => RGBColor(0x17, 0xbe, 0xcf),
        "while_graph" => RGBColor(0x2c, 0xa0, 0x2c),
        "while_pdl" => RGBColor(0x94, 0x67, 0xbd),
        "torch_eager" => RGBColor(0xd6, 0x27, 0x28),
        _ => RGBColor(0x8c, 0x56, 0x4b),
    }
}

/// Registers a TrueType font as `sans-serif` once (`GENERATION_LOOP_FONT`, else the system's);
/// false when there is none.
pub fn load_font() -> bool {
    chapter_common::chart_font::load_sans("GENERATION_LOOP_FONT")
}

fn span(lines: &[Line]) -> (f64, f64) {
    let values =
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Headroom above the lines for the legend (a log axis: a factor).
    if lo.is_finite() {
        (lo / 1.5, hi * 15.0)
    } else {
        (1.0, 10.0)
    }
}

/// Draws one panel of `lines` on `area`.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>, title: &str, y_desc: &str, lines: &[Line],
    batches: &[f64],
) -> Result<(), String> {
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (lo, hi) = span(lines);
    let x_hi = batches.iter().copied().fold(1.0, f64::max) * 1.6;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((0.7..x_hi).log_scale().with_key_points(batches.to_vec()), (lo..hi).log_scale())
        .map_err(error)?;
    chart
        .configure_mesh()
        .x_desc("sequences in the batch")
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| if *y >= 1e4 { format!("{y:.0e}") } else { format!("{y}") })
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(error)?;
    for line in lines {
        let color = color(&line.way);
        let style = ShapeStyle::from(&color).stroke_width(3);
        let points = line.points.iter().copied();
        let drawn = if is_torch(&line.way) {
            chart.draw_series(DashedLineSeries::new(points, 10, 6, style)).map_err(error)?
        } else {
            chart.draw_series(LineSeries::new(points, style)).map_err(error)?
        };
        drawn
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(error)?;
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(error)?;
    Ok(())
}

/// Draws the two panels of `rows` into a PNG at `path` (1400 × 600), titled `caption`.
pub fn draw(path: &Path, caption: &str, rows: &[Row]) -> Result<(), String> {
    if !load_font() {
        return Err("no TrueType font found: set GENERATION_LOOP_FONT to a .ttf file".to_string());
    }
    let mut batches: Vec<f64> = rows.iter().map(|r| f64::from(r.batch)).collect();
    batches.sort_by(f64::total_cmp);
    batches.dedup();
    let root = BitMapBackend::new(path, (1400, 600)).into_drawing_area();
    let error = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(error)?;
    let root = root.titled(caption, ("sans-serif", 22)).map_err(error)?;
    let (left, right) = root.split_horizontally(700);
    panel(
        &left,
        "Time per generated step (lower is better)",
        "µs per step",
        &lines(rows, |r| r.us_per_step),
        &batches,
    )?;
    panel(
        &right,
        "Tokens per second (higher is better)",
        "tokens per second",
        &lines(rows, |r| r.tokens_per_s),
        &batches,
    )?;
    root.present().map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_is_drawn_where_a_font_exists() {
        let rows: Vec<Row> = [1u32, 4, 16, 64]
            .iter()
            .flat_map(|&b| {
                [("graph_per_step", 20.0), ("while_graph", 8.0), ("torch_graph", 45.0)].map(|(way, us)| Row {
                    batch: b,
                    way: way.into(),
                    label: way.into(),
                    steps: 100,
                    tokens: 100 * u64::from(b),
                    us_per_step: us + f64::from(b) / 8.0,
                    tokens_per_s: 1e6 * f64::from(b) / us,
                    runs: 3,
                    us_runs: vec![us; 3],
                })
            })
            .collect();
        assert_eq!(lines(&rows, |r| r.us_per_step).len(), 3);
        if !load_font() {
            eprintln!("skipped drawing: no font on this machine");
            return;
        }
        let path = std::env::temp_dir().join(format!("generation-loop-chart-{}.png", std::process::id()));
        draw(&path, "test", &rows).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 10_000);
        std::fs::remove_file(&path).unwrap();
    }
}
