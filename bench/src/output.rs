//! The results as a text table (printed last), a CSV and a README for the results folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::device_info::DeviceInfo;
use crate::error::{BenchError, Result};
use crate::harness::{Plan, Row};
use crate::over_runs;
use crate::Report;

/// What a run was, for the headers.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The device and driver measured.
    pub device: DeviceInfo,
    /// `full` or `quick`.
    pub mode: &'static str,
    /// Warm-up and samples.
    pub plan: Plan,
    /// Full runs, one after the other in one process.
    pub runs: usize,
    /// When, as `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
}

impl RunInfo {
    fn method_line(&self) -> String {
        let runs = if self.runs > 1 {
            format!(
                "; {} runs in one process, each figure the median over the runs of each run's median",
                self.runs
            )
        } else {
            String::new()
        };
        format!(
            "{} run: {} warm-up + {} timed samples per side, Rust and C++ interleaved, medians{runs}",
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

/// `least-most` of `values`, each written by `write`.
fn spread(values: &chapter_common::Samples, write: fn(f64) -> String) -> String {
    let (low, high) = values.range();
    format!("{}-{}", write(low), write(high))
}

/// The cells of each line: the header, then one line per row, over the runs: Rust and C++ are
/// the medians of the runs' medians, Rust/C++ the median of the runs' ratios. With more than
/// one run, two more columns give the spread over the runs (least-most) of Rust and of the ratio.
fn cells(runs: &[Vec<Row>]) -> Vec<Vec<String>> {
    let many = runs.len() > 1;
    let header: &[&str] = if many {
        &["operation", "parameter", "Rust", "Rust, runs", "C++", "Rust/C++", "Rust/C++, runs", "unit"]
    } else {
        &["operation", "parameter", "Rust", "C++", "Rust/C++", "unit"]
    };
    let mut lines = vec![header.iter().map(|cell| cell.to_string()).collect()];
    for row in over_runs::merge(runs) {
        let ratios = over_runs::ratios(runs, &row);
        let mut line = vec![row.operation.to_string(), row.parameter.clone(), figure(row.rust())];
        if many {
            line.push(spread(&row.pair.rust, figure));
        }
        line.extend([figure(row.cpp()), format!("{:.3}", ratios.median())]);
        if many {
            line.push(spread(&ratios, |ratio| format!("{ratio:.3}")));
        }
        line.push(row.unit.to_string());
        lines.push(line);
    }
    lines
}

/// The table for the terminal, columns aligned (figures right-aligned).
pub fn text_table(runs: &[Vec<Row>]) -> String {
    let lines = cells(runs);
    let columns = lines[0].len();
    let mut widths = vec![0usize; columns];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &lines {
        let mut text = String::new();
        for (column, (cell, width)) in line.iter().zip(&widths).enumerate() {
            let pad = width - cell.chars().count();
            let sep = if column == 0 { "" } else { "  " };
            if (2..columns - 1).contains(&column) {
                let _ = write!(text, "{sep}{}{cell}", " ".repeat(pad));
            } else if column == columns - 1 {
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
pub fn markdown_table(runs: &[Vec<Row>]) -> String {
    let lines = cells(runs);
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        out.push_str("| ");
        out.push_str(&line.iter().map(|cell| cell.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
        if index == 0 {
            let figures = vec!["---:"; line.len() - 3].join(" | ");
            let _ = writeln!(out, "| --- | --- | {figures} | --- |");
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

/// The CSV: `#` lines with the device, driver, date and method, a header, one line per row of
/// each run (full-precision medians, then each side's range, the sample count and the run,
/// from 1).
pub fn csv(info: &RunInfo, runs: &[Vec<Row>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# cuda-graph-bench");
    let _ = writeln!(out, "# device: {}", info.device.device_line());
    let _ = writeln!(out, "# {}", info.device.driver_line());
    let _ = writeln!(out, "# date: {}", info.date);
    let _ = writeln!(out, "# {}", info.method_line());
    out.push_str("operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run\n");
    for (run, row) in
        runs.iter().enumerate().flat_map(|(run, rows)| rows.iter().map(move |row| (run + 1, row)))
    {
        let (rust_min, rust_max) = row.pair.rust.range();
        let (cpp_min, cpp_max) = row.pair.cpp.range();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{run}",
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
pub fn results_readme(report: &Report, chart_note: &str) -> String {
    let info = &report.info;
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
        "Written by `cargo xtask bench` (bench/); the numbers are in `bench.csv`, the charts in"
    );
    let _ = writeln!(out, "`launch_latency.png` and `chain_replay.png`{chart_note}.\n");
    out.push_str(&markdown_table(&report.runs));
    let _ = writeln!(out, "\n## Goals (issues 8 and 24, for an H100)\n");
    if report.runs.len() > 1 {
        let _ = writeln!(
            out,
            "Each goal is decided in each run, then over the runs: met only if the median of the runs'\n\
             figures meets it and at least half the runs met it.\n"
        );
    }
    for goal in &report.goals {
        // The per-run lines become a nested list.
        let _ = writeln!(out, "- {}", goal.to_string().replace("\n      run ", "\n  - run "));
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
            runs: 1,
            date: "2026-01-02 03:04 UTC".into(),
        }
    }

    #[test]
    fn the_table_has_the_header_and_every_row() {
        let table = text_table(&[rows()]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 2, "{table}");
        assert!(lines[0].starts_with("operation"), "{table}");
        assert!(
            lines[1].contains("2.100") && lines[1].contains("1.050") && lines[1].ends_with("µs/launch"),
            "{table}"
        );
        assert!(lines[2].starts_with("graph instantiate") && lines[2].ends_with("µs"), "{table}");
        assert!(!table.contains("pending"), "{table}");
        let md = markdown_table(&[rows()]);
        assert!(md.contains("| --- | --- | ---: |"), "{md}");
    }

    #[test]
    fn the_csv_names_the_device_and_quotes_commas() {
        let text = csv(&info(), &[rows()]);
        assert!(text.contains("# device: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"), "{text}");
        assert!(text.contains("# driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0"), "{text}");
        assert!(text.contains("operation,parameter,rust,cpp,ratio,unit,"), "{text}");
        assert!(text.contains("\"stream launch, empty kernel\",launches=1000,2.1,2,1.05"), "{text}");
        assert_eq!(text.lines().count(), 5 + 1 + 2, "{text}");
        let report = Report { info: info(), runs: vec![rows()], goals: vec![] };
        let readme = results_readme(&report, "");
        assert!(
            readme.contains("Measured on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 580.65.06"),
            "{readme}"
        );
    }

    #[test]
    fn several_runs_give_every_runs_rows_and_medians_over_runs_with_their_spread() {
        let mut second = rows();
        second[0].pair = Pair { rust: Samples(vec![3.0]), cpp: Samples(vec![2.0]) };
        let mut third = rows();
        third[0].pair = Pair { rust: Samples(vec![2.4]), cpp: Samples(vec![2.0]) };
        let runs = vec![rows(), second, third];
        let info = RunInfo { runs: 3, ..info() };
        let text = csv(&info, &runs);
        assert!(text.contains("samples,run\n"), "{text}");
        assert!(
            text.contains("\"stream launch, empty kernel\",launches=1000,3,2,1.5,µs/launch,3,3,2,2,1,2\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 5 + 1 + 3 * 2, "{text}");
        assert!(text.contains("3 runs in one process"), "{text}");
        let table = text_table(&runs);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 2, "{table}");
        assert!(lines[0].contains("Rust, runs") && lines[0].contains("Rust/C++, runs"), "{table}");
        // Rust medians 2.1, 3.0, 2.4: median 2.4; ratios 1.05, 1.5, 1.2: median 1.2.
        let cells: Vec<&str> = lines[1].split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect();
        assert_eq!(
            cells[2..],
            ["2.400", "2.100-3.000", "2.000", "1.200", "1.050-1.500", "µs/launch"],
            "{table}"
        );
        assert!(lines[2].contains("150.0-150.0"), "{table}");
        let md = markdown_table(&runs);
        assert!(md.contains("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"), "{md}");
        let report = Report { info, runs, goals: vec![] };
        assert!(results_readme(&report, "").contains("decided in each run, then over the runs"));
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
