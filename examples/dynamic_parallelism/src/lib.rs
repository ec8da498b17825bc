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
//! - **host-driven**: an inspect kernel, a copy of the refinement flags back to the host and
//!   a wait, one host launch per refined cell, then the reduction.
//!
//! Both must leave the CPU model's flags, outputs and cell sums (`model`), bit for bit, and
//! launch exactly the model's number of children (counted on the device).
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
//! passes); the headline is host-driven time over CDP time per pass (`cdp_over_host`).

#![warn(missing_docs)]

mod kernels;
pub mod model;

use chapter_common::{Report, Rng, Samples};
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, Device, DeviceBuffer, Event, PinnedBuffer, Stream};
use device_launch::limits::LaunchLimits;
use device_launch::{instantiate_for_device, ErrorSlot, Launcher};
use kernels::{dp_dispatch, dp_inspect, dp_parent, dp_post_share, dp_post_total, dp_reduce, dp_refine};
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

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Cells of the field (each refined or not as a whole).
    pub cells: u32,
    /// Points per cell.
    pub points: u32,
    /// Sub-samples per point: the refined cells' work, and the coarse value's factor.
    pub refine: u32,
    /// A cell is refined when its steepest step exceeds this.
    pub threshold: u32,
    /// About this percentage of cells hold a front (a steep jump).
    pub front_percent: u32,
    /// Passes per timed run.
    pub iters: u32,
    /// Timed runs of each way after one warm-up; figures are their medians.
    pub runs: usize,
    /// Seed of the field.
    pub seed: u64,
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

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), CudaError> {
        let problem = if self.cells == 0 || self.cells > MAX_CELLS {
            format!(
                "cells must be 1..={MAX_CELLS} (one child each at most, under 2048 pending launches), not {}",
                self.cells
            )
        } else if self.points < 2 || self.points > MAX_POINTS {
            format!("points must be 2..={MAX_POINTS}, not {}", self.points)
        } else if self.refine == 0 || self.refine > MAX_REFINE {
            format!("refine must be 1..={MAX_REFINE}, not {}", self.refine)
        } else if self.front_percent > 100 {
            format!("front_percent must be 0..=100, not {}", self.front_percent)
        } else if self.iters == 0 || self.iters > 1 << 20 {
            format!("iters must be 1..={}, not {}", 1 << 20, self.iters)
        } else if self.runs == 0 {
            "runs must be at least 1".to_string()
        } else {
            return Ok(());
        };
        Err(CudaError::InvalidArgument { call: "dynamic_parallelism::run", problem })
    }
}

/// A host-side `device_launch` error as the chapter runner's error type.
fn cuda(err: device_launch::Error) -> CudaError {
    match err {
        device_launch::Error::Cuda(err) => err,
        other => CudaError::InvalidArgument {
            call: "dynamic_parallelism (device launch)",
            problem: other.to_string(),
        },
    }
}

/// What one timed run left on the device.
struct Pass {
    ms: f64,
    flags: Vec<u32>,
    out: Vec<u32>,
    cell_sums: Vec<u64>,
    /// Children launched: counted by the parent (CDP) or by the host loop.
    launched: u64,
    /// Children that ran (each counts itself).
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
        if self.launched != children || self.ran != children {
            return Some(format!(
                "{} children launched and {} ran over {iters} passes, want {children} ({} refined cells each)",
                self.launched, self.ran, want.refined
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
    fn new(field: &[u32], options: &Options) -> Result<Bench, CudaError> {
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
    fn run(&mut self, cdp: bool) -> Result<Pass, CudaError> {
        self.reset()?;
        let Options { cells, points, refine, threshold, iters, .. } = self.options;
        let parent = self.parent_config();
        let child = LaunchConfig::new(points.div_ceil(CHILD_THREADS), CHILD_THREADS);
        let reduce = LaunchConfig::new(cells, REDUCE_THREADS);
        let mut host_launched = 0u64;
        self.start.record(&self.stream)?;
        for _ in 0..iters {
            if cdp {
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
                        host_launched += 1;
                    }
                }
                dp_reduce().launch(&self.stream, reduce, (self.out.ptr(), points, self.cell_sums.ptr()))?;
            }
        }
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        self.stream.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        let refused = self.slot.take()?.err().map(|err| err.to_string());
        let launched = if cdp { u64::from(self.launched.to_vec()?[0]) } else { host_launched };
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
    launched_per_pass: f64,
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
        self.launched_per_pass = pass.launched as f64 / f64::from(iters);
    }
}

/// What the device graph launch part found.
struct DeviceLaunchOutcome {
    book_way: Result<String, String>,
    verified: Result<String, String>,
    launch_us: Samples,
}

/// The post-processing graph launched from the device: first the book's way (must launch
/// nothing), then correctly, `launches` times. Reads the flags and cell sums a pass left.
fn device_graph_launch(
    bench: &Bench,
    want: &model::Expected,
    launches: usize,
) -> Result<DeviceLaunchOutcome, CudaError> {
    let cells = bench.options.cells;
    let stream = &bench.stream;
    let total = DeviceBuffer::<u64>::zeroed(1)?;
    let share = DeviceBuffer::<u32>::zeroed(cells as usize)?;
    let post_runs = DeviceBuffer::<u32>::zeroed(1)?;
    let dispatched = DeviceBuffer::<u32>::zeroed(1)?;

    // total -> share: kernel nodes only, so device-launchable; instantiated with the
    // device-launch flag and uploaded before any kernel may launch it.
    let graph = Graph::new()?;
    let first = graph.add_kernel(
        dp_post_total(),
        LaunchConfig::new(1, REDUCE_THREADS),
        (bench.cell_sums.ptr(), cells, total.ptr()),
        &[],
    )?;
    graph.add_kernel(
        dp_post_share(),
        LaunchConfig::for_elements(cells, 256),
        (bench.cell_sums.ptr(), cells, total.ptr(), share.ptr(), post_runs.ptr()),
        &[&first],
    )?;
    let post = instantiate_for_device(&graph).map_err(cuda)?.upload(stream).map_err(cuda)?;
    let untouched = || -> Result<bool, CudaError> {
        Ok(total.to_vec()?[0] == 0
            && post_runs.to_vec()?[0] == 0
            && dispatched.to_vec()?[0] == 0
            && share.to_vec()?.iter().all(|&s| s == 0))
    };

    // The book's way: the launcher launched on a plain stream.
    let book_slot = ErrorSlot::new()?;
    let args = (post.handle().arg(), bench.flags.ptr(), cells, dispatched.ptr(), book_slot.ptr());
    let attempt = device_launch::run_on_plain_stream(dp_dispatch(), LaunchConfig::new(1, 1), args, stream);
    Device::current()?.synchronize()?;
    let refusal = match attempt {
        Err(err @ device_launch::Error::LauncherNotInGraph { .. }) => Ok(format!("refused at launch: {err}")),
        Ok(()) => match book_slot.check()? {
            Err(err) if err.code == 801 => {
                Ok(format!("the launcher ran; its graph launch was refused: {err}"))
            }
            Err(err) => Err(format!("the launcher ran; its graph launch failed unexpectedly: {err}")),
            Ok(()) => Err("the launcher ran on a plain stream and its graph launch was accepted".to_string()),
        },
        Err(err) => Err(format!("unexpected error: {err}")),
    };
    let book_way = match (refusal, untouched()?) {
        (Ok(how), true) => Ok(format!("{how}; nothing was written")),
        (Ok(how), false) => Err(format!("{how}; but the post-processing outputs changed")),
        (Err(why), _) => Err(why),
    };

    // Done right: the launcher inside a graph (device_launch::Launcher), errors in a slot.
    let slot = ErrorSlot::new()?;
    let launcher = Launcher::new(
        dp_dispatch(),
        LaunchConfig::new(1, 1),
        (post.handle().arg(), bench.flags.ptr(), cells, dispatched.ptr(), slot.ptr()),
    )
    .map_err(cuda)?;
    let (start, end) = (Event::new()?, Event::new()?);
    let mut launch_us = Samples::default();
    for _ in 0..launches {
        start.record(stream)?;
        launcher.launch(stream).map_err(cuda)?;
        end.record(stream)?;
        // Fire-and-forget work belongs to the launcher's graph: the stream waits for it.
        stream.synchronize()?;
        launch_us.push(f64::from(Event::elapsed_ms(&start, &end)?) * 1e3);
    }
    let expected_runs = if want.refined > 0 { launches as u32 } else { 0 };
    let got = (total.to_vec()?[0], share.to_vec()?, post_runs.to_vec()?[0], dispatched.to_vec()?[0]);
    let verified = match slot.check()? {
        Err(err) => Err(format!("device-side launch failed: {err}")),
        Ok(()) if got.0 != want.total => Err(format!("total = {}, want {}", got.0, want.total)),
        Ok(()) if got.1 != want.share => {
            let c = got.1.iter().zip(&want.share).position(|(a, b)| a != b).unwrap_or(0);
            Err(format!("share[{c}] = {:?}, want {:?}", got.1.get(c), want.share.get(c)))
        }
        Ok(()) if got.2 != expected_runs || got.3 != expected_runs => {
            Err(format!("post graph ran {} times, {} launches accepted; want {expected_runs}", got.2, got.3))
        }
        Ok(()) => Ok(format!(
            "{launches} launches from the device: total {} and all {cells} shares equal the CPU model, \
             written by nothing but the device-launched graph (run counter {})",
            got.0, got.2
        )),
    };
    Ok(DeviceLaunchOutcome { book_way, verified, launch_us })
}

/// Runs both ways and the device graph launch on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, CudaError> {
    options.validate()?;
    let device = Device::get(0)?;
    device.set_current()?;
    let properties = device.properties()?;
    // Every child of a pass (and the tail launch) may be pending at once.
    let limits = LaunchLimits::of(device).map_err(cuda)?;
    if limits.pending_launch_count <= options.cells {
        LaunchLimits { pending_launch_count: options.cells + 1 }.apply(device).map_err(cuda)?;
    }

    let mut rng = Rng::new(options.seed);
    let field = model::field(&mut rng, options.cells, options.points, options.front_percent);
    let want = model::reference(&field, options.cells, options.points, options.refine, options.threshold);

    let mut bench = Bench::new(&field, options)?;
    let (mut host, mut cdp) = (Way::default(), Way::default());
    for run in 0..=options.runs {
        let pass = bench.run(false)?;
        host.record(run, pass, &want, options.iters);
        // CDP last: the device graph launch below post-processes what it left.
        let pass = bench.run(true)?;
        cdp.record(run, pass, &want, options.iters);
    }
    let launched = device_graph_launch(&bench, &want, options.runs + 1)?;

    let mut report = Report::new("dynamic_parallelism");
    let per_pass = |way: &Way| way.ms.median() * 1e3 / f64::from(options.iters);
    let (host_us, cdp_us) = (per_pass(&host), per_pass(&cdp));
    report.figure("cdp_us_per_pass", cdp_us, "us");
    report.figure("host_us_per_pass", host_us, "us");
    report.figure("cdp_over_host", host_us / cdp_us, "x");
    report.figure("refined_cells", f64::from(want.refined), "cells");
    report.figure("cdp_children_per_pass", cdp.launched_per_pass, "launches");
    report.figure("host_children_per_pass", host.launched_per_pass, "launches");
    report.figure("device_launch_us", launched.launch_us.median(), "us");
    report.figure("device_launch_verified", f64::from(u8::from(launched.verified.is_ok())), "");
    report.figure("cells", f64::from(options.cells), "cells");
    report.figure("total_points", f64::from(options.points * options.cells), "points");

    let passes = (options.runs + 1) as u64 * u64::from(options.iters);
    let ok_detail = format!(
        "{passes} passes: {} of {} cells refined, flags, all {} outputs and every cell sum bit for bit, \
         {} children per pass",
        want.refined,
        options.cells,
        options.cells * options.points,
        want.refined
    );
    let detail = |mismatch: &Option<String>| mismatch.clone().unwrap_or_else(|| ok_detail.clone());
    report.check(
        "CDP pass equals the CPU model (children counted)",
        cdp.mismatch.is_none(),
        detail(&cdp.mismatch),
    );
    report.check(
        "host-driven pass equals the CPU model (children counted)",
        host.mismatch.is_none(),
        detail(&host.mismatch),
    );
    report.check(
        "no device-side launch refused (children and tail-launched reduction)",
        cdp.refused.is_none(),
        cdp.refused.clone().unwrap_or_else(|| "every DL_LAUNCH_KERNEL accepted".into()),
    );
    let text = |r: &Result<String, String>| match r {
        Ok(s) | Err(s) => s.clone(),
    };
    report.check(
        "the book's way (launcher on a plain stream) launches nothing",
        launched.book_way.is_ok(),
        text(&launched.book_way),
    );
    report.check(
        "device graph launch ran, proven by its effect on the data",
        launched.verified.is_ok(),
        text(&launched.verified),
    );

    report.note(format!("{} ({} SMs)", properties.name, properties.multiprocessors));
    report.note(format!(
        "per pass: CDP = one parent launch (children and the tail-launched reduction launched on the device); \
         host-driven = inspect + flag copy + wait + {} child launches + reduction; {} cells x {} points, \
         {} sub-samples per refined point",
        want.refined, options.cells, options.points, options.refine
    ));
    let range = |s: &Samples| {
        let (min, max) = s.range();
        json!({"median": s.median(), "min": min, "max": max, "runs": s.0})
    };
    report.data("ms_per_run", json!({"host": range(&host.ms), "cdp": range(&cdp.ms)}));
    report.data("device_launch_us", range(&launched.launch_us));
    report.data("checksum", json!({"total": want.total, "refined": want.refined}));
    Ok(report)
}

/// The one-line summary for the chapter table, e.g.
/// `CDP 6.20x over host-driven (48.0 vs 297.6 µs/pass), 123 children/pass, device graph launch verified`.
///
/// ```
/// let mut report = chapter_common::Report::new("dynamic_parallelism");
/// report.figure("cdp_us_per_pass", 48.0, "us");
/// report.figure("host_us_per_pass", 297.6, "us");
/// report.figure("cdp_over_host", 6.2, "x");
/// report.figure("cdp_children_per_pass", 123.0, "launches");
/// report.figure("device_launch_verified", 1.0, "");
/// assert_eq!(
///     dynamic_parallelism::headline(&report),
///     "CDP 6.20x over host-driven (48.0 vs 297.6 µs/pass), 123 children/pass, device graph launch verified"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    let figure = |name| report.figure_value(name).unwrap_or(f64::NAN);
    format!(
        "CDP {:.2}x over host-driven ({:.1} vs {:.1} µs/pass), {:.0} children/pass, device graph launch {}",
        figure("cdp_over_host"),
        figure("cdp_us_per_pass"),
        figure("host_us_per_pass"),
        figure("cdp_children_per_pass"),
        if figure("device_launch_verified") == 1.0 { "verified" } else { "NOT verified" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid() {
        assert!(Options::default().validate().is_ok());
        assert!(Options::quick().validate().is_ok());
        assert!(Options::quick().iters < Options::default().iters);
    }

    #[test]
    fn bad_options_are_refused_with_a_reason() {
        let cases = [
            Options { cells: 0, ..Options::quick() },
            Options { cells: MAX_CELLS + 1, ..Options::quick() },
            Options { points: 1, ..Options::quick() },
            Options { refine: 0, ..Options::quick() },
            Options { front_percent: 101, ..Options::quick() },
            Options { iters: 0, ..Options::quick() },
            Options { runs: 0, ..Options::quick() },
        ];
        for options in cases {
            let err = options.validate().unwrap_err();
            assert!(matches!(err, CudaError::InvalidArgument { .. }), "{err}");
        }
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
    fn a_pass_is_compared_field_by_field() {
        let v = [5, 5, 5, 5, 0, 50, 50, 50];
        let want = model::reference(&v, 2, 4, 2, 20);
        let good = Pass {
            ms: 1.0,
            flags: want.flags.clone(),
            out: want.out.clone(),
            cell_sums: want.cell_sums.clone(),
            launched: 3,
            ran: 3,
            refused: None,
        };
        assert_eq!(good.difference(&want, 3), None);
        let missing_child = Pass { ran: 2, ..good };
        assert!(missing_child.difference(&want, 3).unwrap().contains("2 ran"));
    }
}
