//! `cuda-graph-bench-report`: the benchmark's reports, apart from its measuring, and without
//! CUDA. The measuring crate (`cuda-graph-bench`) measures and writes a results folder's
//! `bench.csv` ([`Results::csv`]); everything else is made here from those results, in the
//! run or later from the committed file alone ([`Results::read`]):
//!
//! - the results README ([`readme`]): the device, the method, the table ([`table`]) and the
//!   goals' verdicts;
//! - the goals ([`goals`]), read from a data file (`bench/goals.json`), decided per run and then
//!   over the runs ([`over_runs`]);
//! - the charts ([`chart`]), and their redrawing with text ([`redraw`]);
//! - the table of the repository's top README ([`root_table`]).
//!
//! ```
//! use cuda_graph_bench_report::{over_runs, Goals, Results};
//! let csv = "# device: GPU (sm_90, 1 SMs)\n\
//!            operation,parameter,rust,cpp,ratio,unit\n\
//!            \"loop, WHILE node\",steps=5000,4.2,4.3,0.98,µs/step\n";
//! let results = Results::parse(csv)?;
//! let goals = over_runs::decide(&Goals::bench()?, &results.runs);
//! let while_loop = goals.iter().find(|goal| goal.name == "while-loop").unwrap();
//! assert!(while_loop.to_string().starts_with("met"), "{while_loop}");
//! # Ok::<(), cuda_graph_bench_report::ReportError>(())
//! ```
#![warn(missing_docs)]

pub mod chart;
mod error;
pub mod goals;
pub mod operations;
pub mod over_runs;
pub mod readme;
pub mod redraw;
pub mod results;
pub mod root_table;
mod row;
mod samples;
pub mod table;

use std::path::{Path, PathBuf};

pub use error::{write_file, ReportError, Result};
pub use goals::Goals;
pub use results::{method_line, Results, RunInfo};
pub use row::{Row, Summary};
pub use samples::{median, Samples};

/// The files a report wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The PNG chart of launch latency.
    pub chart: PathBuf,
    /// The PNG chart of the kernel chains (plain and programmatic edges).
    pub chain_chart: PathBuf,
    /// Whether the charts have text (a font was found).
    pub chart_has_text: bool,
    /// The results README.
    pub readme: PathBuf,
}

/// Writes the report of `results` into `dir`: `launch_latency.png`, `chain_replay.png` and
/// `README.md`, with `goals` decided over the runs. (`bench.csv` is the measuring crate's to
/// write: [`Results::csv`].)
pub fn write_report(results: &Results, goals: &Goals, dir: &Path) -> Result<Written> {
    let merged = results.merged();
    let device = results.info.device_name();
    let chart = dir.join(chart::FILE_NAME);
    let launch = (chart.as_path(), chart::caption(device), chart::LAUNCH_AXES, chart::series(&merged));
    let chain_chart = dir.join(chart::CHAIN_FILE_NAME);
    let chains = (
        chain_chart.as_path(),
        chart::chain_caption(device),
        chart::CHAIN_AXES,
        chart::chain_series(&merged),
    );
    std::fs::create_dir_all(dir).map_err(|error| ReportError::Io { path: dir.to_path_buf(), error })?;
    let mut text = chart::load_font();
    for (path, caption, axes, series) in [&launch, &chains] {
        // A font that registers but does not render must not cost the run its chart: retry plain.
        text = text && chart::draw(path, caption, *axes, series, true).is_ok();
    }
    if !text {
        for (path, caption, axes, series) in [&launch, &chains] {
            chart::draw(path, caption, *axes, series, false)?;
        }
    }
    let note = if text { "" } else { chart::NO_TEXT_NOTE };
    let decided = over_runs::decide(goals, &results.runs);
    let row_lines = over_runs::row_median_lines(goals, &results.runs);
    let readme = readme::results_readme(results, &decided, &row_lines, &goals.set_for, note);
    let readme = write_file(dir, readme::FILE_NAME, &readme)?;
    Ok(Written { chart, chain_chart, chart_has_text: text, readme })
}
