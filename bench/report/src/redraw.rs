//! Redraws a results folder's charts from its `bench.csv`. A bare GPU machine often has no
//! font, so its chart has no text; `cuda-graph-bench --redraw bench/results` (or
//! `cuda-graph-bench-report --redraw bench/results`) on a machine that has one draws the same
//! lines with caption, axis labels and legend, and drops the README's note that the chart has
//! no text. No GPU is needed. A `bench.csv` of several runs (its `run` column) is drawn from
//! the medians over the runs, as the run drew it.

use std::path::{Path, PathBuf};

use crate::chart;
use crate::error::{ReportError, Result};
use crate::operations::{
    DEVICE_FIRE_AND_FORGET, DEVICE_TAIL, EMPTY_PLAIN, EMPTY_PROGRAMMATIC, GRAPH_REPLAY, HOST_SYNC, RMW_PLAIN,
    RMW_PROGRAMMATIC, STREAM_LAUNCH,
};
use crate::results::Results;
use crate::row::Row;

/// The operations the charts draw.
const CHARTED: [&str; 9] = [
    STREAM_LAUNCH,
    GRAPH_REPLAY,
    HOST_SYNC,
    DEVICE_FIRE_AND_FORGET,
    DEVICE_TAIL,
    EMPTY_PLAIN,
    EMPTY_PROGRAMMATIC,
    RMW_PLAIN,
    RMW_PROGRAMMATIC,
];

/// Redraws `dir/launch_latency.png` (and `dir/chain_replay.png`, when the CSV has chain rows)
/// with text from `dir/bench.csv` and returns the first one's path.
///
/// ```no_run
/// let chart = cuda_graph_bench_report::redraw::redraw(std::path::Path::new("bench/results"))?;
/// println!("redrew {}", chart.display());
/// # Ok::<(), cuda_graph_bench_report::ReportError>(())
/// ```
pub fn redraw(dir: &Path) -> Result<PathBuf> {
    let results = Results::read(dir)?;
    let rows = charted(&results)?;
    let device = results.info.device_name();
    if !chart::load_font() {
        return Err(ReportError::Chart(
            "no usable font here either: set BENCH_FONT to a .ttf file".to_string(),
        ));
    }
    let path = dir.join(chart::FILE_NAME);
    chart::draw(&path, &chart::caption(device), chart::LAUNCH_AXES, &chart::series(&rows), true)?;
    let chains = chart::chain_series(&rows);
    if !chains.is_empty() {
        chart::draw(
            &dir.join(chart::CHAIN_FILE_NAME),
            &chart::chain_caption(device),
            chart::CHAIN_AXES,
            &chains,
            true,
        )?;
    }
    let readme_path = dir.join(crate::readme::FILE_NAME);
    if let Ok(readme) = std::fs::read_to_string(&readme_path) {
        let updated = readme.replace(chart::NO_TEXT_NOTE, "");
        if updated != readme {
            std::fs::write(&readme_path, updated)
                .map_err(|error| ReportError::Io { path: readme_path, error })?;
        }
    }
    Ok(path)
}

/// The charted rows of `results` over its runs ([`crate::over_runs::merge`]): the chart of
/// several runs draws the medians over the runs.
fn charted(results: &Results) -> Result<Vec<Row>> {
    let rows: Vec<Row> =
        results.merged().into_iter().filter(|row| CHARTED.contains(&row.operation.as_str())).collect();
    if rows.is_empty() {
        return Err(ReportError::Csv("no rows of the charted operations".to_string()));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(csv: &str) -> Result<(String, Vec<Row>)> {
        let results = Results::parse(csv)?;
        Ok((results.info.device_name().to_string(), charted(&results)?))
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
        assert_eq!((rows[0].operation.as_str(), rows[0].rust(), rows[0].cpp()), (STREAM_LAUNCH, 4.1, 4.2));
        assert_eq!((rows[1].operation.as_str(), rows[1].parameter.as_str()), (DEVICE_TAIL, "width=64"));
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
    fn a_file_without_charted_rows_is_refused() {
        let csv =
            "# device: X\noperation,parameter,rust,cpp,ratio,unit\ngraph instantiate,nodes=1,1,1,1,µs\n";
        let err = parse(csv).unwrap_err().to_string();
        assert!(err.contains("no rows of the charted operations"), "{err}");
    }
}
