//! `device_graph_launch`: graphs launched by a kernel, timed against graphs launched by the
//! host, and the device-launch limits hit on purpose.
//!
//! A work graph of `width` independent small kernel nodes (1, 8, 32, 64) runs `iters` times,
//! each iteration waiting for the previous one, launched:
//! - **from the host**: `cudaGraphLaunch` then `cudaStreamSynchronize`, every iteration
//!   (`host_sync`; `host_nosync`, back-to-back launches, is reported for reference);
//! - **from the device**: one host launch of a scheduler kernel's graph
//!   ([`device_launch::Launcher`]); the scheduler launches the work graph, counts the step, and
//!   tail-launches its own graph again (`cudaGetCurrentGraphExec`, `DL_RELAUNCH_SELF`) until
//!   `iters` steps ran. The work graph is launched **fire-and-forget** (the self-relaunch, a
//!   tail launch, waits for it), as a **tail** launch (it runs before the relaunch, in order),
//!   or as a **sibling** (nothing waits for a sibling, so the scheduler spins until its nodes
//!   have counted themselves). `relaunch_only` is the bare device loop.
//!
//! Every iteration of every mode must have run every node (each node adds a seeded amount to
//! its own counter; the CPU knows the totals), and no device-side launch may be refused. Then
//! each limit is hit on purpose: the 121st fire-and-forget launch of one launcher, its 256th
//! tail launch, and a second launch of a graph whose first is still pending must each come back
//! as a device-side error (`cudaErrorInvalidValue`) in the `ErrorSlot`, with exactly the
//! accepted graphs run: those errors are checks that hold.
//!
//! Figures are medians of `runs` timed runs after one warm-up (CUDA events around the
//! `iters` iterations); the headline is host launch + sync over device fire-and-forget per
//! iteration at the widest graph (`ff_over_host`).

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod limits;
mod sweep;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng};
use serde_json::{json, Map, Value};

pub use sweep::Mode;

/// The widest work graph accepted.
pub const MAX_WIDTH: u32 = 512;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each mode after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the amounts the nodes add.
    #[arg(skip)]
    pub seed: u64,
    /// Work-graph widths (independent kernel nodes) to measure, comma-separated (default
    /// 1,8,32,64).
    #[arg(long, value_name = "W,...", value_delimiter = ',')]
    pub widths: Vec<u32>,
    /// Iterations per timed run (default 1000, or 50 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// The launch modes to time, in report order; host launch + sync and fire-and-forget (the
    /// headline's) must be among them.
    #[arg(skip)]
    pub modes: Vec<Mode>,
}

impl Default for Options {
    /// Chapter scale: widths 1, 8, 32 and 64, 1000 iterations per run, 5 runs.
    fn default() -> Options {
        Options { widths: vec![1, 8, 32, 64], iters: 1000, runs: 5, seed: 0x5eed, modes: Mode::ALL.to_vec() }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): the same widths, 50 iterations, two runs.
    pub fn quick() -> Options {
        Options { iters: 50, runs: 2, ..Options::default() }
    }

    /// What compute-sanitizer finishes in seconds: widths 1 and 8, 4 iterations, one timed
    /// run, every mode. Under memcheck a device-launched graph's cost grows steeply with its
    /// width (one H200, CUDA 13.0, 4 iterations, one run: width 8 took 7 s, 16 took 20 s, 24
    /// took 52 s, 32 took 99 s), so the quick options (widths up to 64, 50 iterations, two
    /// runs) would run for many minutes. The checks are the same, the limit probes unchanged.
    pub fn for_sanitizer() -> Options {
        Options { widths: vec![1, 8], iters: 4, runs: 1, ..Options::quick() }
    }

    /// Leaves out the modes whose scheduler spin-waits for the work graph's nodes
    /// ([`Mode::spins`]): where the work graph's kernels cannot run beside the scheduler (a
    /// tool that runs one kernel at a time, a GPU full of other work) each spin waits out its
    /// 2 s timeout and the iteration's check fails. (Under compute-sanitizer memcheck on one
    /// H200 with CUDA 13.0 they ran and passed.)
    pub fn without_spinning_modes(mut self) -> Options {
        self.modes.retain(|mode| !mode.spins());
        self
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let bad_width = self.widths.iter().find(|&&w| w == 0 || w > MAX_WIDTH);
        OptionCheck::new("device_graph_launch")
            .rule("widths", !self.widths.is_empty(), || "at least one width is needed".to_string())
            .rule("widths", bad_width.is_none(), || {
                format!("widths must be 1..={MAX_WIDTH}, not {}", bad_width.unwrap_or(&0))
            })
            .within("iters", self.iters, 1..=1 << 20)
            .at_least("runs", self.runs, 1)
            .rule(
                "modes",
                self.modes.contains(&Mode::HostSync) && self.modes.contains(&Mode::FireAndForget),
                || {
                    "the modes must include host_sync and fire_and_forget (the headline compares them)"
                        .to_string()
                },
            )
            .rule("modes", !(1..self.modes.len()).any(|i| self.modes[..i].contains(&self.modes[i])), || {
                "a mode is listed twice".to_string()
            })
            .done()
    }

    /// The widest graph measured (the headline's).
    pub fn widest(&self) -> u32 {
        self.widths.iter().copied().max().unwrap_or(1)
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter gives sketches without sizes (a scheduler kernel that \
               fire-and-forgets a graph and relaunches itself with cudaGetCurrentGraphExec) and \
               quotes NVIDIA's device graph launch blog: device launch over 2x lower latency than \
               host launch and flat in topology and width, whose graphs are not described. The \
               widths, work graph and iterations are the port's.",
    }
}

/// Runs the sweep and the limit probes on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed host call) or invalid options; a wrong result or a
/// refused device-side launch in the sweep is not an error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let mut rng = Rng::new(options.seed);
    let mut shared = sweep::Shared::new(options.widest())?;
    let widths = options
        .widths
        .iter()
        .map(|&w| {
            let amounts: Vec<u32> = (0..w).map(|_| 1 + rng.below(1000)).collect();
            sweep::Width::new(&shared, &amounts, options.iters)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let series = measure_series(options, &mut shared, &widths)?;
    let probes = limits::probe_all(&shared.stream)?;
    let mut report = Report::new("device_graph_launch");
    let table = report_figures(options, &widths, &series, &mut report);
    report_checks(options, &series, probes, &mut report);
    report.note(chapter_common::device_note(&properties));
    report.note(format!(
        "per iteration, widths {:?}: host_sync = cudaGraphLaunch + cudaStreamSynchronize; device modes = one \
         scheduler step (launch the work graph, tail-relaunch itself), one host launch per {} iterations; \
         fire_and_forget_batched = {} iterations per scheduler step, spinning on the nodes' done count",
        options.widths,
        options.iters,
        sweep::BATCH
    ));
    report.data("us_per_iter", Value::Object(table));
    Ok(report)
}

/// `series[w][m]`: width index, index in `options.modes`. Modes and widths alternate within
/// every run; run 0 is the warm-up.
fn measure_series(
    options: &Options, shared: &mut sweep::Shared, widths: &[sweep::Width],
) -> Result<Vec<Vec<sweep::Series>>, ExampleError> {
    let modes = &options.modes;
    let mut series: Vec<Vec<sweep::Series>> =
        widths.iter().map(|_| modes.iter().map(|_| sweep::Series::default()).collect()).collect();
    for run in 0..=options.runs {
        for (w, width) in widths.iter().enumerate() {
            for (m, &mode) in modes.iter().enumerate() {
                let iters = mode.iterations(options.iters);
                let outcome = sweep::time(shared, width, mode, iters)?;
                series[w][m].record(run, outcome, mode, width, iters);
            }
        }
    }
    Ok(series)
}

/// Each width's per-iteration time per mode and device-over-host ratios, then the widest's
/// headline; returns the times as a width → mode table.
fn report_figures(
    options: &Options, widths: &[sweep::Width], series: &[Vec<sweep::Series>], report: &mut Report,
) -> Map<String, Value> {
    let modes = &options.modes;
    let position = |mode: Mode| modes.iter().position(|&m| m == mode);
    let mut table = Map::new();
    for (w, width) in widths.iter().enumerate() {
        let mut row = Map::new();
        for (m, mode) in modes.iter().enumerate() {
            let us = series[w][m].us_per_iter(mode.iterations(options.iters));
            report.figure(&format!("{}_us_w{}", mode.name(), width.width), us, "us");
            row.insert(mode.name().to_string(), json!(us));
        }
        let us =
            |mode: Mode| position(mode).map(|m| series[w][m].us_per_iter(mode.iterations(options.iters)));
        let host = us(Mode::HostSync).unwrap_or(f64::NAN);
        report.figure(
            &format!("ff_over_host_w{}", width.width),
            host / us(Mode::FireAndForget).unwrap_or(f64::NAN),
            "x",
        );
        if let Some(batched) = us(Mode::FireAndForgetBatch) {
            report.figure(&format!("ff_batched_over_host_w{}", width.width), host / batched, "x");
        }
        table.insert(width.width.to_string(), Value::Object(row));
    }
    let widest = options.widest();
    let w = options.widths.iter().position(|&x| x == widest).unwrap_or(0);
    let us = |mode: Mode| position(mode).map(|m| series[w][m].us_per_iter(mode.iterations(options.iters)));
    let host = us(Mode::HostSync).unwrap_or(f64::NAN);
    report.figure("ff_over_host", host / us(Mode::FireAndForget).unwrap_or(f64::NAN), "x");
    if let Some(batched) = us(Mode::FireAndForgetBatch) {
        report.figure("ff_batched_over_host", host / batched, "x");
    }
    report.figure("widest", f64::from(widest), "nodes");
    report.figure("iters", f64::from(options.iters), "iterations");

    table
}

/// Every mode ran every iteration at every width, and each limit probe held.
fn report_checks(
    options: &Options, series: &[Vec<sweep::Series>], probes: Vec<limits::Probe>, report: &mut Report,
) {
    let modes = &options.modes;
    let iterations = (options.runs + 1) * options.iters as usize;
    for (m, mode) in modes.iter().enumerate() {
        let problem = series.iter().find_map(|row| row[m].problem.clone());
        let what = match mode {
            Mode::RelaunchOnly => {
                format!(
                    "the scheduler relaunched itself to exactly {} steps every run, none refused",
                    options.iters
                )
            }
            _ if mode.device_code().is_some() => format!(
                "{iterations} iterations per width: every node ran once per iteration, the scheduler counted \
                 {} per run, no device-side launch refused",
                options.iters
            ),
            _ => format!("{iterations} iterations per width: every node ran once per iteration"),
        };
        report.check(
            &format!("{}: every iteration ran", mode.name()),
            problem.is_none(),
            problem.unwrap_or(what),
        );
    }
    for probe in probes {
        report.check(probe.name, probe.held, probe.detail);
    }
}

/// The one-line summary for the chapter table, e.g.
/// `device fire-and-forget 2.40x over host launch+sync at width 64 (28.6 vs 68.6 µs/iter;
/// spin-waited 3.13x)`. The spin-waited ratio is left out when the run had no batched mode
/// (`--no-spin`).
///
/// ```
/// let mut report = chapter_common::Report::new("device_graph_launch");
/// report.figure("widest", 64.0, "nodes");
/// report.figure("host_sync_us_w64", 68.6, "us");
/// report.figure("fire_and_forget_us_w64", 28.6, "us");
/// report.figure("ff_over_host", 2.4, "x");
/// assert_eq!(
///     device_graph_launch::headline(&report),
///     "device fire-and-forget 2.40x over host launch+sync at width 64 (28.6 vs 68.6 µs/iter)"
/// );
/// report.figure("ff_batched_over_host", 3.13, "x");
/// assert!(device_graph_launch::headline(&report).ends_with("µs/iter; spin-waited 3.13x)"));
/// ```
pub fn headline(report: &Report) -> String {
    let widest = report.figure_or_nan("widest");
    let batched = report
        .figure_value("ff_batched_over_host")
        .map(|ratio| format!("; spin-waited {ratio:.2}x"))
        .unwrap_or_default();
    format!(
        "device fire-and-forget {:.2}x over host launch+sync at width {widest:.0} ({:.1} vs {:.1} µs/iter{batched})",
        report.figure_or_nan("ff_over_host"),
        report.figure_or_nan(&format!("fire_and_forget_us_w{widest:.0}")),
        report.figure_or_nan(&format!("host_sync_us_w{widest:.0}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sanitizer_options_are_small_and_valid_and_keep_every_mode() {
        use chapter_common::ChapterProgram;
        let options = Program::sanitizer_options();
        assert_eq!(options, Options::for_sanitizer());
        assert!(options.validate().is_ok());
        assert_eq!(options.modes, Mode::ALL, "every mode, the spinning ones included");
        assert!(options.widest() < Options::quick().widest() && options.iters < Options::quick().iters);
    }

    #[test]
    fn without_spinning_modes_keeps_the_headline_and_drops_only_the_spinners() {
        let options = Options::quick().without_spinning_modes();
        assert!(options.validate().is_ok());
        assert_eq!(
            options.modes,
            [Mode::HostSync, Mode::HostNoSync, Mode::RelaunchOnly, Mode::FireAndForget, Mode::Tail]
        );
    }

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        assert_eq!(Options::default().widest(), 64);
        chapter_common::assert_options_checked::<Program>(&[
            ("widths", Options { widths: vec![], ..Options::quick() }),
            ("widths", Options { widths: vec![MAX_WIDTH + 1], ..Options::quick() }),
            ("modes", Options { modes: vec![Mode::HostSync], ..Options::quick() }),
            ("modes", Options { modes: vec![Mode::FireAndForget, Mode::Tail], ..Options::quick() }),
            (
                "modes",
                Options {
                    modes: vec![Mode::HostSync, Mode::FireAndForget, Mode::HostSync],
                    ..Options::quick()
                },
            ),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--widths=1,0", "--iters=0"]);
    }

    #[test]
    fn the_mode_table_matches_the_kernel() {
        let kernel = include_str!("../kernels/scheduler.cu");
        for (name, value) in
            [("DGL_RELAUNCH_ONLY", 0), ("DGL_FIRE_AND_FORGET", 1), ("DGL_TAIL", 2), ("DGL_SIBLING", 3)]
        {
            assert!(kernel.contains(&format!("#define {name} {value}u")), "{name}");
        }
        assert!(kernel.contains(&format!("#define DGL_FIRE_AND_FORGET_BATCH {}u", 4)));
        let codes: Vec<_> = Mode::ALL.iter().filter_map(|m| m.device_code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
        assert!(Mode::ALL.iter().enumerate().all(|(i, m)| m.index() == i));
    }
}
