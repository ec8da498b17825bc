//! The PNG chart: launch latency by mode and width, each mode for the Rust path (solid) and
//! the C++ twin (dashed). The x axis is the graph's width in nodes (log scale): a chain's
//! length for graph replay, the number of independent nodes for (f). The modes:
//!
//! - stream launch of an empty kernel, µs per launch (flat: it has no width);
//! - graph replay, µs per node, by chain length;
//! - (f) graph launch, host + sync; device fire-and-forget; device tail: µs per launch of the
//!   work graph, by width.
//!
//! A second chart, [`CHAIN_FILE_NAME`], draws graph replay of kernel chains per node by chain
//! length: the (b) chain and the (h) chains of empty and read-modify-write kernels with plain
//! and with programmatic edges, whose values the first chart's scale would flatten.
//!
//! Text needs a font. Nothing is embedded: a TrueType font is read at run time from
//! `BENCH_FONT` or a usual system place; where there is none (a bare GPU machine), the chart is
//! drawn without any text (axes, grid and lines only) and the caller says so.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::error::{ReportError, Result};
use crate::operations::{
    DEVICE_FIRE_AND_FORGET, DEVICE_TAIL, EMPTY_PLAIN, EMPTY_PROGRAMMATIC, GRAPH_REPLAY, HOST_SYNC, RMW_PLAIN,
    RMW_PROGRAMMATIC, STREAM_LAUNCH,
};
use crate::row::Row;

/// The chart's file name in a results folder.
pub const FILE_NAME: &str = "launch_latency.png";

/// The chain chart's file name in a results folder.
pub const CHAIN_FILE_NAME: &str = "chain_replay.png";

/// What the results README says after the chart's name when the chart has no text.
pub const NO_TEXT_NOTE: &str =
    " (drawn without text: no usable font was found; set BENCH_FONT to a .ttf file for labels)";

/// The chart's caption for a device.
///
/// ```
/// assert_eq!(cuda_graph_bench_report::chart::caption("X"), "Launch latency by mode and width: X");
/// ```
pub fn caption(device_name: &str) -> String {
    format!("Launch latency by mode and width: {device_name}")
}

/// The chain chart's caption for a device.
///
/// ```
/// assert_eq!(cuda_graph_bench_report::chart::chain_caption("X"), "Kernel chain replay, plain and programmatic edges: X");
/// ```
pub fn chain_caption(device_name: &str) -> String {
    format!("Kernel chain replay, plain and programmatic edges: {device_name}")
}

/// The axis descriptions of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axes {
    /// Under the x axis.
    pub x: &'static str,
    /// Beside the y axis.
    pub y: &'static str,
}

/// The launch-latency chart's axes.
pub const LAUNCH_AXES: Axes = Axes {
    x: "graph width (nodes): chain length for replay, independent nodes for host/device launch",
    y: "µs per launch (replay: per node)",
};

/// The chain chart's axes.
pub const CHAIN_AXES: Axes = Axes { x: "chain length (kernel nodes)", y: "µs per node" };

/// Where fonts usually are (Debian/Ubuntu, Fedora/RHEL, Arch, SUSE).
const FONT_PLACES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/google-noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
];

/// Registers a system font as plotters' `sans-serif` once; true when one was found.
pub fn load_font() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let from_env = std::env::var_os("BENCH_FONT").map(std::path::PathBuf::from);
        let candidates = from_env.into_iter().chain(FONT_PLACES.iter().map(std::path::PathBuf::from));
        for path in candidates {
            let Ok(bytes) = std::fs::read(&path) else { continue };
            // Registered fonts must live for the program: leak this one copy.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
        false
    })
}

/// One line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend text.
    pub label: String,
    /// (width in nodes, µs) points.
    pub points: Vec<(f64, f64)>,
    /// Rust (solid) or C++ (dashed).
    pub rust: bool,
    /// Which mode (colour).
    pub mode: usize,
}

/// The modes drawn by width: (operation, parameter prefix of the width, legend text), in
/// colour order after the stream launch.
const BY_WIDTH: [(&str, &str, &str); 4] = [
    (GRAPH_REPLAY, "nodes=", "graph replay, per node"),
    (HOST_SYNC, "width=", "graph launch, host + sync"),
    (DEVICE_FIRE_AND_FORGET, "width=", "graph launch, device fire-and-forget"),
    (DEVICE_TAIL, "width=", "graph launch, device tail"),
];

/// The chains drawn by length on the chain chart, in colour order.
const CHAINS: [(&str, &str, &str); 5] = [
    (GRAPH_REPLAY, "nodes=", "kernel chain, *c += v (b)"),
    (EMPTY_PLAIN, "nodes=", "empty, plain edges"),
    (EMPTY_PROGRAMMATIC, "nodes=", "empty, programmatic edges"),
    (RMW_PLAIN, "nodes=", "*c += 1, plain edges"),
    (RMW_PROGRAMMATIC, "nodes=", "*c += 1, programmatic edges"),
];

/// The chain chart's series: each chain (the (b) chain and the four (h) chains) that has rows,
/// by length, for Rust and C++.
pub fn chain_series(rows: &[Row]) -> Vec<Series> {
    by_width(rows, &CHAINS, 0)
}

/// The series from the rows: stream launch (flat over the widths measured), then graph replay
/// by chain length and the three (f) modes by width, those that have rows; each for Rust and
/// C++.
pub fn series(rows: &[Row]) -> Vec<Series> {
    let widths: Vec<f64> = rows.iter().filter_map(|row| width_of(row, &BY_WIDTH)).collect();
    let mut out = Vec::new();
    let side = |rust: bool| if rust { "Rust" } else { "C++, dashed" };
    if let Some(stream) = rows.iter().find(|row| row.operation == STREAM_LAUNCH) {
        let (lo, hi) = span(&widths);
        for (rust, value) in [(true, stream.rust()), (false, stream.cpp())] {
            out.push(Series {
                label: format!("stream launch, empty kernel ({})", side(rust)),
                points: vec![(lo, value), (hi, value)],
                rust,
                mode: 0,
            });
        }
    }
    out.extend(by_width(rows, &BY_WIDTH, 1));
    out
}

/// For each of `modes` (operation, parameter prefix, legend) that has rows, its Rust and C++
/// series by width; colours from `first_mode` on.
fn by_width(rows: &[Row], modes: &[(&str, &str, &str)], first_mode: usize) -> Vec<Series> {
    let side = |rust: bool| if rust { "Rust" } else { "C++, dashed" };
    let mut out = Vec::new();
    for (index, (operation, _, label)) in modes.iter().enumerate() {
        let mode_rows: Vec<&Row> = rows.iter().filter(|row| row.operation == *operation).collect();
        if mode_rows.is_empty() {
            continue;
        }
        for rust in [true, false] {
            let points = mode_rows
                .iter()
                .filter_map(|row| {
                    width_of(row, modes).map(|n| (n, if rust { row.rust() } else { row.cpp() }))
                })
                .collect();
            out.push(Series {
                label: format!("{label} ({})", side(rust)),
                points,
                rust,
                mode: index + first_mode,
            });
        }
    }
    out
}

/// The width of a row of one of `modes`, from its parameter.
fn width_of(row: &Row, modes: &[(&str, &str, &str)]) -> Option<f64> {
    let (_, prefix, _) = modes.iter().find(|(operation, ..)| *operation == row.operation)?;
    row.parameter.strip_prefix(prefix)?.parse().ok()
}

fn span(lengths: &[f64]) -> (f64, f64) {
    let lo = lengths.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = lengths.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (1.0, 1000.0)
    }
}

const COLORS: [RGBColor; 5] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
];

fn chart_error(err: impl std::fmt::Display) -> ReportError {
    ReportError::Chart(err.to_string())
}

/// Draws `series` into a PNG at `path` (1000 × 600); with `text`, a caption, axis labels
/// (`axes`) and a legend, else lines and grid only.
pub fn draw(path: &Path, caption: &str, axes: Axes, series: &[Series], text: bool) -> Result<()> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x_lo, x_hi) = span(&xs.collect::<Vec<_>>());
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max);
    let y_hi = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };

    let root = BitMapBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(chart_error)?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder.caption(caption, ("sans-serif", 22)).x_label_area_size(50).y_label_area_size(70);
    }
    let mut chart =
        builder.build_cartesian_2d((x_lo * 0.8..x_hi * 1.25).log_scale(), 0.0..y_hi).map_err(chart_error)?;
    if text {
        chart
            .configure_mesh()
            .x_desc(axes.x)
            .y_desc(axes.y)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(chart_error)?;
    } else {
        // Grid and axes only: every call below that would place text is left out.
        chart
            .plotting_area()
            .draw(&PathElement::new(vec![(x_lo * 0.8, 0.0), (x_hi * 1.25, 0.0)], BLACK))
            .map_err(chart_error)?;
        for decade in [1.0, 10.0, 100.0, 1000.0, 10_000.0] {
            if decade >= x_lo * 0.8 && decade <= x_hi * 1.25 {
                chart
                    .plotting_area()
                    .draw(&PathElement::new(vec![(decade, 0.0), (decade, y_hi)], BLACK.mix(0.15)))
                    .map_err(chart_error)?;
            }
        }
    }
    for s in series {
        let color = COLORS[s.mode % COLORS.len()];
        let style = ShapeStyle::from(&color).stroke_width(if s.rust { 3 } else { 2 });
        let drawn = if s.rust {
            chart.draw_series(LineSeries::new(s.points.iter().copied(), style)).map_err(chart_error)?
        } else {
            chart
                .draw_series(DashedLineSeries::new(s.points.iter().copied(), 10, 6, style))
                .map_err(chart_error)?
        };
        if text {
            drawn
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        }
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), if s.rust { 4 } else { 3 }, color.filled())),
            )
            .map_err(chart_error)?;
    }
    if text {
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(chart_error)?;
    }
    root.present().map_err(chart_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    fn rows() -> Vec<Row> {
        let mut rows = vec![Row::single(STREAM_LAUNCH, "launches=1000", "µs/launch", 2.4, 2.3)];
        for (n, r, c) in [(1, 2.6, 2.5), (10, 0.9, 0.88), (100, 0.62, 0.61), (1000, 0.6, 0.6)] {
            rows.push(Row::single(GRAPH_REPLAY, format!("nodes={n}"), "µs/node", r, c));
        }
        rows
    }

    fn rows_with_widths() -> Vec<Row> {
        let mut rows = rows();
        for (operation, base) in [(HOST_SYNC, 10.0), (DEVICE_FIRE_AND_FORGET, 3.0), (DEVICE_TAIL, 4.0)] {
            for width in [1u32, 8, 32, 64] {
                let us = base + f64::from(width) / 64.0;
                rows.push(Row::single(operation, format!("width={width}"), "µs/launch", us, us * 1.01));
            }
        }
        rows
    }

    #[test]
    fn series_come_from_the_rows() {
        let s = series(&rows());
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].points, [(1.0, 2.4), (1000.0, 2.4)]);
        assert_eq!(s[3].points[2], (100.0, 0.61));
        assert!(s[2].rust && !s[3].rust);
        assert!(series(&[]).is_empty());
    }

    #[test]
    fn host_and_device_launch_modes_are_drawn_by_width() {
        let s = series(&rows_with_widths());
        assert_eq!(s.len(), 10);
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels[4], "graph launch, host + sync (Rust)");
        assert_eq!(labels[7], "graph launch, device fire-and-forget (C++, dashed)");
        assert_eq!(labels[9], "graph launch, device tail (C++, dashed)");
        assert_eq!(s[6].points, [(1.0, 3.0 + 1.0 / 64.0), (8.0, 3.125), (32.0, 3.5), (64.0, 4.0)]);
        assert_eq!((s[6].mode, s[8].mode), (3, 4));
        assert!(s[8].rust && !s[9].rust);
        assert_eq!(s[0].points, [(1.0, 2.4), (1000.0, 2.4)], "the stream line spans every width");
    }

    #[test]
    fn the_chain_chart_draws_every_chain_by_length() {
        let mut rows = rows();
        for (operation, base) in [(EMPTY_PLAIN, 0.8), (EMPTY_PROGRAMMATIC, 0.5)] {
            for n in [10u32, 100, 1000] {
                rows.push(Row::single(operation, format!("nodes={n}"), "µs/node", base, base));
            }
        }
        let s = chain_series(&rows);
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels[0], "kernel chain, *c += v (b) (Rust)");
        assert_eq!(labels[4], "empty, programmatic edges (Rust)");
        assert_eq!(s[4].points, [(10.0, 0.5), (100.0, 0.5), (1000.0, 0.5)]);
        assert_eq!((s[2].mode, s[4].mode), (1, 2));
        assert_eq!(s.len(), 6, "chains without rows are left out");
    }

    #[test]
    fn the_chart_is_drawn_with_and_without_text() {
        let dir = std::env::temp_dir().join(format!("cuda-graph-bench-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("plain.png");
        draw(&plain, "test", LAUNCH_AXES, &series(&rows_with_widths()), false).unwrap();
        assert!(std::fs::metadata(&plain).unwrap().len() > 1000);
        if load_font() {
            let labelled = dir.join("labelled.png");
            draw(&labelled, "launch latency (test data)", LAUNCH_AXES, &series(&rows_with_widths()), true)
                .unwrap();
            assert!(std::fs::metadata(&labelled).unwrap().len() > 1000);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
