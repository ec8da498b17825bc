//! `dynamic_parallelism`: adaptive refinement decided on the GPU, and a device graph launch
//! that actually runs.
//!
//! A field of `cells` cells is refined only where it is steep: a cell whose largest step
//! between neighbouring points exceeds `threshold` gets a child kernel that computes `refine`
//! sub-samples per point; the other cells get a coarse value. Then a reduction sums each cell.
//! Two ways to run one pass:
//! - **CDP2**: one parent kernel inspects every cell (a warp per cell) and launches a child
//!   grid from the device (`cudaStreamFireAndForget`) for each cell that needs one, counting
//!   the launches; its thread 0 tail-launches the reduction (`cudaStreamTailLaunch`), which
//!   runs after the parent grid and all its children, so it sees their writes (CDP2 has no
//!   device-side `cudaDeviceSynchronize`). One host launch per pass.
//! - **host-driven** (the baseline): three host launches per pass, an inspect kernel, one
//!   refinement launch over every cell (it reads the flags on the device; blocks of unrefined
//!   cells exit at once), then the reduction. No host round trip.
//! - **host-driven, per cell** (an extra figure): the inspect kernel, a copy of the flags back
//!   to the host and a wait, one host launch per refined cell, then the reduction.
//!
//! All three must leave the CPU model's flags, outputs and cell sums (`model`), bit for bit,
//! and refine exactly the model's number of cells (each counts itself on the device; CDP's
//! accepted launches are counted on the device too).
//!
//! Then the device graph launch the book's program attempts: a post-processing graph (total,
//! then each cell's share of it) is instantiated for device launch, uploaded, and
//! fire-and-forgotten by a launcher kernel that runs inside a graph
//! ([`device_launch::Launcher`]), with every device-side failure recorded in an
//! [`ErrorSlot`]. It is proven by its effect: the shares, the total and a run counter are
//! written by nothing else. The book's way (the launcher on a plain stream) is tried first and
//! must launch nothing (CUDA refuses it with `cudaErrorNotSupported`, 801).
//!
//! Figures are medians of `runs` timed runs after one warm-up (CUDA events around `iters`
//! passes); the headline is the host-driven baseline's time over CDP's per pass
//! (`cdp_over_host`); `cdp_over_host_per_cell` compares with the per-cell variant.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod device_graph;
mod kernels;
pub mod model;

use chapter_common::{Book, ExampleError, OptionCheck, Preset, Report, Rng, Samples};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, DeviceBuffer, Event, PinnedBuffer, Stream};
use device_graph::device_graph_launch;
use device_launch::limits::LaunchLimits;
use device_launch::ErrorSlot;
use kernels::{dp_inspect, dp_parent, dp_reduce, dp_refine, dp_refine_all};
use serde_json::json;

/// Cells per block of `dp_parent` / `dp_inspect` (a warp each); `DP_WARPS_PER_BLOCK`.
const WARPS_PER_BLOCK: u32 = 4;
/// Threads per block of `dp_refine`; `DP_CHILD_THREADS`.
const CHILD_THREADS: u32 = 128;
/// Threads per block of `dp_reduce` and `dp_post_total`; `DP_REDUCE_THREADS`.
const REDUCE_THREADS: u32 = 256;

/// The most cells: every cell may need a child, and all children of a pass (plus the tail
/// launch) must fit CUDA's default 2048 pending device launches.
pub const MAX_CELLS: u32 = 2000;
/// The most points per cell.
pub const MAX_POINTS: u32 = 4096;
/// The most sub-samples per point.
pub const MAX_REFINE: u32 = 1024;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each way after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the field.
    #[arg(skip)]
    pub seed: u64,
    /// Cells of the field, each refined or not as a whole; at most 2000 (default 1024, or 256 with
    /// --quick).
    #[arg(long, value_name = "N")]
    pub cells: u32,
    /// Points per cell (default 256, or 128 with --quick).
    #[arg(long, value_name = "N")]
    pub points: u32,
    /// Sub-samples per refined point: the refined cells' work, and the coarse value's factor
    /// (default 64).
    #[arg(long, value_name = "N")]
    pub refine: u32,
    /// A cell is refined when its steepest step exceeds this (default 64).
    #[arg(long, value_name = "N")]
    pub threshold: u32,
    /// About this percentage of cells hold a front, a steep jump (default 12).
    #[arg(long, value_name = "PCT")]
    pub front_percent: u32,
    /// Passes per timed run (default 200, or 10 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
}

impl Default for Options {
    /// Chapter scale: 1024 cells of 256 points, 64 sub-samples, fronts in ~12% of the cells
    /// (so ~120 children per pass), 200 passes per run, 5 runs.
    fn default() -> Options {
        Options {
            cells: 1024,
            points: 256,
            refine: 64,
            threshold: 64,
            front_percent: 12,
            iters: 200,
            runs: 5,
            seed: 0x5eed,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 256 cells of 128 points, 10 passes, two runs.
    pub fn quick() -> Options {
        Options { cells: 256, points: 128, iters: 10, runs: 2, ..Options::default() }
    }

    /// The sizes of the CDP part of the chapter listing (`dynamic_parallelism.cu`): 10 000
    /// values as 100 cells of 100 points, fronts in about 2% of the cells (the listing launches
    /// 2 children of 100 values: glibc's `rand()` puts 2 of its 10 sampled values above 0.5),
    /// 2 sub-samples per refined point, one pass per timed run.
    pub fn listing() -> Options {
        Options { cells: 100, points: 100, refine: 2, front_percent: 2, iters: 1, ..Options::default() }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("dynamic_parallelism")
            .rule("cells", (1..=MAX_CELLS).contains(&self.cells), || {
                format!(
                    "cells must be 1..={MAX_CELLS} (one child each at most, under 2048 pending launches), not {}",
                    self.cells
                )
            })
            .within("points", self.points, 2..=MAX_POINTS)
            .within("refine", self.refine, 1..=MAX_REFINE)
            .within("front_percent", self.front_percent, 0..=100)
            .within("iters", self.iters, 1..=1 << 20)
            .at_least("runs", self.runs, 1)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options = Options::listing();
    Book::Broken {
        why: "its device graph launch never runs",
        preset: Some(Preset { quick: Options { runs: 2, ..options.clone() }, options }),
        note: "dynamic_parallelism.cu: its device graph launch never happens (the graph is \
               instantiated without the device-launch flag, the launching kernel runs on a plain \
               stream, where CUDA 13.0 refuses it with error 801, and errors are ignored), and its \
               CDP part times one parent launch with no host-driven version to compare. The preset \
               runs that CDP part's sizes: 10 000 values, 100 cells of 100, fronts in ~2% of the \
               cells (the listing launches 2 children of 100 values: glibc's rand() puts 2 of its \
               10 sampled values above 0.5; the count here depends on the seed and is reported), \
               one pass per timed run. Not as listed: a warp per cell decides (the listing: one thread per value, 40 \
               blocks of 256, every 1000th value checked), a child is 1 block of 128 (the listing: \
               2 of 64) summing 2 sub-samples per value (the listing: one multiply-add), and a tail \
               launch reduces. The port's default: 1024 cells of 256, ~12% refined, 200 passes.",
    }
}

/// The ways of running a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One parent launch; children and the reduction launched on the device.
    Cdp,
    /// The baseline: inspect, one refinement launch over every cell, reduce.
    HostOneLaunch,
    /// Inspect, flags to the host and a wait, one launch per refined cell, reduce.
    HostPerCell,
}

/// What one timed run left on the device.
struct Pass {
    ms: f64,
    flags: Vec<u32>,
    out: Vec<u32>,
    cell_sums: Vec<u64>,
    /// Children whose launch the parent saw accepted (CDP only, counted on the device). The
    /// host-driven ways have no independent count: what the host launched follows from the
    /// flags, which are checked, so it is not reported as a check.
    launched: Option<u64>,
    /// Refined cells served (each child, or each refined cell's first block, counts itself).
    ran: u64,
    /// The first device-side launch failure, if any.
    refused: Option<String>,
}

impl Pass {
    /// The first difference from the CPU model, described.
    fn difference(&self, want: &model::Expected, iters: u32) -> Option<String> {
        if let Some(c) = self.flags.iter().zip(&want.flags).position(|(a, b)| a != b) {
            return Some(format!("cell {c}: refined flag {}, want {}", self.flags[c], want.flags[c]));
        }
        if let Some(i) = self.out.iter().zip(&want.out).position(|(a, b)| a != b) {
            return Some(format!("out[{i}] = {}, want {}", self.out[i], want.out[i]));
        }
        if let Some(c) = self.cell_sums.iter().zip(&want.cell_sums).position(|(a, b)| a != b) {
            return Some(format!("cell_sums[{c}] = {}, want {}", self.cell_sums[c], want.cell_sums[c]));
        }
        let children = u64::from(iters) * u64::from(want.refined);
        if let Some(launched) = self.launched.filter(|&l| l != children) {
            return Some(format!(
                "{launched} children launched over {iters} passes, want {children} ({} refined cells each)",
                want.refined
            ));
        }
        if self.ran != children {
            return Some(format!(
                "{} refined cells served over {iters} passes, want {children} ({} refined cells each)",
                self.ran, want.refined
            ));
        }
        None
    }
}

/// The field, the buffers and both ways of running a pass.
struct Bench {
    stream: Stream,
    start: Event,
    end: Event,
    v: DeviceBuffer<u32>,
    out: DeviceBuffer<u32>,
    flags: DeviceBuffer<u32>,
    flags_host: PinnedBuffer<u32>,
    cell_sums: DeviceBuffer<u64>,
    launched: DeviceBuffer<u32>,
    ran: DeviceBuffer<u32>,
    slot: ErrorSlot,
    options: Options,
}

impl Bench {
    fn new(field: &[u32], options: &Options) -> Result<Bench, ExampleError> {
        let cells = options.cells as usize;
        Ok(Bench {
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            v: DeviceBuffer::from_slice(field)?,
            out: DeviceBuffer::zeroed(field.len())?,
            flags: DeviceBuffer::zeroed(cells)?,
            flags_host: PinnedBuffer::zeroed(cells)?,
            cell_sums: DeviceBuffer::zeroed(cells)?,
            launched: DeviceBuffer::zeroed(1)?,
            ran: DeviceBuffer::zeroed(1)?,
            slot: ErrorSlot::new()?,
            options: options.clone(),
        })
    }

    fn parent_config(&self) -> LaunchConfig {
        LaunchConfig::new(self.options.cells.div_ceil(WARPS_PER_BLOCK), WARPS_PER_BLOCK * 32)
    }

    /// Clears everything a pass writes (flags to all ones, so a flag never written shows).
    fn reset(&mut self) -> Result<(), CudaError> {
        self.out.memset_async(0, &self.stream)?;
        self.flags.memset_async(0xff, &self.stream)?;
        self.cell_sums.memset_async(0, &self.stream)?;
        self.launched.memset_async(0, &self.stream)?;
        self.ran.memset_async(0, &self.stream)
    }

    /// `iters` passes one way, timed with events; then what they left.
    fn run(&mut self, mode: Mode) -> Result<Pass, ExampleError> {
        self.reset()?;
        let Options { cells, points, refine, threshold, iters, .. } = self.options;
        let parent = self.parent_config();
        let child = LaunchConfig::new(points.div_ceil(CHILD_THREADS), CHILD_THREADS);
        let refine_all = LaunchConfig::new(cells * points.div_ceil(CHILD_THREADS), CHILD_THREADS);
        let reduce = LaunchConfig::new(cells, REDUCE_THREADS);
        self.start.record(&self.stream)?;
        for _ in 0..iters {
            if mode == Mode::Cdp {
                let args = (
                    self.v.ptr(),
                    cells,
                    points,
                    refine,
                    threshold,
                    self.out.ptr(),
                    self.flags.ptr(),
                    self.cell_sums.ptr(),
                    self.launched.ptr(),
                    self.ran.ptr(),
                    self.slot.ptr(),
                );
                dp_parent().launch(&self.stream, parent, args)?;
            } else {
                let args = (self.v.ptr(), cells, points, refine, threshold, self.out.ptr(), self.flags.ptr());
                dp_inspect().launch(&self.stream, parent, args)?;
            }
            if mode == Mode::HostOneLaunch {
                let args =
                    (self.v.ptr(), cells, points, refine, self.flags.ptr(), self.out.ptr(), self.ran.ptr());
                dp_refine_all().launch(&self.stream, refine_all, args)?;
            } else if mode == Mode::HostPerCell {
                self.flags.copy_to_pinned_async(&mut self.flags_host, &self.stream)?;
                // Waits for the copy: the host's round trip.
                for (cell, &flag) in self.flags_host.as_slice()?.iter().enumerate() {
                    if flag != 0 {
                        let args = (
                            self.v.ptr(),
                            cells * points,
                            cell as u32,
                            points,
                            refine,
                            self.out.ptr(),
                            self.ran.ptr(),
                        );
                        dp_refine().launch(&self.stream, child, args)?;
                    }
                }
            }
            if mode != Mode::Cdp {
                dp_reduce().launch(&self.stream, reduce, (self.out.ptr(), points, self.cell_sums.ptr()))?;
            }
        }
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        self.stream.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        let refused = self.slot.take()?.err().map(|err| err.to_string());
        let launched = if mode == Mode::Cdp { Some(u64::from(self.launched.to_vec()?[0])) } else { None };
        Ok(Pass {
            ms,
            flags: self.flags.to_vec()?,
            out: self.out.to_vec()?,
            cell_sums: self.cell_sums.to_vec()?,
            launched,
            ran: u64::from(self.ran.to_vec()?[0]),
            refused,
        })
    }
}

/// Per-run samples of one way and the first problem met.
#[derive(Default)]
struct Way {
    ms: Samples,
    mismatch: Option<String>,
    refused: Option<String>,
    children_per_pass: f64,
}

impl Way {
    fn record(&mut self, run: usize, pass: Pass, want: &model::Expected, iters: u32) {
        if run > 0 {
            self.ms.push(pass.ms);
        }
        if self.mismatch.is_none() {
            self.mismatch = pass.difference(want, iters).map(|d| format!("run {run}: {d}"));
        }
        if self.refused.is_none() {
            self.refused = pass.refused.map(|d| format!("run {run}: {d}"));
        }
        // CDP: accepted device launches; host-driven: refined cells served (device-counted).
        self.children_per_pass = pass.launched.unwrap_or(pass.ran) as f64 / f64::from(iters);
    }
}

/// Runs the three ways and the device graph launch on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (device, properties) = chapter_common::device_zero()?;
    // Every child of a pass (and the tail launch) may be pending at once.
    let limits = LaunchLimits::of(device)?;
    if limits.pending_launch_count <= options.cells {
        LaunchLimits { pending_launch_count: options.cells + 1 }.apply(device)?;
    }
    let mut rng = Rng::new(options.seed);
    let field = model::field(&mut rng, options.cells, options.points, options.front_percent);
    let want = model::reference(&field, options.cells, options.points, options.refine, options.threshold);
    let mut bench = Bench::new(&field, options)?;
    let (mut host, mut per_cell, mut cdp) = (Way::default(), Way::default(), Way::default());
    for run in 0..=options.runs {
        let pass = bench.run(Mode::HostOneLaunch)?;
        host.record(run, pass, &want, options.iters);
        let pass = bench.run(Mode::HostPerCell)?;
        per_cell.record(run, pass, &want, options.iters);
        // CDP last: the device graph launch below post-processes what it left.
        let pass = bench.run(Mode::Cdp)?;
        cdp.record(run, pass, &want, options.iters);
    }
    let launched = device_graph_launch(&bench, &want, options.runs + 1)?;
    let ways = Ways { options, want: &want, host, per_cell, cdp, launched };
    let mut report = Report::new("dynamic_parallelism");
    ways.report_figures(&mut report);
    ways.report_checks(&mut report);
    ways.report_notes(&mut report, &properties);
    Ok(report)
}

/// The three ways' passes and the device graph launch, for the report.
struct Ways<'a> {
    options: &'a Options,
    want: &'a model::Expected,
    host: Way,
    per_cell: Way,
    cdp: Way,
    launched: device_graph::DeviceLaunchOutcome,
}

impl Ways<'_> {
    /// Per-pass times and ratios, the children each way served, the device graph launch.
    fn report_figures(&self, report: &mut Report) {
        let (options, want, launched) = (self.options, self.want, &self.launched);
        let (host, per_cell, cdp) = (&self.host, &self.per_cell, &self.cdp);
        let per_pass = |way: &Way| way.ms.median() * 1e3 / f64::from(options.iters);
        let (host_us, per_cell_us, cdp_us) = (per_pass(host), per_pass(per_cell), per_pass(cdp));
        report.figure("cdp_us_per_pass", cdp_us, "us");
        report.figure("host_us_per_pass", host_us, "us");
        report.figure("cdp_over_host", host_us / cdp_us, "x");
        report.figure("host_per_cell_us_per_pass", per_cell_us, "us");
        report.figure("cdp_over_host_per_cell", per_cell_us / cdp_us, "x");
        report.figure("refined_cells", f64::from(want.refined), "cells");
        report.figure("cdp_children_per_pass", cdp.children_per_pass, "launches");
        report.figure("host_children_per_pass", host.children_per_pass, "cells");
        report.figure("host_per_cell_children_per_pass", per_cell.children_per_pass, "cells");
        report.figure("device_launch_us", launched.launch_us.median(), "us");
        report.figure("device_launch_verified", f64::from(u8::from(launched.verified.is_ok())), "");
        report.figure("cells", f64::from(options.cells), "cells");
        report.figure("total_points", f64::from(options.points * options.cells), "points");
    }

    /// Each way against the CPU model, no device-side launch refused, the book's way and the
    /// device graph launch as they must go.
    fn report_checks(&self, report: &mut Report) {
        let (options, want, launched) = (self.options, self.want, &self.launched);
        let (host, per_cell, cdp) = (&self.host, &self.per_cell, &self.cdp);
        let passes = (options.runs + 1) as u64 * u64::from(options.iters);
        let ok_detail = format!(
            "{passes} passes: {} of {} cells refined, flags, all {} outputs and every cell sum bit for bit, \
         {} refined cells served per pass (device-counted)",
            want.refined,
            options.cells,
            options.cells * options.points,
            want.refined
        );
        for (name, mismatch) in [
            ("CDP pass equals the CPU model (children counted)", &cdp.mismatch),
            ("host-driven pass equals the CPU model (children counted)", &host.mismatch),
            ("host-driven per-cell pass equals the CPU model (children counted)", &per_cell.mismatch),
        ] {
            report.check_no_problem(name, mismatch.as_ref(), || ok_detail.clone());
        }
        report.check_no_problem(
            "no device-side launch refused (children and tail-launched reduction)",
            cdp.refused.as_ref(),
            || "every DL_LAUNCH_KERNEL accepted".into(),
        );
        for (name, outcome) in [
            ("the book's way (launcher on a plain stream) launches nothing", &launched.book_way),
            ("device graph launch ran, proven by its effect on the data", &launched.verified),
        ] {
            let (Ok(detail) | Err(detail)) = outcome;
            report.check(name, outcome.is_ok(), detail.clone());
        }
    }

    /// The device, what a pass is for each way, what is counted, every run's time.
    fn report_notes(&self, report: &mut Report, properties: &cuda_graph::DeviceProperties) {
        let (options, want, launched) = (self.options, self.want, &self.launched);
        let (host, per_cell, cdp) = (&self.host, &self.per_cell, &self.cdp);
        report.note(chapter_common::device_note(properties));
        report.note(format!(
        "per pass: CDP = one parent launch (children and the tail-launched reduction launched on the device); \
         host-driven (the baseline) = inspect + one refinement launch over all cells + reduction; \
         host-driven per cell = inspect + flag copy + wait + {} child launches + reduction; \
         {} cells x {} points, {} sub-samples per refined point",
        want.refined, options.cells, options.points, options.refine
    ));
        report.note(
        "children counted: CDP's accepted launches (counted by the parent) and every way's refined cells \
         served (counted by the children or refinement blocks themselves); the host's own launch count \
         follows from the checked flags, so it is not checked",
    );
        report.data(
        "ms_per_run",
        json!({"host": host.ms.to_json(), "host_per_cell": per_cell.ms.to_json(), "cdp": cdp.ms.to_json()}),
    );
        report.data("device_launch_us", launched.launch_us.to_json());
        report.data("checksum", json!({"total": want.total, "refined": want.refined}));
    }
}

/// The one-line summary for the chapter table, e.g.
/// `CDP 1.20x over host-driven (48.0 vs 57.6 µs/pass; 6.20x over per-cell host launches, 297.6 µs/pass), 123 children/pass, device graph launch verified`
/// (figures made up for the example).
///
/// ```
/// let mut report = chapter_common::Report::new("dynamic_parallelism");
/// report.figure("cdp_us_per_pass", 48.0, "us");
/// report.figure("host_us_per_pass", 57.6, "us");
/// report.figure("cdp_over_host", 1.2, "x");
/// report.figure("host_per_cell_us_per_pass", 297.6, "us");
/// report.figure("cdp_over_host_per_cell", 6.2, "x");
/// report.figure("cdp_children_per_pass", 123.0, "launches");
/// report.figure("device_launch_verified", 1.0, "");
/// assert_eq!(
///     dynamic_parallelism::headline(&report),
///     "CDP 1.20x over host-driven (48.0 vs 57.6 µs/pass; 6.20x over per-cell host launches, 297.6 µs/pass), \
///      123 children/pass, device graph launch verified"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "CDP {:.2}x over host-driven ({:.1} vs {:.1} µs/pass; {:.2}x over per-cell host launches, {:.1} µs/pass), \
         {:.0} children/pass, device graph launch {}",
        report.figure_or_nan("cdp_over_host"),
        report.figure_or_nan("cdp_us_per_pass"),
        report.figure_or_nan("host_us_per_pass"),
        report.figure_or_nan("cdp_over_host_per_cell"),
        report.figure_or_nan("host_per_cell_us_per_pass"),
        report.figure_or_nan("cdp_children_per_pass"),
        if report.figure_or_nan("device_launch_verified") == 1.0 { "verified" } else { "NOT verified" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        chapter_common::assert_options_checked::<Program>(&[(
            "cells",
            Options { cells: MAX_CELLS + 1, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&[
            "--cells=0",
            "--points=1",
            "--refine=0",
            "--front-percent=101",
            "--iters=0",
        ]);
    }

    #[test]
    fn the_default_and_quick_fields_refine_some_cells_but_not_all() {
        for o in [Options::default(), Options::quick()] {
            let field = model::field(&mut Rng::new(o.seed), o.cells, o.points, o.front_percent);
            let want = model::reference(&field, o.cells, o.points, o.refine, o.threshold);
            assert!(want.refined > o.cells / 20 && want.refined < o.cells / 5, "{} refined", want.refined);
        }
    }

    #[test]
    fn the_listing_preset_refines_a_few_of_its_100_cells() {
        let o = Options::listing();
        let field = model::field(&mut Rng::new(o.seed), o.cells, o.points, o.front_percent);
        assert_eq!(field.len(), 10_000, "the listing's 10 000 values");
        let want = model::reference(&field, o.cells, o.points, o.refine, o.threshold);
        assert!((1..=5).contains(&want.refined), "{} refined", want.refined);
    }

    #[test]
    fn a_pass_is_compared_field_by_field() {
        let v = [5, 5, 5, 5, 0, 50, 50, 50];
        let want = model::reference(&v, 2, 4, 2, 20);
        let good = Pass {
            ms: 1.0,
            flags: want.flags.clone(),
            out: want.out.clone(),
            cell_sums: want.cell_sums.clone(),
            launched: Some(3),
            ran: 3,
            refused: None,
        };
        assert_eq!(good.difference(&want, 3), None);
        let missing_child = Pass { ran: 2, ..good };
        assert!(missing_child.difference(&want, 3).unwrap().contains("2 refined cells served"));
        let refused_launch = Pass { launched: Some(2), ran: 3, ..missing_child };
        assert!(refused_launch.difference(&want, 3).unwrap().contains("2 children launched"));
        let host_way = Pass { launched: None, ..refused_launch };
        assert_eq!(host_way.difference(&want, 3), None);
    }
}
