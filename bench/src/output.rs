//! The results as a text table (printed last), a CSV and a README for the results folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::device_info::DeviceInfo;
use crate::error::{BenchError, Result};
use crate::goals::Goal;
use crate::harness::{Plan, Row};

/// What a run was, for the headers.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The device and driver measured.
    pub device: DeviceInfo,
    /// `full` or `quick`.
    pub mode: &'static str,
    /// Warm-up and samples.
    pub plan: Plan,
    /// When, as `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
}

impl RunInfo {
    fn method_line(&self) -> String {
        format!(
            "{} run: {} warm-up + {} timed samples per side, Rust and C++ interleaved, medians",
            self.mode, self.plan.warmup, self.plan.reps
        )
    }
}

/// A figure with about four significant digits.
pub fn figure(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 1000.0 {
        format!("{value:.0}")
    } else if magnitude >= 100.0 {
        format!("{value:.1}")
    } else if magnitude >= 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

const HEADER: [&str; 6] = ["operation", "parameter", "Rust", "C++", "Rust/C++", "unit"];

/// The cells of each line: the header, then the measured rows.
fn cells(rows: &[Row]) -> Vec<[String; 6]> {
    let mut lines = vec![HEADER.map(str::to_string)];
    for row in rows {
        lines.push([
            row.operation.to_string(),
            row.parameter.clone(),
            figure(row.rust()),
            figure(row.cpp()),
            format!("{:.3}", row.ratio()),
            row.unit.to_string(),
        ]);
    }
    lines
}

/// The table for the terminal, columns aligned (figures right-aligned).
pub fn text_table(rows: &[Row]) -> String {
    let lines = cells(rows);
    let mut widths = [0usize; 6];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &lines {
        let mut text = String::new();
        for (column, (cell, width)) in line.iter().zip(widths).enumerate() {
            let pad = width - cell.chars().count();
            let sep = if column == 0 { "" } else { "  " };
            if (2..=4).contains(&column) {
                let _ = write!(text, "{sep}{}{cell}", " ".repeat(pad));
            } else if column == 5 {
                let _ = write!(text, "{sep}{cell}");
            } else {
                let _ = write!(text, "{sep}{cell}{}", " ".repeat(pad));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// The same table in Markdown.
pub fn markdown_table(rows: &[Row]) -> String {
    let lines = cells(rows);
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        out.push_str("| ");
        out.push_str(&line.iter().map(|cell| cell.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
        if index == 0 {
            out.push_str("| --- | --- | ---: | ---: | ---: | --- |\n");
        }
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The CSV: `#` lines with the device, driver, date and method, a header, one line per row
/// (full-precision medians, then each side's range and sample count).
pub fn csv(info: &RunInfo, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# cuda-graph-bench");
    let _ = writeln!(out, "# device: {}", info.device.device_line());
    let _ = writeln!(out, "# {}", info.device.driver_line());
    let _ = writeln!(out, "# date: {}", info.date);
    let _ = writeln!(out, "# {}", info.method_line());
    out.push_str("operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples\n");
    for row in rows {
        let (rust_min, rust_max) = row.pair.rust.range();
        let (cpp_min, cpp_max) = row.pair.cpp.range();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(row.operation),
            csv_field(&row.parameter),
            row.rust(),
            row.cpp(),
            row.ratio(),
            csv_field(row.unit),
            rust_min,
            rust_max,
            cpp_min,
            cpp_max,
            row.pair.rust.0.len(),
        );
    }
    out
}

/// The results folder's README: where the figures came from, the table, the goals.
pub fn results_readme(info: &RunInfo, rows: &[Row], goals: &[Goal], chart_note: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmark results\n");
    let _ = writeln!(
        out,
        "Measured on {}, {}, {} ({}).\n",
        info.device.device_line(),
        info.device.driver_line(),
        info.date,
        info.method_line()
    );
    let _ = writeln!(
        out,
        "Written by `cargo xtask bench` (bench/); the numbers are in `bench.csv`, the chart in"
    );
    let _ = writeln!(out, "`launch_latency.png`{chart_note}.\n");
    out.push_str(&markdown_table(rows));
    let _ = writeln!(out, "\n## Goals (issue 8, for an H100)\n");
    for goal in goals {
        let _ = writeln!(out, "- {goal}");
    }
    out
}

/// Writes `contents` to `dir/name`, creating `dir`.
pub fn write_file(dir: &Path, name: &str, contents: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|error| BenchError::Io { path: dir.to_path_buf(), error })?;
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|error| BenchError::Io { path: path.clone(), error })?;
    Ok(path)
}

/// `YYYY-MM-DD HH:MM UTC` for seconds since 1970.
pub fn utc_date(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let (hour, minute) = ((unix_seconds % 86_400) / 3600, (unix_seconds % 3600) / 60);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// Now, as [`utc_date`].
pub fn now_utc() -> String {
    let seconds =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    utc_date(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Pair;
    use chapter_common::Samples;

    fn rows() -> Vec<Row> {
        vec![
            Row::new(
                "stream launch, empty kernel",
                "launches=1000",
                "µs/launch",
                Pair { rust: Samples(vec![2.0, 2.2, 2.1]), cpp: Samples(vec![2.0, 2.0, 2.0]) },
            ),
            Row::new(
                "graph instantiate",
                "nodes=100",
                "µs",
                Pair { rust: Samples(vec![150.0]), cpp: Samples(vec![140.0]) },
            ),
        ]
    }

    fn info() -> RunInfo {
        RunInfo {
            device: DeviceInfo {
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_capability: (9, 0),
                multiprocessors: 132,
                driver: Some("580.65.06".into()),
                driver_cuda: "13.0".into(),
                runtime_cuda: "13.0".into(),
            },
            mode: "full",
            plan: Plan { warmup: 5, reps: 31 },
            date: "2026-01-02 03:04 UTC".into(),
        }
    }

    #[test]
    fn the_table_has_the_header_and_every_row() {
        let table = text_table(&rows());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 2, "{table}");
        assert!(lines[0].starts_with("operation"), "{table}");
        assert!(
            lines[1].contains("2.100") && lines[1].contains("1.050") && lines[1].ends_with("µs/launch"),
            "{table}"
        );
        assert!(lines[2].starts_with("graph instantiate") && lines[2].ends_with("µs"), "{table}");
        assert!(!table.contains("pending"), "{table}");
        let md = markdown_table(&rows());
        assert!(md.contains("| --- | --- | ---: |"), "{md}");
    }

    #[test]
    fn the_csv_names_the_device_and_quotes_commas() {
        let text = csv(&info(), &rows());
        assert!(text.contains("# device: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"), "{text}");
        assert!(text.contains("# driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0"), "{text}");
        assert!(text.contains("operation,parameter,rust,cpp,ratio,unit,"), "{text}");
        assert!(text.contains("\"stream launch, empty kernel\",launches=1000,2.1,2,1.05"), "{text}");
        assert_eq!(text.lines().count(), 5 + 1 + 2, "{text}");
        let readme = results_readme(&info(), &rows(), &[], "");
        assert!(
            readme.contains("Measured on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 580.65.06"),
            "{readme}"
        );
    }

    #[test]
    fn figures_and_dates() {
        assert_eq!(figure(0.71234), "0.712");
        assert_eq!(figure(12.345), "12.35");
        assert_eq!(figure(123.45), "123.5");
        assert_eq!(figure(12345.6), "12346");
        assert_eq!(figure(f64::NAN), "n/a");
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_date(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc_date(951_782_400), "2000-02-29 00:00 UTC");
    }
}
