//! The PNG chart: launch latency by mode and width. For now the modes are a stream launch
//! (flat: it does not depend on the chain) and a graph replay per node by chain length, each
//! for the Rust path (solid) and the C++ twin (dashed). Host vs device launch by graph width
//! joins it with the device-launch crate.
//!
//! Text needs a font. Nothing is embedded: a TrueType font is read at run time from
//! `BENCH_FONT` or a usual system place; where there is none (a bare GPU machine), the chart is
//! drawn without any text (axes, grid and lines only) and the caller says so.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::error::{BenchError, Result};
use crate::graph_replay;
use crate::harness::Row;
use crate::stream_launch;

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
    /// (chain length, µs) points.
    pub points: Vec<(f64, f64)>,
    /// Rust (solid) or C++ (dashed).
    pub rust: bool,
    /// Which mode (colour).
    pub mode: usize,
}

/// The series from the rows: stream launch (flat over the chain lengths measured) and graph
/// replay per node, each for Rust and C++.
pub fn series(rows: &[Row]) -> Vec<Series> {
    let replay: Vec<&Row> = rows.iter().filter(|row| row.operation == graph_replay::OPERATION).collect();
    let lengths: Vec<f64> = replay.iter().filter_map(|row| chain_length(&row.parameter)).collect();
    let mut out = Vec::new();
    if let Some(stream) = rows.iter().find(|row| row.operation == stream_launch::OPERATION) {
        let (lo, hi) = span(&lengths);
        for (rust, value) in [(true, stream.rust()), (false, stream.cpp())] {
            out.push(Series {
                label: format!("stream launch, empty kernel ({})", if rust { "Rust" } else { "C++, dashed" }),
                points: vec![(lo, value), (hi, value)],
                rust,
                mode: 0,
            });
        }
    }
    if !replay.is_empty() {
        for rust in [true, false] {
            let points = replay
                .iter()
                .filter_map(|row| {
                    chain_length(&row.parameter).map(|n| (n, if rust { row.rust() } else { row.cpp() }))
                })
                .collect();
            out.push(Series {
                label: format!("graph replay, per node ({})", if rust { "Rust" } else { "C++, dashed" }),
                points,
                rust,
                mode: 1,
            });
        }
    }
    out
}

fn chain_length(parameter: &str) -> Option<f64> {
    parameter.strip_prefix("nodes=")?.parse().ok()
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

const COLORS: [RGBColor; 3] =
    [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xd6, 0x27, 0x28), RGBColor(0x2c, 0xa0, 0x2c)];

fn chart_error(err: impl std::fmt::Display) -> BenchError {
    BenchError::Chart(err.to_string())
}

/// Draws `series` into a PNG at `path` (1000 × 600); with `text`, a caption, axis labels and a
/// legend, else lines and grid only.
pub fn draw(path: &Path, caption: &str, series: &[Series], text: bool) -> Result<()> {
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
            .x_desc("graph width: chain length (nodes)")
            .y_desc("µs per launch / per node")
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
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(chart_error)?;
    }
    root.present().map_err(chart_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Pair;
    use chapter_common::Samples;

    fn rows() -> Vec<Row> {
        let pair = |r: f64, c: f64| Pair { rust: Samples(vec![r]), cpp: Samples(vec![c]) };
        let mut rows = vec![Row::new(stream_launch::OPERATION, "launches=1000", "µs/launch", pair(2.4, 2.3))];
        for (n, r, c) in [(1, 2.6, 2.5), (10, 0.9, 0.88), (100, 0.62, 0.61), (1000, 0.6, 0.6)] {
            rows.push(Row::new(graph_replay::OPERATION, format!("nodes={n}"), "µs/node", pair(r, c)));
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
    fn the_chart_is_drawn_with_and_without_text() {
        let dir = std::env::temp_dir().join(format!("cuda-graph-bench-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("plain.png");
        draw(&plain, "test", &series(&rows()), false).unwrap();
        assert!(std::fs::metadata(&plain).unwrap().len() > 1000);
        if load_font() {
            let labelled = dir.join("labelled.png");
            draw(&labelled, "launch latency (test data)", &series(&rows()), true).unwrap();
            assert!(std::fs::metadata(&labelled).unwrap().len() > 1000);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
