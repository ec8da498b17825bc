//! A results folder's `bench.csv`: what a run measured, written by the measuring crate through
//! [`Results::csv`] and read back by [`Results::parse`], so that every report can be made again
//! from the committed file alone.
//!
//! The file: `#` lines with the device, the driver, the date and the method, then
//! `operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run`, one
//! line per row of each run (full-precision medians, each side's least and most sample, the
//! sample count, and the run, from 1). A file without the `run` column is one run.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{ReportError, Result};
use crate::over_runs;
use crate::row::{Row, Summary};

/// The CSV's file name in a results folder.
pub const FILE_NAME: &str = "bench.csv";

/// The CSV's header line.
const HEADER: &str = "operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run";

/// What a run was, for the headers: each a line as the CSV's `#` lines give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The device, e.g. `NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)`.
    pub device: String,
    /// The driver and runtime, e.g. `driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0`.
    pub driver: String,
    /// When, as `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// How the figures were taken ([`method_line`]).
    pub method: String,
}

impl RunInfo {
    /// The device's name: its line without the parenthesis.
    ///
    /// ```
    /// # use cuda_graph_bench_report::RunInfo;
    /// let info = RunInfo { device: "GPU X (sm_90, 1 SMs)".into(), driver: String::new(), date: String::new(), method: String::new() };
    /// assert_eq!(info.device_name(), "GPU X");
    /// ```
    pub fn device_name(&self) -> &str {
        self.device.split(" (").next().unwrap_or(&self.device)
    }
}

/// How a run took its figures: `mode` (`full` or `quick`), warm-up and timed samples per side,
/// and the runs in one process.
///
/// ```
/// let line = cuda_graph_bench_report::method_line("quick", 1, 3, 1);
/// assert_eq!(line, "quick run: 1 warm-up + 3 timed samples per side, Rust and C++ in pairs, each side first in every other pair, medians");
/// ```
pub fn method_line(mode: &str, warmup: usize, reps: usize, runs: usize) -> String {
    let runs = if runs > 1 {
        format!("; {runs} runs in one process, each figure the median over the runs of each run's median")
    } else {
        String::new()
    };
    format!("{mode} run: {warmup} warm-up + {reps} timed samples per side, Rust and C++ in pairs, each side first in every other pair, medians{runs}")
}

/// What the runs measured: the run's description and each run's rows, in the order measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// Device, driver, date, method.
    pub info: RunInfo,
    /// Each run's rows.
    pub runs: Vec<Vec<Row>>,
}

impl Results {
    /// Each figure over the runs ([`over_runs::merge`]): medians of the runs' medians.
    pub fn merged(&self) -> Vec<Row> {
        over_runs::merge(&self.runs)
    }

    /// The CSV (see the module docs).
    pub fn csv(&self) -> String {
        let info = &self.info;
        let mut out = String::new();
        let _ = writeln!(out, "# cuda-graph-bench");
        let _ = writeln!(out, "# device: {}", info.device);
        let _ = writeln!(out, "# {}", info.driver);
        let _ = writeln!(out, "# date: {}", info.date);
        let _ = writeln!(out, "# {}", info.method);
        let _ = writeln!(out, "{HEADER}");
        for (run, row) in
            self.runs.iter().enumerate().flat_map(|(run, rows)| rows.iter().map(move |row| (run + 1, row)))
        {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{run}",
                csv_field(&row.operation),
                csv_field(&row.parameter),
                row.rust(),
                row.cpp(),
                row.ratio(),
                csv_field(&row.unit),
                row.rust.min,
                row.rust.max,
                row.cpp.min,
                row.cpp.max,
                row.rust.count,
            );
        }
        out
    }

    /// Reads `dir/bench.csv`.
    pub fn read(dir: &Path) -> Result<Results> {
        let path = dir.join(FILE_NAME);
        let csv = std::fs::read_to_string(&path).map_err(|error| ReportError::Io { path, error })?;
        Results::parse(&csv)
    }

    /// The results a `bench.csv` holds. Each row's sides are its medians, least and most
    /// samples and sample count; a file without those columns (or without `run`) gives the
    /// median alone (one run).
    ///
    /// ```
    /// let csv = "# device: GPU (sm_90, 1 SMs)\n\
    ///            operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run\n\
    ///            graph instantiate,nodes=100,140,141,0.99,µs,130,160,131,150,31,1\n\
    ///            graph instantiate,nodes=100,150,141,1.06,µs,1,2,1,2,31,2\n";
    /// let results = cuda_graph_bench_report::Results::parse(csv)?;
    /// assert_eq!((results.info.device_name(), results.runs.len()), ("GPU", 2));
    /// assert_eq!((results.runs[1][0].rust(), results.runs[0][0].rust.range()), (150.0, (130.0, 160.0)));
    /// # Ok::<(), cuda_graph_bench_report::ReportError>(())
    /// ```
    pub fn parse(csv: &str) -> Result<Results> {
        let bad = |what: String| ReportError::Csv(what);
        let comment = |prefix: &str| {
            csv.lines().filter_map(|line| line.strip_prefix("# ")).find_map(|line| line.strip_prefix(prefix))
        };
        let device =
            comment("device: ").ok_or_else(|| bad("no `# device:` line".to_string()))?.trim_end().to_string();
        let driver = comment("driver ").map_or(String::new(), |rest| format!("driver {}", rest.trim_end()));
        let date = comment("date: ").unwrap_or_default().trim_end().to_string();
        // The method is the `#` line that is none of the others.
        let method = csv
            .lines()
            .filter_map(|line| line.strip_prefix("# "))
            .find(|line| {
                !["cuda-graph-bench", "device: ", "driver ", "date: "]
                    .iter()
                    .any(|known| line.starts_with(known))
            })
            .unwrap_or_default()
            .trim_end()
            .to_string();
        let info = RunInfo { device, driver, date, method };
        let mut lines = csv.lines().enumerate().filter(|(_, line)| !line.starts_with('#'));
        let header = lines.next().map(|(_, line)| split_fields(line)).unwrap_or_default();
        let column = |name: &str| header.iter().position(|field| field == name);
        let [rust_min, rust_max, cpp_min, cpp_max, samples, run_column] =
            ["rust_min", "rust_max", "cpp_min", "cpp_max", "samples", "run"].map(column);
        let mut runs: Vec<Vec<Row>> = Vec::new();
        for (number, line) in lines {
            let fields = split_fields(line);
            let [operation, parameter, rust, cpp, _ratio, unit, ..] = fields.as_slice() else {
                return Err(bad(format!("line {} has {} fields", number + 1, fields.len())));
            };
            let value = |text: &str| {
                text.parse::<f64>().map_err(|_| bad(format!("line {}: `{text}` is not a number", number + 1)))
            };
            let optional = |column: Option<usize>, otherwise: f64| match column.and_then(|c| fields.get(c)) {
                Some(text) => value(text),
                None => Ok(otherwise),
            };
            let count = match samples.and_then(|c| fields.get(c)) {
                None => 1,
                Some(text) => text
                    .parse::<usize>()
                    .map_err(|_| bad(format!("line {}: samples `{text}` is not a count", number + 1)))?,
            };
            let run = match run_column {
                None => 1,
                Some(column) => {
                    let text = fields.get(column).map_or("", String::as_str);
                    text.parse::<usize>()
                        .ok()
                        .filter(|&run| run >= 1)
                        .ok_or_else(|| bad(format!("line {}: run `{text}` is not 1 or more", number + 1)))?
                }
            };
            let (rust, cpp) = (value(rust)?, value(cpp)?);
            let rust = Summary {
                median: rust,
                min: optional(rust_min, rust)?,
                max: optional(rust_max, rust)?,
                count,
            };
            let cpp =
                Summary { median: cpp, min: optional(cpp_min, cpp)?, max: optional(cpp_max, cpp)?, count };
            if runs.len() < run {
                runs.resize_with(run, Vec::new);
            }
            runs[run - 1].push(Row::new(operation.as_str(), parameter.as_str(), unit.as_str(), rust, cpp));
        }
        Ok(Results { info, runs })
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The fields of one CSV line: commas separate, double quotes enclose a field that holds commas
/// ([`csv_field`] quotes that way, doubling any quote inside).
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("fields starts with one and only grows");
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => field.push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Samples;

    fn rows() -> Vec<Row> {
        let of = |values: Vec<f64>| Summary::of(&Samples(values));
        vec![
            Row::new(
                "stream launch, empty kernel",
                "launches=1000",
                "µs/launch",
                of(vec![2.0, 2.2, 2.1]),
                of(vec![2.0, 2.0, 2.0]),
            ),
            Row::new("graph instantiate", "nodes=100", "µs", of(vec![150.0]), of(vec![140.0])),
        ]
    }

    pub(crate) fn info(runs: usize) -> RunInfo {
        RunInfo {
            device: "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)".into(),
            driver: "driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0".into(),
            date: "2026-01-02 03:04 UTC".into(),
            method: method_line("full", 5, 31, runs),
        }
    }

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        assert_eq!(split_fields(r#""a, b",c,"say ""hi""""#), ["a, b", "c", r#"say "hi""#]);
        assert_eq!(split_fields("x,,y"), ["x", "", "y"]);
    }

    #[test]
    fn the_csv_names_the_device_and_quotes_commas() {
        let results = Results { info: info(1), runs: vec![rows()] };
        let text = results.csv();
        assert!(text.contains("# device: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"), "{text}");
        assert!(text.contains("# driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0"), "{text}");
        assert!(text.contains("operation,parameter,rust,cpp,ratio,unit,"), "{text}");
        assert!(text.contains("\"stream launch, empty kernel\",launches=1000,2.1,2,1.05"), "{text}");
        assert_eq!(text.lines().count(), 5 + 1 + 2, "{text}");
    }

    #[test]
    fn several_runs_give_every_runs_rows() {
        let mut second = rows();
        second[0].rust = Summary::one(3.0);
        second[0].cpp = Summary::one(2.0);
        let results = Results { info: info(3), runs: vec![rows(), second, rows()] };
        let text = results.csv();
        assert!(text.contains("samples,run\n"), "{text}");
        assert!(
            text.contains("\"stream launch, empty kernel\",launches=1000,3,2,1.5,µs/launch,3,3,2,2,1,2\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 5 + 1 + 3 * 2, "{text}");
        assert!(text.contains("3 runs in one process"), "{text}");
    }

    #[test]
    fn a_written_csv_reads_back_as_the_same_results() {
        let mut second = rows();
        second[1].rust = Summary::of(&Samples(vec![0.1 + 0.2, 1.0 / 3.0, f64::NAN]));
        let results = Results { info: info(2), runs: vec![rows(), second] };
        let back = Results::parse(&results.csv()).unwrap();
        assert_eq!(back.info, results.info);
        assert_eq!(back.csv(), results.csv(), "figures keep every digit");
        assert_eq!(back.runs[0], results.runs[0]);
        assert_eq!(back.runs[1][1].rust.range(), results.runs[1][1].rust.range());
    }

    #[test]
    fn a_file_of_one_run_without_ranges_reads_its_medians() {
        let csv = "# device: X (sm_80, 1 SMs)\noperation,parameter,rust,cpp,ratio,unit\n\
                   \"graph launch, device tail\",width=1,2.5,2,1.25,µs/launch\n";
        let results = Results::parse(csv).unwrap();
        assert_eq!(results.runs.len(), 1);
        let row = &results.runs[0][0];
        assert_eq!(
            (row.operation.as_str(), row.rust.range(), row.cpp.count),
            (crate::operations::DEVICE_TAIL, (2.5, 2.5), 1)
        );
        assert_eq!((results.info.driver.as_str(), results.info.method.as_str()), ("", ""));
    }

    #[test]
    fn a_broken_file_is_refused_with_the_line() {
        let csv =
            "# device: X\noperation,parameter\n\"graph launch, device tail\",width=1,abc,1,1,µs/launch\n";
        let err = Results::parse(csv).unwrap_err().to_string();
        assert!(err.contains("line 3: `abc` is not a number"), "{err}");
        let err = Results::parse("# device: X\noperation\nshort,line\n").unwrap_err().to_string();
        assert!(err.contains("line 3 has 2 fields"), "{err}");
        assert!(Results::parse("operation\n").unwrap_err().to_string().contains("no `# device:` line"));
        let err = Results::parse(&format!("# device: X\n{HEADER}\nop,p,1,1,1,µs,1,1,1,1,3,0\n")).unwrap_err();
        assert!(err.to_string().contains("run `0` is not 1 or more"), "{err}");
    }
}
