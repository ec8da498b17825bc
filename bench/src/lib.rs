//! `cuda-graph-bench`: the cuda-graph crates against a hand-written C++ twin of the same work,
//! side by side, in one process on one GPU.
//!
//! Each operation is measured through the Rust path and through the twin (kernels/twin.cu,
//! plain CUDA C++ compiled by `cuda-build` with the kernels), alternately after a warm-up,
//! and reported as medians with the ratio Rust/C++:
//!
//! - (a) [`stream_launch`]: empty-kernel stream launch, µs per launch;
//! - (b) [`graph_replay`]: graph replay of a chain of 1, 10, 100, 1000 kernel nodes, µs per node;
//! - (c) [`instantiate_update`]: instantiate and whole-graph update of a 100-node chain, µs;
//! - (d) [`data_loop`]: a data-dependent loop of 5000 steps driven by host sync (the flag
//!   copied back, or read in place from mapped host memory) and by a WHILE node, µs per step;
//! - (e) [`cdp`]: CDP child launch vs host launch of the same child kernel, µs per child;
//! - (f) [`device_launch_width`]: host launch + sync vs device fire-and-forget and device tail
//!   launch (from a self-relaunching scheduler kernel) of a graph of 1, 8, 32, 64 independent
//!   nodes, µs per launch;
//! - (g) [`data_loop`]: the data-dependent loop of (d) driven by a kernel that relaunches its
//!   own graph from the device, µs per step;
//! - (h) [`pdl_chain`]: graph replay of chains of 10, 100, 1000 empty and read-modify-write
//!   kernel nodes, plain edges against programmatic edges, µs per node.
//!
//! `--runs N` repeats all of it N times in one process: every run's rows are kept.
//!
//! Every measured run's counter is checked, and so is every device-side launch's status
//! (error slot, error word), so a launch that did not run cannot pass for a fast one.
//!
//! This crate measures and writes `bench.csv`; the reports (the results README with the table
//! and the goals' verdicts, the charts, the top README's table) are the report crate's,
//! [`cuda_graph_bench_report`] (re-exported as [`report`]), which needs no CUDA and makes them
//! again from a committed `bench.csv`. With `--runs N` it reports each figure as the median
//! over the runs and decides each goal (`bench/goals.json`) per run, then over the runs.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod cdp;
pub mod data_loop;
pub mod date;
pub mod device_info;
pub mod device_launch_width;
pub mod driver_entry;
pub mod error;
pub mod graph_replay;
pub mod harness;
pub mod instantiate_update;
pub mod kernels;
pub mod pdl_chain;
pub mod stream_launch;
pub mod twin;

use std::path::{Path, PathBuf};

use cuda_graph::Device;
pub use cuda_graph_bench_report as report;
use report::{Goals, Results, RunInfo};

pub use error::{BenchError, Result};
use harness::{Plan, Row, RustSide};

/// What to measure, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// A smoke run (few samples, small sizes): `quick` in the outputs.
    pub quick: bool,
    /// The device ordinal.
    pub device: i32,
    /// Warm-up and samples per side.
    pub plan: Plan,
    /// Full runs of everything, one after the other in this process.
    pub runs: usize,
    /// (a) Launches per sample.
    pub launches: u32,
    /// (b) Chain lengths.
    pub chain_lengths: Vec<u32>,
    /// (b) Nodes run per sample (launches = this / length, at least 1).
    pub chain_target_nodes: u32,
    /// (c) Nodes of the chain instantiated and updated.
    pub update_nodes: u32,
    /// (d) Steps of the loop.
    pub loop_steps: u32,
    /// (e) Children per sample.
    pub cdp_children: u32,
    /// (f) Widths of the work graph (independent nodes).
    pub widths: Vec<u32>,
    /// (f) Iterations per sample (work graph launches, each waiting for the previous one).
    pub width_iters: u32,
}

/// (f) The widest work graph [`Options::validate`] accepts.
pub const MAX_WIDTH: u32 = 4096;
/// The most runs [`Options::validate`] accepts.
pub const MAX_RUNS: usize = 100;
/// (f) The most iterations per sample [`Options::validate`] accepts (with [`MAX_WIDTH`], the
/// counter, `width × iterations`, stays far below `u32::MAX`).
pub const MAX_WIDTH_ITERS: u32 = 100_000;

impl Options {
    /// The full run: the sizes of bench/README.md, "What is measured", 5 warm-up and 31 timed
    /// samples per side.
    pub fn full() -> Options {
        Options {
            quick: false,
            device: 0,
            plan: Plan { warmup: 5, reps: 31 },
            runs: 1,
            launches: 1000,
            chain_lengths: vec![1, 10, 100, 1000],
            chain_target_nodes: 20_000,
            update_nodes: 100,
            loop_steps: 5000,
            cdp_children: 1000,
            widths: vec![1, 8, 32, 64],
            width_iters: 200,
        }
    }

    /// A smoke run: every operation, chain length and width, small sizes, 1 warm-up and 3
    /// samples.
    pub fn quick() -> Options {
        Options {
            quick: true,
            plan: Plan { warmup: 1, reps: 3 },
            launches: 100,
            chain_target_nodes: 1000,
            loop_steps: 200,
            cdp_children: 100,
            width_iters: 20,
            ..Options::full()
        }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<()> {
        let problem = if self.plan.reps == 0 {
            "reps must be at least 1".to_string()
        } else if self.runs == 0 || self.runs > MAX_RUNS {
            format!("runs must be 1..={MAX_RUNS}, not {}", self.runs)
        } else if self.launches == 0 || self.chain_target_nodes == 0 || self.update_nodes == 0 {
            "launches, chain target and update nodes must be at least 1".to_string()
        } else if self.chain_lengths.is_empty() || self.chain_lengths.iter().any(|&n| n == 0 || n > 100_000) {
            format!("chain lengths must be 1..=100000, not {:?}", self.chain_lengths)
        } else if self.loop_steps < 2 || self.loop_steps > 10_000_000 {
            format!("loop steps must be 2..=10000000, not {}", self.loop_steps)
        } else if self.cdp_children == 0 || self.cdp_children > 2048 {
            format!(
                "CDP children must be 1..=2048 (the default pending launch limit), not {}",
                self.cdp_children
            )
        } else if self.widths.is_empty() || self.widths.iter().any(|&w| w == 0 || w > MAX_WIDTH) {
            format!("widths must be 1..={MAX_WIDTH}, not {:?}", self.widths)
        } else if self.width_iters == 0 || self.width_iters > MAX_WIDTH_ITERS {
            format!("width iterations must be 1..={MAX_WIDTH_ITERS}, not {}", self.width_iters)
        } else {
            return Ok(());
        };
        Err(BenchError::Options(problem))
    }

    /// `full` or `quick`.
    pub fn mode(&self) -> &'static str {
        if self.quick {
            "quick"
        } else {
            "full"
        }
    }
}

/// Measures everything `options.runs` times, calling `progress` with a line as each operation
/// finishes.
pub fn run(options: &Options, progress: &mut dyn FnMut(&str)) -> Result<Results> {
    options.validate()?;
    // No device: `Device::get` returns CUDA's reason (BenchError::NoDevice), before anything else.
    let device = Device::get(options.device)?;
    device.set_current()?;
    let device_info = device_info::DeviceInfo::query(device)?;
    let info = RunInfo {
        device: device_info.device_line(),
        driver: device_info.driver_line(),
        date: date::now_utc(),
        method: report::method_line(options.mode(), options.plan.warmup, options.plan.reps, options.runs),
    };
    progress(&format!("device: {}; {}", info.device, info.driver));

    let mut rust = RustSide::new()?;
    // Both sides' kernels count into the Rust side's counter (see `Twin::new`).
    let twin = twin::Twin::new(&rust.counter)?;
    // The device-launch execs of (f) and (g) of every run are kept until the last run is done:
    // launching new device-launch execs after others were destroyed was seen to silently not
    // run (RELIABILITY.md, "Known issue").
    let mut kept = Kept::default();
    let mut runs = Vec::with_capacity(options.runs);
    for run in 1..=options.runs {
        let mut numbered = |line: &str| {
            if options.runs > 1 {
                progress(&format!("run {run}/{}: {line}", options.runs));
            } else {
                progress(line);
            }
        };
        runs.push(measure_all(options, device, &twin, &mut rust, &mut kept, &mut numbered)?);
    }
    drop(kept);
    drop(rust);
    drop(twin);
    // Releases (drops) cannot return errors: they are kept, and any fails the run.
    let mut release_errors = twin::take_release_errors();
    release_errors.extend(cuda_graph::take_unreported_errors().into_iter().map(BenchError::Cuda));
    if let Some(first) = release_errors.into_iter().next() {
        return Err(first);
    }
    Ok(Results { info, runs })
}

/// What one run made for (f) and (g), kept for the later runs' sake.
#[derive(Default)]
struct Kept<'t> {
    widths: Vec<device_launch_width::WidthGraphs<'t>>,
    relaunch: Vec<data_loop::SelfRelaunch<'t>>,
}

fn measure_all<'t>(
    options: &Options, device: Device, twin: &'t twin::Twin, rust: &mut RustSide, kept: &mut Kept<'t>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<report::Row>> {
    let plan = &options.plan;
    let mut rows = Vec::new();
    let mut done = |name: &str, new: Vec<Row>, rows: &mut Vec<Row>| {
        progress(&format!("measured: {name}"));
        rows.extend(new);
    };
    done("(a) stream launch", stream_launch::measure(rust, twin, plan, options.launches)?, &mut rows);
    let replay = graph_replay::measure(rust, twin, plan, &options.chain_lengths, options.chain_target_nodes)?;
    done("(b) graph replay", replay, &mut rows);
    let pdl = pdl_chain::measure(rust, twin, plan, options.chain_target_nodes)?;
    done("(h) plain and programmatic edges", pdl, &mut rows);
    let update = instantiate_update::measure(rust, twin, plan, options.update_nodes)?;
    done("(c) instantiate and update", update, &mut rows);
    done("(d) data-dependent loop", data_loop::measure(rust, twin, plan, options.loop_steps)?, &mut rows);
    done("(e) CDP vs host launch", cdp::measure(rust, twin, plan, device, options.cdp_children)?, &mut rows);
    // The device-launch execs of (f) and (g) are kept (in `kept`) until every run is done.
    let widths = device_launch_width::WidthGraphs::new(rust, twin, &options.widths, options.width_iters)?;
    done("(f) host vs device launch by width", widths.measure(rust, plan)?, &mut rows);
    let control = widths.control(plan)?;
    kept.widths.push(widths);
    let relaunch = data_loop::SelfRelaunch::new(rust, twin, options.loop_steps)?;
    done("(g) device self-relaunch loop", relaunch.measure(rust, plan)?, &mut rows);
    kept.relaunch.push(relaunch);
    rust.stream.synchronize()?;
    let rust_first_sets = (0..device_launch_width::INSTANCES)
        .filter(|&set| device_launch_width::rust_made_first(set))
        .map(|set| set.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    for row in rows.iter().filter(|row| {
        [device_launch_width::DEVICE_FIRE_AND_FORGET, device_launch_width::DEVICE_TAIL]
            .contains(&row.operation)
    }) {
        let (rust_sets, cpp_sets) = device_launch_width::per_set_medians(row, plan.warmup);
        let list = |sets: &[Option<f64>]| {
            sets.iter()
                .map(|us| us.map_or("-".to_string(), |us| format!("{us:.2}")))
                .collect::<Vec<_>>()
                .join(" ")
        };
        progress(&format!(
            "per set (sets {} made Rust first): {} {}: Rust {} | C++ {} {}",
            rust_first_sets,
            row.operation,
            row.parameter,
            list(&rust_sets),
            list(&cpp_sets),
            row.unit
        ));
    }
    for row in control {
        progress(&format!(
            "control, C++ even sets / C++ odd sets: {} {}: {:.3} / {:.3} {} = {:.3}",
            row.operation,
            row.parameter,
            row.rust(),
            row.cpp(),
            row.unit,
            row.ratio()
        ));
    }
    Ok(rows.iter().map(Row::summary).collect())
}

/// The files a run wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The CSV.
    pub csv: PathBuf,
    /// What the report wrote from it: the charts and the results README.
    pub report: report::Written,
}

/// Writes `bench.csv` into `dir`, then hands over to the report crate for `launch_latency.png`,
/// `chain_replay.png` and `README.md` ([`report::write_report`], with `goals`).
pub fn write_outputs(results: &Results, goals: &Goals, dir: &Path) -> Result<Written> {
    let csv = report::write_file(dir, report::results::FILE_NAME, &results.csv())?;
    let report = report::write_report(results, goals, dir)?;
    Ok(Written { csv, report })
}

/// The results folder when `--out` is not given: `results/` of this package (from the package
/// folder, as the GPU runner starts it, or from the workspace root, as `cargo run` does), with
/// `quick/` under it for smoke runs so they never overwrite a full run's results.
pub fn default_out_dir(quick: bool) -> PathBuf {
    let in_package = Path::new("kernels/twin.cu").is_file();
    let base = if in_package { PathBuf::from("results") } else { PathBuf::from("bench/results") };
    if quick {
        base.join("quick")
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_are_the_readmes_and_quick_is_smaller() {
        let full = Options::full();
        assert!(full.validate().is_ok());
        assert_eq!(full.chain_lengths, [1, 10, 100, 1000]);
        assert_eq!((full.update_nodes, full.loop_steps), (100, 5000));
        assert_eq!((full.widths.as_slice(), full.width_iters), ([1, 8, 32, 64].as_slice(), 200));
        let quick = Options::quick();
        assert!(quick.validate().is_ok());
        assert!(quick.plan.reps < full.plan.reps && quick.loop_steps < full.loop_steps);
        assert!(quick.width_iters < full.width_iters);
        assert_eq!(quick.widths, full.widths, "a smoke run still covers every width");
        assert_eq!(quick.mode(), "quick");
    }

    #[test]
    fn widths_and_width_iterations_are_bounded() {
        let ok = Options { widths: vec![1, MAX_WIDTH], width_iters: MAX_WIDTH_ITERS, ..Options::quick() };
        assert!(ok.validate().is_ok());
        assert!(u64::from(MAX_WIDTH) * u64::from(MAX_WIDTH_ITERS) < u64::from(u32::MAX));
        for widths in [vec![], vec![0], vec![8, MAX_WIDTH + 1]] {
            let bad = Options { widths, ..Options::full() };
            assert!(bad.validate().unwrap_err().to_string().contains("widths must be 1..=4096"));
        }
        for width_iters in [0, MAX_WIDTH_ITERS + 1] {
            let bad = Options { width_iters, ..Options::full() };
            assert!(bad.validate().unwrap_err().to_string().contains("width iterations must be 1..=100000"));
        }
    }

    #[test]
    fn bad_options_are_refused() {
        let bad = Options { cdp_children: 5000, ..Options::full() };
        assert!(bad.validate().unwrap_err().to_string().contains("pending launch limit"));
        let bad = Options { chain_lengths: vec![0], ..Options::full() };
        assert!(bad.validate().is_err());
        let bad = Options { plan: Plan { warmup: 0, reps: 0 }, ..Options::full() };
        assert!(bad.validate().is_err());
        for runs in [0, MAX_RUNS + 1] {
            let bad = Options { runs, ..Options::quick() };
            assert!(bad.validate().unwrap_err().to_string().contains("runs must be 1..=100"));
        }
        assert!(Options { runs: MAX_RUNS, ..Options::quick() }.validate().is_ok());
    }

    #[test]
    fn a_runs_outputs_are_the_csv_and_the_report_made_from_it() {
        use harness::Pair;
        use report::Samples;
        let row = |operation, parameter: &str, rust: Vec<f64>, cpp: Vec<f64>| {
            Row::new(operation, parameter, "µs/step", Pair { rust: Samples(rust), cpp: Samples(cpp) })
                .summary()
        };
        let runs = vec![
            vec![row(data_loop::WHILE_NODE, "steps=5000", vec![4.1, 4.2, 4.6], vec![4.0, 4.3, 4.4])],
            vec![row(data_loop::WHILE_NODE, "steps=5000", vec![4.7, 4.8, 4.9], vec![4.0, 4.1, 4.2])],
        ];
        let info = RunInfo {
            device: "GPU X (sm_90, 1 SMs)".into(),
            driver: "driver 1.0 (CUDA 13.0), runtime CUDA 13.0".into(),
            date: date::utc_date(0),
            method: report::method_line("quick", 1, 3, 2),
        };
        let results = Results { info, runs };
        let dir = std::env::temp_dir().join(format!("cuda-graph-bench-outputs-{}", std::process::id()));
        let written = write_outputs(&results, &Goals::bench().unwrap(), &dir).unwrap();
        assert_eq!(Results::read(&dir).unwrap(), results, "the CSV holds the results");
        assert!(written.report.chart.is_file() && written.report.chain_chart.is_file());
        let readme = std::fs::read_to_string(&written.report.readme).unwrap();
        assert!(
            readme.contains("| loop, WHILE node | steps=5000 | 4.500 | 4.200-4.800 | 4.200 | 1.074 |"),
            "{readme}"
        );
        // Runs at 4.2 and 4.8 µs: the median, 4.5, meets the bound, and so did half the runs.
        let goal = "- met      WHILE loop <= 4.5 µs per step (while-loop): median over 2 run(s) 4.500";
        assert!(readme.contains(goal), "{readme}");
        let run = "\n  - run 1: met: 4.200 µs/step (samples 4.100-4.600); the median only";
        assert!(readme.contains(run), "{readme}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn quick_runs_write_beside_full_results() {
        assert!(default_out_dir(true).ends_with("results/quick"));
        assert!(default_out_dir(false).ends_with("results"));
    }
}
