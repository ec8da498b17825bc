//! Redraws a results folder's charts from its `bench.csv`. A bare GPU machine often has no
//! font, so its chart has no text; `cuda-graph-bench --redraw bench/results` on a machine that
//! has one draws the same lines with caption, axis labels and legend, and drops the README's
//! note that the chart has no text. No GPU is needed. A `bench.csv` of several runs (its `run`
//! column) is drawn from the medians over the runs, as the run drew it.

use std::path::{Path, PathBuf};

use crate::chart;
use crate::error::{BenchError, Result};
use crate::harness::{Pair, Row};
use crate::{
    cdp, data_loop, device_launch_width, graph_replay, instantiate_update, over_runs, pdl_chain,
    stream_launch,
};

/// The operations the charts draw: only their rows are read back.
const CHARTED: [&str; 9] = [
    stream_launch::OPERATION,
    graph_replay::OPERATION,
    device_launch_width::HOST_SYNC,
    device_launch_width::DEVICE_FIRE_AND_FORGET,
    device_launch_width::DEVICE_TAIL,
    pdl_chain::EMPTY_PLAIN,
    pdl_chain::EMPTY_PROGRAMMATIC,
    pdl_chain::RMW_PLAIN,
    pdl_chain::RMW_PROGRAMMATIC,
];

/// Redraws `dir/launch_latency.png` (and `dir/chain_replay.png`, when the CSV has chain rows)
/// with text from `dir/bench.csv` and returns the first one's path.
///
/// ```no_run
/// let chart = cuda_graph_bench::redraw::redraw(std::path::Path::new("bench/results"))?;
/// println!("redrew {}", chart.display());
/// # Ok::<(), cuda_graph_bench::BenchError>(())
/// ```
pub fn redraw(dir: &Path) -> Result<PathBuf> {
    let csv_path = dir.join("bench.csv");
    let csv = std::fs::read_to_string(&csv_path).map_err(|error| BenchError::Io { path: csv_path, error })?;
    let (device, rows) = parse(&csv)?;
    if !chart::load_font() {
        return Err(BenchError::Chart(
            "no usable font here either: set BENCH_FONT to a .ttf file".to_string(),
        ));
    }
    let path = dir.join(chart::FILE_NAME);
    chart::draw(&path, &chart::caption(&device), chart::LAUNCH_AXES, &chart::series(&rows), true)?;
    let chains = chart::chain_series(&rows);
    if !chains.is_empty() {
        chart::draw(
            &dir.join(chart::CHAIN_FILE_NAME),
            &chart::chain_caption(&device),
            chart::CHAIN_AXES,
            &chains,
            true,
        )?;
    }
    let readme_path = dir.join("README.md");
    if let Ok(readme) = std::fs::read_to_string(&readme_path) {
        let updated = readme.replace(chart::NO_TEXT_NOTE, "");
        if updated != readme {
            std::fs::write(&readme_path, updated)
                .map_err(|error| BenchError::Io { path: readme_path, error })?;
        }
    }
    Ok(path)
}

/// The device name and the charted rows of a `bench.csv`, over its runs
/// ([`crate::over_runs::merge`]): the chart of several runs draws the medians over the runs.
fn parse(csv: &str) -> Result<(String, Vec<Row>)> {
    let (device, runs) = read_runs(csv)?;
    let rows: Vec<Row> =
        over_runs::merge(&runs).into_iter().filter(|row| CHARTED.contains(&row.operation)).collect();
    if rows.is_empty() {
        return Err(BenchError::Options("bench.csv: no rows of the charted operations".to_string()));
    }
    Ok((device, rows))
}

/// The operations the bench measures besides the charted ones: with [`CHARTED`], every
/// operation whose rows are read back.
const NOT_CHARTED: [&str; 11] = [
    stream_launch::PROGRAMMATIC,
    instantiate_update::INSTANTIATE,
    instantiate_update::UPDATE,
    instantiate_update::UPDATE_ADD_NODE,
    instantiate_update::UPDATE_RAW,
    data_loop::HOST_SYNC,
    data_loop::HOST_SYNC_MAPPED,
    data_loop::WHILE_NODE,
    data_loop::SELF_RELAUNCH,
    cdp::FROM_DEVICE,
    cdp::FROM_HOST,
];

/// The device name and each run's rows of a `bench.csv` (one sample a side: the run's median).
/// A file without a `run` column (written before `--runs`) is one run.
///
/// ```
/// let csv = "# device: GPU (sm_90, 1 SMs)\n\
///            operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run\n\
///            graph instantiate,nodes=100,140,141,0.99,µs,1,2,1,2,31,1\n\
///            graph instantiate,nodes=100,150,141,1.06,µs,1,2,1,2,31,2\n";
/// let (device, runs) = cuda_graph_bench::redraw::read_runs(csv)?;
/// assert_eq!((device.as_str(), runs.len(), runs[1][0].rust()), ("GPU", 2, 150.0));
/// # Ok::<(), cuda_graph_bench::BenchError>(())
/// ```
pub fn read_runs(csv: &str) -> Result<(String, Vec<Vec<Row>>)> {
    let bad = |what: String| BenchError::Options(format!("bench.csv: {what}"));
    let device = csv
        .lines()
        .find_map(|line| line.strip_prefix("# device: "))
        .map(|line| line.split(" (").next().unwrap_or(line).to_string())
        .ok_or_else(|| bad("no `# device:` line".to_string()))?;
    let mut lines = csv.lines().enumerate().filter(|(_, line)| !line.starts_with('#'));
    let header = lines.next().map(|(_, line)| split_fields(line)).unwrap_or_default();
    let run_column = header.iter().position(|field| field == "run");
    let mut runs: Vec<Vec<Row>> = Vec::new();
    for (number, line) in lines {
        let fields = split_fields(line);
        let [operation, parameter, rust, cpp, _ratio, unit, ..] = fields.as_slice() else {
            return Err(bad(format!("line {} has {} fields", number + 1, fields.len())));
        };
        let Some(operation) = CHARTED.iter().chain(&NOT_CHARTED).find(|known| **known == operation.as_str())
        else {
            continue;
        };
        let value = |text: &str| {
            text.parse::<f64>().map_err(|_| bad(format!("line {}: `{text}` is not a number", number + 1)))
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
        if runs.len() < run {
            runs.resize_with(run, Vec::new);
        }
        let mut pair = Pair::default();
        pair.rust.push(value(rust)?);
        pair.cpp.push(value(cpp)?);
        runs[run - 1].push(Row::new(operation, parameter.clone(), unit_of(unit), pair));
    }
    Ok((device, runs))
}

/// The rows' units, as `'static` strings.
fn unit_of(unit: &str) -> &'static str {
    ["µs/launch", "µs/node", "µs/step", "µs/child"].into_iter().find(|known| *known == unit).unwrap_or("µs")
}

/// The fields of one CSV line: commas separate, double quotes enclose a field that holds commas
/// (`output::csv` quotes that way, doubling any quote inside).
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        assert_eq!(split_fields(r#""a, b",c,"say ""hi""""#), ["a, b", "c", r#"say "hi""#]);
        assert_eq!(split_fields("x,,y"), ["x", "", "y"]);
    }

    #[test]
    fn the_charted_rows_and_the_device_are_read_back() {
        let csv = "# cuda-graph-bench\n# device: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n\
                   operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples\n\
                   \"stream launch, empty kernel\",launches=1000,4.1,4.2,0.97,µs/launch,4,4.3,4,4.3,31\n\
                   graph instantiate,nodes=100,129.9,128.2,1.01,µs,124,269,124,156,31\n\
                   \"graph launch, device tail\",width=64,31.1,30.5,1.02,µs/launch,30,32,30,31,31\n";
        let (device, rows) = parse(csv).unwrap();
        assert_eq!(device, "NVIDIA H100 80GB HBM3");
        assert_eq!(rows.len(), 2, "graph instantiate is not charted");
        assert_eq!((rows[0].operation, rows[0].rust(), rows[0].cpp()), (stream_launch::OPERATION, 4.1, 4.2));
        assert_eq!(
            (rows[1].operation, rows[1].parameter.as_str()),
            (device_launch_width::DEVICE_TAIL, "width=64")
        );
        let series = chart::series(&rows);
        assert!(series.iter().any(|s| s.points == [(64.0, 31.1)]), "{series:?}");
    }

    #[test]
    fn several_runs_are_drawn_from_their_medians() {
        let csv = "# device: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n\
                   operation,parameter,rust,cpp,ratio,unit,rust_min,rust_max,cpp_min,cpp_max,samples,run\n\
                   \"graph launch, device tail\",width=64,31,30,1,µs/launch,30,32,30,31,31,1\n\
                   \"graph launch, device tail\",width=64,35,33,1,µs/launch,30,32,30,31,31,2\n\
                   \"graph launch, device tail\",width=64,32,29,1,µs/launch,30,32,30,31,31,3\n";
        let (_, rows) = parse(csv).unwrap();
        assert_eq!(rows.len(), 1, "one row over the three runs");
        assert_eq!((rows[0].rust(), rows[0].cpp()), (32.0, 30.0));
    }

    #[test]
    fn a_broken_file_is_refused_with_the_line() {
        let csv =
            "# device: X\noperation,parameter\n\"graph launch, device tail\",width=1,abc,1,1,µs/launch\n";
        let err = parse(csv).unwrap_err().to_string();
        assert!(err.contains("line 3: `abc` is not a number"), "{err}");
        assert!(parse("operation\n").unwrap_err().to_string().contains("no `# device:` line"));
    }
}
